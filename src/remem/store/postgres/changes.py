"""Change signals across hosts: ``LISTEN``/``NOTIFY`` as a wake-up only.

A writer's commit sends ``NOTIFY remem_changes`` with the agent and the new last position
(never content; delivered only if the transaction commits). Each backend that has a
watcher runs one :class:`Listener`: a thread on a connection of its own that ``LISTEN``\\ s
and sets the watchers' ``threading.Event`` of that agent; the subscriber then reads what
is new from the log, as it always does. A notification is only a hint: one lost while
the listener reconnects costs nothing, since every watcher is woken after a reconnect
and reads from its position (a host that reconnects catches up).
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

import orjson

from remem.store.location import redact
from remem.store.postgres.connect import psycopg_modules

CHANNEL = "remem_changes"
log = logging.getLogger("remem.store")


def notify(conn: Any, agent: str, seq: int) -> None:
    """Queue the wake-up for ``agent`` at ``seq`` in ``conn``'s transaction (sent at commit)."""
    payload = orjson.dumps({"agent": agent, "seq": seq}).decode()
    conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))


class Listener:
    """One thread ``LISTEN``\\ ing on :data:`CHANNEL`, waking watchers by agent."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._watchers: dict[str, weakref.WeakSet[threading.Event]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, agent: str, wake: threading.Event) -> None:
        """Set ``wake`` when another host (or this one) commits to ``agent`` (held weakly)."""
        with self._lock:
            self._watchers.setdefault(agent, weakref.WeakSet()).add(wake)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="remem-pg-listen", daemon=True
                )
                self._thread.start()

    def _wake(self, agent: str | None) -> None:
        with self._lock:
            sets = (
                list(self._watchers.values())
                if agent is None
                else [self._watchers.get(agent, weakref.WeakSet())]
            )
            events = [wake for s in sets for wake in list(s)]
        for wake in events:
            wake.set()

    def _run(self) -> None:
        psycopg, _ = psycopg_modules()
        delay = 0.1
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self._wake(None)  # reconnected: whatever was missed is read now
                    delay = 0.1
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5, stop_after=64):
                            self._on(note.payload)
            except psycopg.Error as exc:
                log.warning("change signals: %s; reconnecting in %.1fs", redact(str(exc)), delay)
                self._stop.wait(delay)
                delay = min(delay * 2, 5.0)

    def _on(self, payload: str) -> None:
        try:
            agent = orjson.loads(payload)["agent"]
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(agent, str):
            self._wake(agent)

    def close(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(5)

"""Group commit: concurrent writes to one agent share one write + fsync.

A writer joins the agent's :class:`WriteQueue`. When no one is writing it leads at
once (the single-writer path: one short lock, no waiting). Otherwise it waits; the
writer leading the current group, once done, hands the lead to the first waiter,
which takes every writer queued by then as its group. The leader runs the group's
builds one after another under the agent's writer lock, each against the state
that includes the batches built before it, stages their events and makes them all
durable with one commit; only then is any writer of the group answered (durable
before acknowledged). A failed commit fails every writer of the group with that
error (see ``AgentLog.write`` in :mod:`remem.app.agent_state`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from remem.core.events import Event
from remem.core.projection import State

#: What one writer asks: events built from fresh state, and its result.
Build = Callable[[State], tuple[list[Event], Any]]


class Writer:
    """One write waiting in (or leading) a group: its build, then its outcome."""

    __slots__ = ("appended", "build", "error", "lead", "positions", "result", "woken")

    def __init__(self, build: Build) -> None:
        self.build = build
        self.result: Any = None
        self.error: BaseException | None = None
        #: The events this write appended (after the group's commit).
        self.appended: list[Event] = []
        #: Where they are (or will be, once committed) in the log.
        self.positions: list[int] = []
        #: Set when it has its outcome or the lead (None while it leads from the start).
        self.woken: threading.Event | None = None
        self.lead = False

    def outcome(self) -> Any:
        """The build's result, or raise the error of the build or of the commit."""
        if self.error is not None:
            raise self.error
        return self.result


class WriteQueue:
    """The writers of one agent waiting for the writer lock (leader and followers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[Writer] = []
        self._busy = False

    def join(self, writer: Writer) -> list[Writer]:
        """Queue ``writer`` and return the group it leads, once it leads one (at once
        when no one writes); ``[]`` when another group answered it meanwhile."""
        with self._lock:
            if not self._busy:
                self._busy = True
                return [writer]
            woken = writer.woken = threading.Event()
            self._waiting.append(writer)
        woken.wait()
        if not writer.lead:
            return []
        with self._lock:
            group, self._waiting = self._waiting, []
        return group

    def hand_over(self, group: list[Writer]) -> None:
        """Answer the writers of ``group`` (their outcomes are set) and pass the lead to
        the first waiter, if any."""
        for writer in group:
            if writer.woken is not None:
                writer.woken.set()
        with self._lock:
            if not self._waiting:
                self._busy = False
                return
            first = self._waiting[0]
        first.lead = True
        assert first.woken is not None
        first.woken.set()

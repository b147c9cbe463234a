"""One agent's live state: its event log, the projection folded from it, and the write path.

Every read first catches up with what other processes appended; every write
runs under the log's exclusive lock: catch up, validate against the fresh
state, append durably, then apply to RAM.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from remem.core.events import Event
from remem.core.projection import State
from remem.recall.embeddings import make_vector_index
from remem.recall.index import LexicalIndex
from remem.store.base import Backend, EventLog, TraceLog

R = TypeVar("R")
#: After a scan that folded at least this many events, freeze the survivors out of the
#: cyclic collector: they are long-lived, and full collections over millions of them
#: would pause recall for seconds.
FREEZE_AFTER = 100_000


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a log is scanned (it only allocates)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class AgentLog:
    """Projection + log of one agent; thread-safe within a process."""

    def __init__(self, backend: Backend, agent: str) -> None:
        self.agent = agent
        self.log: EventLog = backend.event_log(agent)
        self.traces: TraceLog = backend.trace_log(agent)
        self.lock = threading.RLock()
        #: Prepared recall candidates by run shape (see remem.recall.engine.prepare).
        self.recall_cache: dict[Any, Any] = {}
        self._seen: list[Event] = []
        self._scanned = 0
        self.state = self._new_state()
        self._listeners: list[Callable[[State, Sequence[Event], bool], None]] = []
        self.lexical = LexicalIndex()
        self.on_change(self._update_lexical)
        # Note vectors (hybrid recall) when an embedder is available; else recall is lexical.
        self.vectors = make_vector_index(backend, agent)
        if self.vectors is not None:
            self.lexical.vectors = self.vectors
            self.on_change(self._update_vectors)

    def _update_lexical(self, state: State, events: Sequence[Event], reset: bool) -> None:
        if reset:
            self.lexical.reset()
        else:
            self.lexical.update(state, events)

    def _update_vectors(self, state: State, events: Sequence[Event], reset: bool) -> None:
        assert self.vectors is not None
        if reset:
            self.vectors.reset(state, events)
        else:
            self.vectors.update(state, events)

    def on_change(self, listener: Callable[[State, Sequence[Event], bool], None]) -> None:
        """Call ``listener(state, events, reset)`` after events are applied (index upkeep)."""
        self._listeners.append(listener)

    def _new_state(self) -> State:
        state = State(self.agent, loader=self.log.read_at)
        state.on_load = self._on_load
        return state

    def _notify(self, events: Sequence[Event], reset: bool) -> None:
        if events or reset:
            for listener in self._listeners:
                listener(self.state, events, reset)

    def _on_load(self, events: list[Event]) -> None:
        """A scope was folded lazily: its events reach the indexes like any others."""
        self._notify(events, False)

    def _visit(self, data: dict[str, Any], pos: int) -> None:
        self._scanned += 1
        folded = self.state.observe(data, pos)
        if folded:
            self._seen.extend(folded)

    def _reset(self) -> None:
        self.state = self._new_state()
        self._seen = []
        self.recall_cache.clear()

    def _catch_up(self, reset: bool) -> None:
        seen, self._seen = self._seen, []
        self._notify(seen, reset)
        if self._scanned >= FREEZE_AFTER:
            gc.freeze()
        self._scanned = 0

    def sync(self) -> State:
        """Catch up with the log and return the current state."""
        with self.lock, gc_paused():
            reset = self.log.scan_new(self._visit, self._reset)
            self._catch_up(reset)
            return self.state

    def write(self, build: Callable[[State], tuple[list[Event], R]]) -> R:
        """Under the writer lock: catch up, ``build`` events from fresh state, append, apply.

        ``build`` may raise to abort (nothing is written). It returns the events
        to append and a result computed from them.
        """
        with self.lock, self.log.transaction(self._visit, self._reset) as txn:
            self._catch_up(txn.caught_up.reset)
            events, result = build(self.state)
            appended = txn.append(events) if events else []
            for event, pos in zip(appended, txn.positions, strict=True):
                self.state.record(event, pos)
            self._notify(appended, False)
            return result

    def rewrite(self, build: Callable[[State, list[Event]], list[Event]]) -> list[Event]:
        """Under the writer lock, replace the log with ``build(state, all_events)`` and refold."""
        with self.lock, self.log.transaction(self._visit, self._reset) as txn:
            self._catch_up(txn.caught_up.reset)
            events = build(self.state, txn.all_events())
            txn.rewrite(events)
            self._reset()
            for event, pos in zip(events, txn.positions, strict=True):
                self.state.record(event, pos)
            self._notify(events, True)
            return events

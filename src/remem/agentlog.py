"""One agent's live state: its event log, the projection folded from it, and the write path.

Every read first catches up with what other processes appended; every write
runs under the log's exclusive lock: catch up, validate against the fresh
state, append durably, then apply to RAM.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from remem.core.events import Event
from remem.core.projection import State
from remem.recall.index import LexicalIndex
from remem.store.base import Backend, EventLog, TraceLog

R = TypeVar("R")


class AgentLog:
    """Projection + log of one agent; thread-safe within a process."""

    def __init__(self, backend: Backend, agent: str) -> None:
        self.agent = agent
        self.log: EventLog = backend.event_log(agent)
        self.traces: TraceLog = backend.trace_log(agent)
        self.state = State(agent)
        self.lock = threading.RLock()
        self._listeners: list[Callable[[State, Sequence[Event], bool], None]] = []
        self.lexical = LexicalIndex()
        self.on_change(self._update_lexical)

    def _update_lexical(self, state: State, events: Sequence[Event], reset: bool) -> None:
        if reset:
            self.lexical.reset()
        else:
            self.lexical.update(state, events)

    def on_change(self, listener: Callable[[State, Sequence[Event], bool], None]) -> None:
        """Call ``listener(state, events, reset)`` after events are applied (index upkeep)."""
        self._listeners.append(listener)

    def _apply(self, events: Sequence[Event], reset: bool) -> None:
        if reset:
            self.state = State(self.agent)
        for ev in events:
            self.state.apply(ev)
        if events or reset:
            for listener in self._listeners:
                listener(self.state, events, reset)

    def sync(self) -> State:
        """Catch up with the log and return the current state."""
        with self.lock:
            batch = self.log.read_new()
            if batch.events or batch.reset:
                self._apply(batch.events, batch.reset)
            return self.state

    def write(self, build: Callable[[State], tuple[list[Event], R]]) -> R:
        """Under the writer lock: catch up, ``build`` events from fresh state, append, apply.

        ``build`` may raise to abort (nothing is written). It returns the events
        to append and a result computed from them.
        """
        with self.lock, self.log.transaction() as txn:
            if txn.caught_up.events or txn.caught_up.reset:
                self._apply(txn.caught_up.events, txn.caught_up.reset)
            events, result = build(self.state)
            appended = txn.append(events) if events else []
            self._apply(appended, False)
            return result

    def rewrite(self, build: Callable[[State, list[Event]], list[Event]]) -> list[Event]:
        """Under the writer lock, replace the log with ``build(state, all_events)`` and refold."""
        with self.lock, self.log.transaction() as txn:
            if txn.caught_up.events or txn.caught_up.reset:
                self._apply(txn.caught_up.events, txn.caught_up.reset)
            events = build(self.state, txn.all_events())
            txn.rewrite(events)
            self._apply(events, True)
            return events

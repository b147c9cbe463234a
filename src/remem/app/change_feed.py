"""The recent changes of one agent's log, as this process read or wrote them.

An :class:`~remem.app.agent_state.AgentLog` keeps a :class:`ChangeFeed` once someone
subscribes (:meth:`remem.Memory.subscribe`): every event it folds (its own writes, and
what other processes appended, read when it catches up) adds one :class:`Entry`:
its seq, op and what it is about, never text. A subscription reads the entries after
its position; one further back than the feed holds is read from the log instead
(:meth:`~remem.store.base.EventStore.read_after`).
"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Iterable
from typing import Any, NamedTuple

from remem.core.events import ChannelKindSet, ChannelPolicySet, Event, PreferencesSet, Remembered

#: Entries kept (older ones are read from the log by a subscriber that far behind).
FEED_MAX = 10_000
_REVIEW_STATUSES = frozenset({"pending", "unverified"})


class Entry(NamedTuple):
    """One event of the log, as a change: no text."""

    seq: int
    op: str
    #: The note's id; for channel policy the channel, for preferences the participant.
    subject: str | None
    #: Whether it changes the review queue (a note enters or leaves it).
    review: bool


def entry_of_record(data: dict[str, Any]) -> Entry:
    """The entry of a raw log record (as the log's readers visit them)."""
    op = data["op"]
    if op == "remember":
        return Entry(data["seq"], op, data["id"], data.get("status") in _REVIEW_STATUSES)
    subject = data.get("note_id") or data.get("target") or data.get("user")
    return Entry(data["seq"], op, subject, op in ("approve", "reject"))


def entry_of_event(ev: Event) -> Entry:
    """The entry of an event."""
    if isinstance(ev, Remembered):
        return Entry(ev.seq, ev.op, ev.note_id, ev.status.value in _REVIEW_STATUSES)
    if isinstance(ev, ChannelPolicySet | ChannelKindSet):
        return Entry(ev.seq, ev.op, ev.target, False)
    if isinstance(ev, PreferencesSet):
        return Entry(ev.seq, ev.op, ev.user, False)
    note_id = getattr(ev, "note_id", None)
    return Entry(ev.seq, ev.op, note_id, ev.op in ("approve", "reject"))


class ChangeFeed:
    """Entries above :attr:`floor`, in seq order; wakes waiting subscribers on news.

    Used under the agent's lock (every fold and write holds it)."""

    def __init__(self, floor: int) -> None:
        #: Every event above this seq that this process folded is in :attr:`entries`.
        self.floor = floor
        self.last = floor
        self.entries: deque[Entry] = deque()
        self._waiting: weakref.WeakSet[threading.Event] = weakref.WeakSet()

    def watch(self, wake: threading.Event) -> None:
        """Set ``wake`` whenever entries arrive (held weakly: a dropped one goes)."""
        self._waiting.add(wake)

    def take_record(self, data: dict[str, Any]) -> None:
        if data["seq"] > self.last:
            self._add(entry_of_record(data))

    def take(self, events: Iterable[Event]) -> None:
        for ev in events:
            if ev.seq > self.last:
                self._add(entry_of_event(ev))
        for wake in list(self._waiting):
            wake.set()

    def woken(self) -> None:
        """Wake the waiting subscribers (after records were taken)."""
        for wake in list(self._waiting):
            wake.set()

    def _add(self, entry: Entry) -> None:
        self.entries.append(entry)
        self.last = entry.seq
        if len(self.entries) > FEED_MAX:
            self.floor = self.entries.popleft().seq

    def after(self, seq: int) -> list[Entry] | None:
        """The entries above ``seq``; ``None`` when the feed does not reach back that far."""
        if seq < self.floor:
            return None
        if seq >= self.last:
            return []
        out = []
        for entry in reversed(self.entries):
            if entry.seq <= seq:
                break
            out.append(entry)
        out.reverse()
        return out

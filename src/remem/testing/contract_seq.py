"""The event positions part of the event-store contract: every event's ``seq``.

Mix :class:`SeqContract` into a subclass of
:class:`~remem.testing.contract.EventLogContract` (it uses that class's ``handle``
and ``append``)::

    class TestMyLog(EventLogContract, SeqContract):
        def make_log(self, tmp_path): ...

The contract: an append numbers the events it stores ``last + 1``, ``last + 2``...
(``last``: the highest seq the log ever held, whichever handle wrote it); a
retried event takes no number; every read (``read_new``, ``caught_up``,
``history``, ``read_at``, ``all_events``, a visit's ``data["seq"]``) returns events
with their seq; a rewrite keeps the seq of every event it keeps, numbers new ones
after ``last`` and never gives a number twice (holes are allowed); an append that
asserts ``expect_seq`` other than ``last`` raises ``Conflict`` and stores nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from remem.core.events import Event
from remem.errors import Conflict
from remem.store.base import EventLog
from remem.testing.contract import remembered

__all__ = ["SeqContract"]


class SeqContract:
    """Test cases about ``seq``; see the module docstring."""

    def handle(self, tmp_path: Path) -> EventLog:  # pragma: no cover - the contract's
        raise NotImplementedError

    def append(self, log: EventLog, events: Sequence[Event]) -> list[Event]:  # pragma: no cover
        raise NotImplementedError

    def test_appends_are_numbered_in_order_across_handles(self, tmp_path: Path) -> None:
        one, two = self.handle(tmp_path), self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        assert [ev.seq for ev in self.append(one, [a, b])] == [1, 2]
        assert [ev.seq for ev in self.append(two, [c, a])] == [3]  # a retry takes no number
        read = self.handle(tmp_path).read_new().events
        assert [(ev, ev.seq) for ev in read] == [(a, 1), (b, 2), (c, 3)]
        assert [ev.seq for ev in one.read_new().events] == [3]
        assert [ev.seq for ev in one.history(b.note_id)] == [2]

    def test_read_after_a_seq_and_last_seq(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        _, b, c = self.append(log, [remembered("A."), remembered("B."), remembered("C.")])
        other = self.handle(tmp_path)
        assert other.read_after(1) == [b, c] and other.read_after(3) == []
        assert [ev.seq for ev in other.read_after(0)] == [1, 2, 3]
        assert log.last_seq == 3
        other.read_new()
        assert other.last_seq == 3

    def test_positions_and_visits_carry_the_seq(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        with log.transaction() as txn:
            txn.append([remembered("A."), remembered("B.")])
            positions = txn.positions
        assert [ev.seq for ev in log.read_at(positions)] == [1, 2]
        seen: list[Any] = []
        self.handle(tmp_path).scan_new(lambda data, pos: seen.append(data["seq"]), _nothing)
        assert seen == [1, 2]

    def test_a_stale_expected_seq_is_a_conflict_and_writes_nothing(self, tmp_path: Path) -> None:
        one, two = self.handle(tmp_path), self.handle(tmp_path)
        self.append(one, [remembered("A.")])
        with two.transaction() as txn:
            assert txn.append([remembered("B.")], expect_seq=1)[0].seq == 2
        late = remembered("C.")
        with one.transaction() as txn:  # caught up: one now knows seq 2
            try:
                txn.append([late], expect_seq=1)
            except Conflict:
                pass
            else:
                raise AssertionError("a stale expect_seq must raise Conflict")
        assert late not in self.handle(tmp_path).read_new().events
        with one.transaction() as txn:
            assert txn.append([late], expect_seq=2)[0].seq == 3

    def test_a_rewrite_keeps_numbers_and_never_reuses_one(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        a, _, _ = self.append(log, [remembered("A."), remembered("B."), remembered("C.")])
        marker = remembered("New in the rewrite.")
        with log.transaction() as txn:
            written = txn.rewrite([a, marker])  # b and c (seq 2, 3) dropped
            assert [ev.seq for ev in txn.all_events()] == [1, 4]
        assert [ev.seq for ev in written] == [1, 4]
        assert [ev.seq for ev in self.handle(tmp_path).read_new().events] == [1, 4]
        assert [ev.seq for ev in self.append(log, [remembered("D.")])] == [5]


def _nothing() -> None:
    pass

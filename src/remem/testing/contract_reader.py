"""The lazy-reader part of the event-log contract: visits, positions, ``read_at``, marks.

:class:`~remem.testing.contract.EventLogContract` includes it, so every backend runs it;
it uses that class's ``handle`` and ``append``. The embedded store folds its log lazily
through these members; a backend whose positions are its ``seq`` implements them simply.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from remem.core.events import Event, from_dict
from remem.core.ids import new_id
from remem.store.base import Batch, EventLog
from remem.testing.event_samples import every_event_type, remembered

__all__ = ["ReaderContract"]


class ReaderContract:
    """Test cases of the lazy reader; see the module docstring."""

    def handle(self, tmp_path: Path) -> EventLog:  # pragma: no cover - the contract's
        raise NotImplementedError

    def append(self, log: EventLog, events: Sequence[Event]) -> list[Event]:  # pragma: no cover
        raise NotImplementedError

    def read_all(self, tmp_path: Path) -> list[Event]:  # pragma: no cover - the contract's
        raise NotImplementedError

    # -- the lazy path: visits, positions, read_at --------------------------------------

    def scan(self, log: EventLog) -> tuple[list[tuple[Event, int]], list[str], bool]:
        """``scan_new`` once: the visited events with their positions, the calls, the result."""
        calls: list[str] = []
        seen: list[tuple[Event, int]] = []

        def visit(data: dict[str, Any], pos: int) -> None:
            calls.append("visit")
            seen.append((from_dict(data), pos))

        def on_reset() -> None:
            calls.append("reset")

        reset = log.scan_new(visit, on_reset)
        return seen, calls, reset

    def test_scan_new_visits_new_records_once(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        reader = self.handle(tmp_path)
        assert self.scan(reader) == ([], [], False)
        events = every_event_type(new_id("note"), new_id("note"))
        self.append(writer, events[:5])
        seen, calls, reset = self.scan(reader)
        assert [ev for ev, _ in seen] == events[:5] and reset is False
        assert "reset" not in calls
        self.append(writer, events[5:])
        seen2, _, _ = self.scan(reader)
        assert [ev for ev, _ in seen2] == events[5:]
        assert self.scan(reader) == ([], [], False)
        # Positions are distinct and lead back to the events, in the order asked.
        positions = [pos for _, pos in seen + seen2]
        assert len(set(positions)) == len(events)
        assert reader.read_at(positions) == events
        assert reader.read_at(positions[::-1]) == events[::-1]
        assert reader.read_at([]) == []
        # The writer's own appends count as read on the lazy path too.
        assert self.scan(writer) == ([], [], False)

    def test_scan_new_after_a_rewrite_resets_first(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        reader = self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(writer, [a, b])
        self.scan(reader)
        with writer.transaction() as txn:
            txn.rewrite([c, a])
        seen, calls, reset = self.scan(reader)
        assert reset is True
        assert calls == ["reset", "visit", "visit"]
        assert [ev for ev, _ in seen] == [c, a]
        assert reader.read_at([pos for _, pos in seen]) == [c, a]

    def test_transaction_with_a_visitor_delivers_what_others_appended(self, tmp_path: Path) -> None:
        one = self.handle(tmp_path)
        two = self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(one, [a, b])
        visited: list[Event] = []
        resets: list[bool] = []

        def visit(data: dict[str, Any], pos: int) -> None:
            visited.append(from_dict(data))

        with two.transaction(visit, lambda: resets.append(True)) as txn:
            assert visited == [a, b]
            assert txn.caught_up.events == []
            assert txn.append([a, c]) == [c]  # a is known from the visit: not stored again
            assert two.read_at(txn.positions) == [c]
        assert resets == []
        assert two.read_new() == Batch([], False)
        assert self.read_all(tmp_path) == [a, b, c]

    def test_append_positions_lead_back_to_the_events(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        first = [remembered("One."), remembered("x" * 100_000), remembered("Three.")]
        with log.transaction() as txn:
            assert txn.append(first) == first
            positions = list(txn.positions)
        assert len(positions) == 3
        assert log.read_at(positions) == first
        dup, new = first[0], remembered("Four.")
        with log.transaction() as txn:
            assert txn.append([dup, new]) == [new]
            assert len(txn.positions) == 1
            assert log.read_at(txn.positions) == [new]
        # Another handle finds the same events at the positions its visit reports.
        seen, _, _ = self.scan(self.handle(tmp_path))
        other = self.handle(tmp_path)
        assert other.read_at([pos for _, pos in seen]) == [*first, new]

    def test_rewrite_positions_and_all_events(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(self.handle(tmp_path), [a, b])
        with log.transaction() as txn:
            assert txn.all_events() == [a, b]
            txn.rewrite([b, c])
            assert log.read_at(txn.positions) == [b, c]
        with log.transaction() as txn:
            assert txn.all_events() == [b, c]

    # -- marks: resuming a handle where a snapshot of the folded state was taken ----------

    def test_no_mark_before_anything_was_read(self, tmp_path: Path) -> None:
        assert self.handle(tmp_path).mark() is None

    def test_resume_at_a_mark_reads_only_what_came_after(self, tmp_path: Path) -> None:
        first = self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(first, [a, b])
        self.scan(first)
        mark = first.mark()
        assert mark is not None
        self.append(self.handle(tmp_path), [c])
        later = self.handle(tmp_path)
        assert later.resume(mark) is True
        seen, calls, reset = self.scan(later)
        assert [ev for ev, _ in seen] == [c] and reset is False and calls == ["visit"]
        # The events before the mark still count as present: a retry is not stored twice.
        with later.transaction() as txn:
            assert txn.append([a]) == []

    def test_a_mark_of_a_replaced_log_is_refused(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        a, b = remembered("A."), remembered("B.")
        self.append(log, [a])
        self.scan(log)
        mark = log.mark()
        assert mark is not None
        with log.transaction() as txn:
            txn.rewrite([b])
        fresh = self.handle(tmp_path)
        assert fresh.resume(mark) is False
        seen, _, _ = self.scan(fresh)
        assert [ev for ev, _ in seen] == [b]

    def test_restart_reads_from_the_beginning_again(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        a, b = remembered("A."), remembered("B.")
        self.append(self.handle(tmp_path), [a, b])
        assert [ev for ev, _ in self.scan(log)[0]] == [a, b]
        log.restart()
        assert [ev for ev, _ in self.scan(log)[0]] == [a, b]

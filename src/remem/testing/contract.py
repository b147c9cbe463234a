"""The contract every :class:`~remem.store.base.EventLog` backend must pass.

Subclass :class:`EventLogContract` in a test module (name the subclass
``Test…`` so pytest collects it) and implement :meth:`EventLogContract.make_log`::

    from remem.store.jsonl import JsonlEventLog
    from remem.testing.contract import EventLogContract

    class TestJsonlEventLog(EventLogContract):
        def make_log(self, tmp_path):
            return JsonlEventLog(tmp_path / "memory.jsonl")

``make_log(tmp_path)`` opens a *new, independent handle* on the log that
``tmp_path`` names; calling it twice with the same ``tmp_path`` gives two
handles on the same log, the way two processes would each open it. A
PostgreSQL backend maps ``tmp_path`` to its own schema or agent name.

The contract, as these tests read :mod:`remem.store.base`:

- a handle's own appends count as read: :meth:`EventLog.read_new` and
  ``caught_up`` return only what *other* handles appended (or rewrote) since
  this handle last read;
- events come back equal to what was appended, in append order;
- ``eid`` is idempotent across calls, batches and handles: an event whose eid
  is in the log is never stored again, and ``append`` returns only what it stored;
- ``rewrite`` replaces the whole content; other handles see ``reset=True``
  and exactly the new content; the rewriting handle does not read it again;
- ``find(eid)`` under the writer lock is the event with that eid (staged ones
  included), the ``Erased`` event listing it once a compaction erased it, or None;
- ``history(note_id)`` returns every event that refers to the note (as its
  ``note_id`` or as the ``by`` of a supersession), in log order, including
  events other handles appended;
- the lazy path sees the same events: ``scan_new(visit, on_reset)`` and
  ``transaction(visit, on_reset)`` hand each new record to ``visit(data, pos)``
  as a plain dict that :func:`~remem.core.events.from_dict` turns back into the
  event (``on_reset`` first, when the log was replaced), and ``read_at`` returns
  the events at positions given by a visit or by ``LogTransaction.positions``;
- ``LogTransaction.all_events()`` is the whole log, in order.

The test methods take pytest's ``tmp_path`` fixture by name; this module does
not import pytest, so it ships with the package without a test dependency.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from pathlib import Path

from remem.core.events import (
    Erased,
    Event,
    Forgotten,
    Pinned,
    Refused,
    Remembered,
    Restored,
    Superseded,
)
from remem.core.ids import new_id
from remem.store.base import Batch, EventLog
from remem.testing.contract_reader import ReaderContract
from remem.testing.event_samples import every_event_type, remembered, sample_envelope

__all__ = ["EventLogContract", "every_event_type", "remembered"]


class EventLogContract(ReaderContract, abc.ABC):
    """Behaviour every event-log backend must show; see the module docstring.

    Implement :meth:`make_log`. Tests open handles with :meth:`handle` (a second
    call with the same ``tmp_path`` is a second process's handle on the same log);
    every handle is closed after the test. A subclass overriding ``setup_method``
    or ``teardown_method`` must call ``super()``.
    """

    _handles: list[EventLog]

    @abc.abstractmethod
    def make_log(self, tmp_path: Path) -> EventLog:
        """A new, independent handle on the (initially empty) log that ``tmp_path`` names."""

    # -- helpers ---------------------------------------------------------------------

    def setup_method(self, method: object) -> None:
        self._handles = []

    def teardown_method(self, method: object) -> None:
        for handle in self._handles:
            handle.close()

    def handle(self, tmp_path: Path) -> EventLog:
        """A handle that is closed after the test."""
        handle = self.make_log(tmp_path)
        self._handles.append(handle)
        return handle

    def append(self, log: EventLog, events: Sequence[Event]) -> list[Event]:
        with log.transaction() as txn:
            return txn.append(events)

    def read_all(self, tmp_path: Path) -> list[Event]:
        """Everything in the log, through a fresh handle."""
        batch = self.handle(tmp_path).read_new()
        return batch.events

    # -- empty log -------------------------------------------------------------------

    def test_empty_log_reads_empty(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        assert log.read_new() == Batch([], False)
        assert log.read_new() == Batch([], False)
        with log.transaction() as txn:
            assert txn.caught_up == Batch([], False)
        assert log.history(new_id("note")) == []
        assert log.repairs == []

    def test_empty_append_is_a_noop(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        assert self.append(log, []) == []
        assert self.read_all(tmp_path) == []

    # -- append and read -------------------------------------------------------------

    def test_append_then_read_roundtrip(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        first = [remembered("One."), remembered("Two."), remembered("Three.")]
        second = [remembered("Four.")]
        assert self.append(writer, first) == first
        assert self.append(writer, second) == second
        # A handle's own appends count as read.
        assert writer.read_new() == Batch([], False)
        reader = self.handle(tmp_path)
        batch = reader.read_new()
        assert batch.reset is False
        assert batch.events == first + second
        assert reader.read_new() == Batch([], False)

    def test_every_event_type_roundtrips(self, tmp_path: Path) -> None:
        events = every_event_type(new_id("note"), new_id("note"))
        self.append(self.handle(tmp_path), events)
        got = self.read_all(tmp_path)
        assert got == events
        assert [type(ev) for ev in got] == [type(ev) for ev in events]

    def test_large_and_unicode_text_roundtrips(self, tmp_path: Path) -> None:
        events = [
            remembered('Écrit en français; 日本語も; emoji 🙂; quote " backslash \\ tab \t.'),
            remembered("x" * 1_000_000),
            remembered('{"crc":"00000000"} looks like a checksum but is text.'),
        ]
        self.append(self.handle(tmp_path), events)
        assert self.read_all(tmp_path) == events

    def test_read_new_is_incremental(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        reader = self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(writer, [a])
        assert reader.read_new() == Batch([a], False)
        self.append(writer, [b, c])
        assert reader.read_new() == Batch([b, c], False)
        assert reader.read_new() == Batch([], False)

    # -- other handles ---------------------------------------------------------------

    def test_transaction_catches_up_with_other_handles(self, tmp_path: Path) -> None:
        one = self.handle(tmp_path)
        two = self.handle(tmp_path)
        a, b = remembered("A."), remembered("B.")
        self.append(one, [a, b])
        with two.transaction() as txn:
            assert txn.caught_up == Batch([a, b], False)
            c = remembered("C.")
            assert txn.append([c]) == [c]
        # Caught-up events are read: read_new does not return them again.
        assert two.read_new() == Batch([], False)
        with one.transaction() as txn:
            assert txn.caught_up == Batch([c], False)
        assert one.read_new() == Batch([], False)

    def test_caught_up_excludes_what_was_already_read(self, tmp_path: Path) -> None:
        one = self.handle(tmp_path)
        two = self.handle(tmp_path)
        a, b = remembered("A."), remembered("B.")
        self.append(one, [a])
        assert two.read_new().events == [a]
        self.append(one, [b])
        with two.transaction() as txn:
            assert txn.caught_up == Batch([b], False)

    def test_interleaved_writers_keep_every_event_in_order(self, tmp_path: Path) -> None:
        handles = [self.handle(tmp_path) for _ in range(3)]
        expected: list[Event] = []
        for i in range(30):
            ev = remembered(f"Note {i}.")
            self.append(handles[i % 3], [ev])
            expected.append(ev)
        assert self.read_all(tmp_path) == expected
        # Each handle caught up under its last transaction; only later appends remain.
        assert handles[0].read_new() == Batch(expected[28:], False)
        assert handles[1].read_new() == Batch(expected[29:], False)
        assert handles[2].read_new() == Batch([], False)

    def test_events_survive_closing_every_handle(self, tmp_path: Path) -> None:
        log = self.make_log(tmp_path)
        events = [remembered("Kept.")]
        self.append(log, events)
        log.close()
        assert self.read_all(tmp_path) == events

    # -- idempotency -----------------------------------------------------------------

    def test_same_eid_twice_in_one_batch_is_stored_once(self, tmp_path: Path) -> None:
        ev = remembered("Once.")
        assert self.append(self.handle(tmp_path), [ev, ev]) == [ev]
        assert self.read_all(tmp_path) == [ev]

    def test_retried_append_is_stored_once(self, tmp_path: Path) -> None:
        log = self.handle(tmp_path)
        ev, other = remembered("Once."), remembered("Other.")
        assert self.append(log, [ev]) == [ev]
        assert self.append(log, [ev]) == []
        assert self.append(log, [ev, other]) == [other]
        assert self.read_all(tmp_path) == [ev, other]

    def test_retry_from_another_handle_is_stored_once(self, tmp_path: Path) -> None:
        ev = remembered("Once.")
        self.append(self.handle(tmp_path), [ev])
        # A second handle that never read the log (another process, a restarted writer).
        fresh = self.handle(tmp_path)
        assert self.append(fresh, [ev]) == []
        assert self.read_all(tmp_path) == [ev]

    def test_idempotency_is_by_eid_not_content(self, tmp_path: Path) -> None:
        ev = remembered("Same eid.")
        same_eid = remembered("Different content, same eid.", eid=ev.eid)
        same_text = remembered("Same eid.")
        log = self.handle(tmp_path)
        self.append(log, [ev])
        assert self.append(self.handle(tmp_path), [same_eid]) == []
        assert self.append(log, [same_text]) == [same_text]
        assert self.read_all(tmp_path) == [ev, same_text]

    def test_find_answers_by_eid_under_the_writer_lock(self, tmp_path: Path) -> None:
        writer, other = self.handle(tmp_path), self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(writer, [a])
        with other.transaction() as txn:
            assert other.find(a.eid) == a  # another handle's append, once caught up
            assert other.find(b.eid) is None
            txn.stage([b])
            assert other.find(b.eid) == b  # staged in this transaction
            txn.commit()
        erased = Erased(note_id=a.note_id, eids=(a.eid,), **sample_envelope())
        with writer.transaction() as txn:
            assert writer.find(b.eid) == b
            txn.rewrite([erased, b, c])
        with other.transaction():
            assert other.find(a.eid) == erased  # erased: the event that lists it
            assert other.find(c.eid) == c
            assert other.find(new_id("ev")) is None

    # -- rewrite (compaction) --------------------------------------------------------

    def test_rewrite_replaces_content_and_resets_other_handles(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        reader = self.handle(tmp_path)
        keep, drop = remembered("Keep."), remembered("Drop.")
        self.append(writer, [keep, drop])
        assert reader.read_new().events == [keep, drop]
        erased = Erased(note_id=drop.note_id, eids=(drop.eid,), **sample_envelope())
        with writer.transaction() as txn:
            txn.rewrite([keep, erased])
        assert writer.read_new() == Batch([], False)
        assert reader.read_new() == Batch([keep, erased], True)
        assert reader.read_new() == Batch([], False)
        assert self.read_all(tmp_path) == [keep, erased]
        assert drop.text not in repr(self.read_all(tmp_path))

    def test_rewrite_is_seen_as_reset_inside_a_transaction(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        other = self.handle(tmp_path)
        a, b = remembered("A."), remembered("B.")
        self.append(writer, [a])
        assert other.read_new().events == [a]
        with writer.transaction() as txn:
            txn.rewrite([b])
        with other.transaction() as txn:
            assert txn.caught_up == Batch([b], True)

    def test_appends_after_rewrite_continue_the_new_content(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        reader = self.handle(tmp_path)
        a, b, c = remembered("A."), remembered("B."), remembered("C.")
        self.append(writer, [a, b])
        reader.read_new()
        with writer.transaction() as txn:
            txn.rewrite([b])
        # Idempotency holds against the rewritten content, from both handles.
        assert self.append(writer, [b, c]) == [c]
        assert self.append(reader, [b]) == []
        assert self.read_all(tmp_path) == [b, c]

    def test_eids_erased_by_compaction_are_not_stored_again(self, tmp_path: Path) -> None:
        # A write retried after a compaction erased it must not resurrect forgotten content.
        writer = self.handle(tmp_path)
        earlier_reader = self.handle(tmp_path)
        drop = remembered("Forgotten content.")
        self.append(writer, [drop])
        assert earlier_reader.read_new().events == [drop]
        erased = Erased(note_id=drop.note_id, eids=(drop.eid,), **sample_envelope())
        with writer.transaction() as txn:
            txn.rewrite([erased])
        assert self.append(writer, [drop]) == []
        assert self.append(earlier_reader, [drop]) == []
        assert self.append(self.handle(tmp_path), [drop]) == []
        assert self.read_all(tmp_path) == [erased]

    def test_rewrite_to_empty(self, tmp_path: Path) -> None:
        writer = self.handle(tmp_path)
        reader = self.handle(tmp_path)
        self.append(writer, [remembered("Gone.")])
        reader.read_new()
        with writer.transaction() as txn:
            txn.rewrite([])
        assert reader.read_new() == Batch([], True)
        assert self.read_all(tmp_path) == []
        d = remembered("After.")
        assert self.append(reader, [d]) == [d]
        assert self.read_all(tmp_path) == [d]

    # -- history ---------------------------------------------------------------------

    def test_history_lists_a_notes_events_in_log_order(self, tmp_path: Path) -> None:
        note_id, other_id = new_id("note"), new_id("note")
        events = every_event_type(note_id, other_id)
        # Unrelated events, including one whose *text* mentions the note id.
        noise = [remembered(f"Mentions {note_id} in its text."), remembered("Unrelated.")]
        log = self.handle(tmp_path)
        self.append(log, [noise[0], *events, noise[1]])
        refers_to_note = [
            ev
            for ev in events
            if getattr(ev, "note_id", None) == note_id or getattr(ev, "by", None) == note_id
        ]
        assert log.history(note_id) == refers_to_note
        assert isinstance(log.history(note_id)[0], Remembered)
        other = log.history(other_id)
        assert [type(ev) for ev in other] == [
            Remembered,
            Refused,
            Superseded,
            Restored,
            Forgotten,
            Erased,
        ]
        assert log.history(new_id("note")) == []

    def test_history_sees_other_handles_appends(self, tmp_path: Path) -> None:
        first = remembered("First.")
        reader = self.handle(tmp_path)
        assert reader.history(first.note_id) == []
        self.append(self.handle(tmp_path), [first])
        pin = Pinned(note_id=first.note_id, **sample_envelope())
        self.append(self.handle(tmp_path), [pin])
        assert reader.history(first.note_id) == [first, pin]

    def test_history_follows_a_rewrite(self, tmp_path: Path) -> None:
        a = remembered("A.")
        log = self.handle(tmp_path)
        self.append(log, [a, Pinned(note_id=a.note_id, **sample_envelope())])
        with log.transaction() as txn:
            txn.rewrite([a])
        assert self.handle(tmp_path).history(a.note_id) == [a]

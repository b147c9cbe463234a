"""Contract cases for change events: :meth:`remem.Memory.subscribe` (see
:mod:`remem.testing.memory_contract`)."""

from __future__ import annotations

import dataclasses
import time

from remem.app.subscription import Change, Subscription
from remem.errors import Denied, InvalidInput
from remem.testing.memory_world import DENIED, OK, MemoryFactory, World, case, raises

#: Seconds a case waits for a change (another process's writes: a poll interval or so).
WAIT = 5.0


def until(sub: Subscription, count: int) -> list[Change]:
    """Poll ``sub`` until ``count`` changes came (or :data:`WAIT` seconds passed)."""
    out: list[Change] = []
    deadline = time.monotonic() + WAIT
    while len(out) < count and time.monotonic() < deadline:
        out += sub.poll(0.5)
    return out


class ChangeCases:
    """subscribe: what a subscriber sees, how it resumes, what it never sees."""

    @case("subscribe", OK, DENIED)
    def test_subscribers_see_the_changes_they_may_read_and_resume(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            rule = w.agent_note()
            with w.mem.subscribe(w.dm()) as bob, w.mem.subscribe(w.dm(w.CAROL)) as carol:
                mine = w.user_note()  # Bob's
                theirs = w.user_note(w.CAROL)
                w.mem.forget(w.dm(), mine.id)
                seen = until(bob, 2)
                assert [(c.event, c.id, c.op) for c in seen] == [
                    ("note.changed", mine.id, "remember"),
                    ("note.changed", mine.id, "forget"),
                ]
                assert (seen[1].version, seen[1].status) == (2, "forgotten")
                assert seen[0].seq < seen[1].seq
                assert not {f.name for f in dataclasses.fields(Change)} & {"text", "note"}
                assert [c.id for c in until(carol, 1)] == [theirs.id]  # never Bob's notes
                assert bob.poll() == [] and carol.poll() == []
            # Resume from the start of the log: everything Bob may see, in log order.
            with w.mem.subscribe(w.dm(), after=0) as again:
                ids = [c.id for c in until(again, 3)]
                assert ids == [rule.id, mine.id, mine.id]
            with w.mem.subscribe(w.dm(), after=seen[0].seq) as later:
                assert [c.op for c in until(later, 1)] == ["forget"]
            raises(Denied, w.mem.subscribe, w.unpaired())
            raises(InvalidInput, w.mem.subscribe, w.dm(), after=-1)


__all__ = ["ChangeCases", "until"]

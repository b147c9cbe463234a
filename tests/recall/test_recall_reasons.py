"""Every exclusion reason code (DESIGN §4.1, §6) is produced and shows in ``Memory.explain``.

Each test builds the smallest state that should withhold a note, recalls, and
reads the stored trace back: the note is absent from ``Recall.notes`` and from
the rendered block, and ``explain(...).excluded`` names it with exactly the
expected reason. Every candidate of a run is either selected or excluded,
never both and never twice. (``over_note_limit`` and ``over_char_budget`` are
in ``test_recall_budget_rank.py``.)
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from remem import Memory, Role, RunContext, Status
from remem.core.model import Basis, Kind, Scope
from remem.recall.render import parse_block, sanitize
from remem.recall.trace import Trace

from .helpers import (
    AGENT,
    ALICE,
    DM_ALICE,
    DM_ALICE_2,
    GENERAL,
    Clock,
    admin,
    append_events,
    dm_alice,
    explain,
    group,
    inferred,
    make_active,
    needs_channel_policy,
    needs_preferences,
    owner,
    reasons,
    remembered,
    superseded,
)


def assert_partition(trace: Trace) -> None:
    """Each candidate is selected or excluded: exactly one of the two, exactly once."""
    selected = [i for i, _ in trace.selected]
    excluded = [i for i, _ in trace.excluded]
    assert len(set(selected)) == len(selected)
    assert len(set(excluded)) == len(excluded)
    assert not set(selected) & set(excluded)
    assert sorted(selected + excluded) == sorted(trace.candidates)


def recall_reasons(mem: Memory, ctx: RunContext, query: str = "") -> tuple[list[str], dict]:
    rec = mem.recall(ctx, query)
    trace = explain(mem, rec.run_id)
    assert_partition(trace)
    assert parse_block(rec.text) == [sanitize(n.text) for n in rec.notes]
    return [n.id for n in rec.notes], dict(trace.excluded)


def test_disabled(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice collects vinyl records.")
    mem.disable(dm_alice(), note.id)
    shown, why = recall_reasons(mem, dm_alice())
    assert note.id not in shown
    assert why == {note.id: "disabled"}
    mem.enable(dm_alice(), note.id)
    shown, why = recall_reasons(mem, dm_alice())
    assert shown == [note.id]
    assert why == {}


def test_expired_when_the_clock_passes_expires_at(mem: Memory, clock: Clock) -> None:
    note = mem.remember(
        dm_alice(), "Alice is travelling this week.", expires_at=clock.now + timedelta(days=1)
    )
    assert recall_reasons(mem, dm_alice()) == ([note.id], {})
    clock.advance(days=1, seconds=1)
    shown, why = recall_reasons(mem, dm_alice())
    assert shown == []
    assert why == {note.id: "expired"}


@needs_channel_policy
def test_expired_by_channel_retention(mem: Memory, clock: Clock) -> None:
    old = mem.remember(group(), "The launch was planned for March.", scope="channel")
    clock.advance(days=40)
    fresh = mem.remember(group(), "The launch moved to May.", scope="channel")
    mem.set_channel_policy(admin(), GENERAL, retention_days=30)
    shown, why = recall_reasons(mem, group())
    assert shown == [fresh.id]
    assert why == {old.id: "expired"}


def test_pending_inferred_note_under_review_policy(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice seems to enjoy long hikes.", basis="inferred")
    if note.status is not Status.PENDING:
        pytest.skip(f"review policy did not hold the inferred note back ({note.status})")
    shown, why = recall_reasons(mem, dm_alice(), "hikes")
    assert shown == []
    assert why == {note.id: "pending"}
    make_active(mem, note)
    assert recall_reasons(mem, dm_alice(), "hikes") == ([note.id], {})


def test_pending_system_write_to_agent_scope(mem: Memory, data_dir: Path) -> None:
    """``agent_writes = "review"``: a cron job's agent-wide note waits, traced ``pending``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "remem.toml").write_text('[memory]\nagent_writes = "review"\n', encoding="utf-8")
    cron = RunContext.system(AGENT, Role.CRON)
    note = mem.remember(cron, "Weekly report goes out on Mondays.", scope="agent")
    assert note.status is Status.PENDING
    shown, why = recall_reasons(mem, cron)
    assert shown == []
    assert why == {note.id: "pending"}


def test_pending_seeded_in_the_log(mem: Memory) -> None:
    """A pending note written by another process is traced ``pending`` here too."""
    event = remembered(mem, "Standups move to 9:30.", status=Status.PENDING)
    append_events(mem, [event])
    shown, why = recall_reasons(mem, RunContext.agent_only(AGENT))
    assert shown == []
    assert why == {event.note_id: "pending"}


def test_unverified_after_relearning_what_a_member_said(mem: Memory) -> None:
    """A relearned archive quarantines a member's operational claim as ``unverified``."""
    line = {
        "author": ALICE,
        "role": "member",
        "text": "From now on the weekly report should use the sales database.",
        "ts": "2026-01-05T10:00:00Z",
    }
    mem.relearn(owner(), [line])  # an owner's run: a DM run reads only its two parties
    held = mem.list(owner(), status="unverified")
    assert held, "the relearn quarantined nothing from the archive"
    shown, why = recall_reasons(mem, RunContext.agent_only(AGENT), "weekly report database")
    assert shown == []
    assert why == {n.id: "unverified" for n in held}
    make_active(mem, held[0])
    shown, _ = recall_reasons(mem, RunContext.agent_only(AGENT), "weekly report database")
    assert shown == [held[0].id]


def test_unverified(mem: Memory) -> None:
    """Quarantined notes (a relearn of what non-admins said) are traced as ``unverified``."""
    event = remembered(
        mem, "Alice said the budget doubled.", scope=Scope.USER, scope_id=ALICE, channel=DM_ALICE
    )
    quarantined = remembered(
        mem,
        "Alice said the office moves in June.",
        scope=Scope.USER,
        scope_id=ALICE,
        channel=DM_ALICE,
        status=Status.UNVERIFIED,
    )
    append_events(mem, [event, quarantined])
    shown, why = recall_reasons(mem, dm_alice())
    assert shown == [event.note_id]
    assert why == {quarantined.note_id: "unverified"}


def test_superseded(mem: Memory) -> None:
    old = mem.remember(owner(), "Reports read from the finance database.", scope="agent")
    new = mem.remember(owner(), "Reports read from the warehouse.", scope="agent")
    supersede = getattr(mem, "supersede", None)
    if supersede is not None:
        supersede(owner(), old.id, new.id)
    else:
        append_events(mem, [superseded(mem, old.id, new.id)])
    assert mem.get(owner(), old.id).status is Status.SUPERSEDED
    shown, why = recall_reasons(mem, RunContext.agent_only(AGENT), "reports database")
    assert shown == [new.id]
    assert why == {old.id: "superseded"}


class TestOverridden:
    """Two live notes on one ``subject``: one is shown, the other is ``overridden``."""

    def test_explicit_beats_inferred(self, mem: Memory, clock: Clock) -> None:
        said = mem.remember(dm_alice(), "Alice drinks coffee black.", subject="user.drink")
        clock.advance(days=3)
        guessed = inferred(mem, dm_alice(), "Alice drinks green tea.", subject="user.drink")
        assert guessed.basis is Basis.INFERRED and guessed.said_at > said.said_at
        shown, why = recall_reasons(mem, dm_alice(), "drinks")
        assert shown == [said.id]
        assert why == {guessed.id: "overridden"}

    def test_current_scope_beats_agent_default(self, mem: Memory, clock: Clock) -> None:
        mine = mem.remember(dm_alice(), "Alice wants short replies.", subject="reply.length")
        clock.advance(days=3)
        default = mem.remember(
            owner(), "Replies are long and detailed.", scope="agent", subject="reply.length"
        )
        shown, why = recall_reasons(mem, dm_alice(), "replies")
        assert shown == [mine.id]
        assert why == {default.id: "overridden"}
        channel_rule = mem.remember(
            group(),
            "This channel wants bullet-point replies.",
            scope="channel",
            subject="reply.length",
        )
        shown, why = recall_reasons(mem, group(), "replies")
        assert shown == [channel_rule.id]
        assert why == {default.id: "overridden", mine.id: "private_in_group"}
        # Where nothing more specific speaks, the agent default stands.
        shown, why = recall_reasons(mem, RunContext.agent_only(AGENT), "replies")
        assert shown == [default.id]

    def test_newer_beats_older(self, mem: Memory, clock: Clock) -> None:
        older = mem.remember(
            dm_alice(),
            "Meetings with Alice are on Tuesdays.",
            scope="channel",
            subject="meeting.day",
        )
        clock.advance(days=7)
        newer = mem.remember(dm_alice(), "Alice meets on Thursdays.", subject="meeting.day")
        shown, why = recall_reasons(mem, dm_alice(), "meetings")
        assert shown == [newer.id]
        assert why == {older.id: "overridden"}
        clock.advance(days=7)
        newest = mem.remember(
            dm_alice(),
            "Meetings with Alice are on Fridays now.",
            scope="channel",
            subject="meeting.day",
        )
        shown, why = recall_reasons(mem, dm_alice(), "meetings")
        assert shown == [newest.id]
        # In its own scope the newest statement retires the older one (subject rule); across
        # scopes nothing is retired, the older note is only overridden in this recall.
        assert why == {older.id: "superseded", newer.id: "overridden"}


@needs_channel_policy
def test_kind_not_allowed(mem: Memory) -> None:
    fact = mem.remember(group(), "The repo lives on the internal forge.", scope="channel")
    decision = mem.remember(
        group(), "The team chose weekly releases.", scope="channel", kind="decision"
    )
    mem.set_channel_policy(admin(), GENERAL, kinds=["fact", "preference"])
    shown, why = recall_reasons(mem, group())
    assert fact.id in shown
    assert why == {decision.id: "kind_not_allowed"}
    assert decision.kind is Kind.DECISION


@needs_channel_policy
def test_memory_off(mem: Memory, world: object) -> None:
    mem.set_channel_policy(admin(), DM_ALICE, memory=False)
    rec = mem.recall(dm_alice())
    assert rec.notes == []
    trace = explain(mem, rec.run_id)
    assert_partition(trace)
    assert trace.candidates
    assert set(dict(trace.excluded).values()) == {"memory_off"}
    # Other channels are untouched.
    assert mem.recall(group()).notes


@needs_channel_policy
def test_memory_off_then_on_again(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice keeps bees.")
    for enabled in (False, True, False, True, False, True):
        mem.set_channel_policy(admin(), DM_ALICE, memory=enabled)
        shown, why = recall_reasons(mem, dm_alice())
        if enabled:
            assert (shown, why) == ([note.id], {})
        else:
            assert (shown, why) == ([], {note.id: "memory_off"})


def test_cross_channel(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice is learning Portuguese.")
    other_dm = RunContext.dm(AGENT, DM_ALICE_2, ALICE)
    shown, why = recall_reasons(mem, other_dm)
    assert shown == []
    assert why == {note.id: "cross_channel"}
    # In the DM where it was said, it is recalled.
    assert recall_reasons(mem, dm_alice()) == ([note.id], {})


@needs_preferences
def test_cross_channel_allowed_by_the_persons_preference(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice is learning Portuguese.")
    other_dm = RunContext.dm(AGENT, DM_ALICE_2, ALICE)
    mem.set_my_preferences(dm_alice(), cross_channel=True)
    assert recall_reasons(mem, other_dm) == ([note.id], {})
    mem.set_my_preferences(dm_alice(), cross_channel=False)
    assert recall_reasons(mem, other_dm) == ([], {note.id: "cross_channel"})


def test_private_in_group(mem: Memory) -> None:
    personal = mem.remember(dm_alice(), "Alice is allergic to peanuts.")
    shared = mem.remember(group(), "The team lunch is on Thursday.", scope="channel")
    shown, why = recall_reasons(mem, group(ALICE))
    assert shown == [shared.id]
    assert why == {personal.id: "private_in_group"}


def test_duplicate_across_scopes(mem: Memory) -> None:
    general = mem.remember(owner(), "Use metric units.", scope="agent")
    here = mem.remember(dm_alice(), "use metric  units", scope="channel")
    shown, why = recall_reasons(mem, dm_alice())
    # The more specific copy is kept.
    assert shown == [here.id]
    assert why == {general.id: "duplicate"}


def test_pinned_copy_wins_a_duplicate(mem: Memory) -> None:
    """A pin must survive dedupe: the pinned copy is the one kept, and it ranks first.

    (Keeping the unpinned, more specific copy instead would drop the pin, and with
    a full budget the statement would not be recalled at all.)
    """
    pinned = mem.remember(owner(), "Use metric units.", scope="agent", pinned=True)
    for i in range(25):
        mem.remember(dm_alice(), f"Project note number {i} about the garden.", scope="channel")
    copy = mem.remember(dm_alice(), "Use metric units!", scope="channel")
    for query in ("", "garden project"):
        rec = mem.recall(dm_alice(), query)
        assert rec.notes[0].id == pinned.id
        assert reasons(mem, rec.run_id)[copy.id] == "duplicate"


def test_status_reason_wins_over_policy_reasons(mem: Memory) -> None:
    """One reason per note: a disabled note in a group is ``disabled``, not private."""
    note = mem.remember(dm_alice(), "Alice plays the cello.")
    mem.disable(dm_alice(), note.id)
    _, why = recall_reasons(mem, group(ALICE))
    assert why == {note.id: "disabled"}


def test_forgotten_notes_are_not_even_candidates(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice has a dog named Biscuit.")
    mem.forget(dm_alice(), note.id)
    rec = mem.recall(dm_alice(), "dog")
    trace = explain(mem, rec.run_id)
    assert note.id not in trace.candidates
    assert "Biscuit" not in rec.text

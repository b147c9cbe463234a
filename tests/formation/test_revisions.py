"""Revisions: every retirement is a row; undo restores the note and vetoes the pair."""

from __future__ import annotations

from typing import Any

import pytest

from remem import Denied, InvalidInput, Memory, Message, NotFound, Role, RunContext, Status

from .cast import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    GENERAL,
    admin,
    member,
    no_operational_from_non_admins,  # noqa: F401  (an autouse fixture: importing it applies it)
    owner,
    teach,
)

FINANCE = "The weekly report pulls from the finance_v2 table."
SALES = "The weekly report pulls from the sales_v3 table."
MAIN = "Deploys go out from the main branch."
RELEASE = "Deploys go out from the release branch."


def agent_recall(mem: Memory) -> list[str]:
    return [n.id for n in mem.recall(RunContext.agent_only(AGENT), "weekly report deploys").notes]


def test_every_retirement_is_a_revision_row(mem: Memory, clock: Any) -> None:
    # subject rule
    learn_ctx = admin()
    old = teach(mem, FINANCE, "m1", clock())
    new = teach(mem, SALES, "m2", clock.advance(days=1), learn_ctx)
    # consolidation
    a = mem.remember(member(BOB), "Prefers short status reports.", scope="user")
    b = mem.remember(member(BOB), "Prefers very short status reports.", scope="user")
    consolidate_ctx = admin()
    (merged,) = mem.consolidate(consolidate_ctx).merged
    # manual
    manual_ctx = admin()
    d1 = teach(mem, MAIN, "m3", clock())
    mem.pin(admin(), d1)
    d2 = teach(mem, RELEASE, "m4", clock.advance(days=1))
    mem.supersede(manual_ctx, d1, d2)

    rows = {(r.retired, r.replacement): r for r in mem.revisions(owner())}
    assert set(rows) == {(old, new), (a.id, merged.id), (b.id, merged.id), (d1, d2)}
    expected = {
        (old, new): ("subject_rule", learn_ctx.run_id),
        (a.id, merged.id): ("consolidation", consolidate_ctx.run_id),
        (b.id, merged.id): ("consolidation", consolidate_ctx.run_id),
        (d1, d2): ("manual", manual_ctx.run_id),
    }
    for pair, (how, run_id) in expected.items():
        row = rows[pair]
        assert (row.how, row.run_id, row.actor) == (how, run_id, ALICE)
        assert row.reason and row.id.startswith("rev_") and not row.undone
        assert mem.get(owner(), row.retired).status is Status.SUPERSEDED
    # Every retired note's history records its retirement.
    for retired, _ in rows:
        assert "supersede" in [ev.op for ev in mem.history(owner(), retired)]


def test_undo_restores_the_note_and_vetoes_the_pair(mem: Memory, clock: Any) -> None:
    old = teach(mem, FINANCE, "m1", clock())
    new = teach(mem, SALES, "m2", clock.advance(days=1))
    assert agent_recall(mem) == [new]
    (rev,) = mem.revisions(owner())
    clock.advance(minutes=1)
    undone = mem.undo(admin(), rev.id)
    assert undone.undone and undone.undone_at == clock()
    assert mem.get(owner(), old).status is Status.ACTIVE
    assert mem.get(owner(), new).status is Status.ACTIVE  # the replacement stays
    assert sorted(agent_recall(mem)) == sorted([old, new])  # neither hides the other
    assert [ev.op for ev in mem.history(owner(), old)] == ["remember", "supersede", "restore"]
    # The same replacement can never retire the same note again, not even by hand.
    with pytest.raises(InvalidInput, match="veto"):
        mem.supersede(admin(), old, new)
    assert mem.get(owner(), old).status is Status.ACTIVE
    # Undoing again is harmless.
    assert mem.undo(admin(), rev.id).undone
    assert [ev.op for ev in mem.history(owner(), old)].count("restore") == 1


def test_reteaching_the_same_statement_after_undo_does_not_retire_again(
    mem: Memory, clock: Any
) -> None:
    old = teach(mem, FINANCE, "m1", clock())
    said = clock.advance(days=1)
    new = teach(mem, SALES, "m2", said)
    (rev,) = mem.revisions(owner())
    clock.advance(hours=1)
    mem.undo(owner(), rev.id)
    # The same message learned again (a re-processed slice, a relearned archive), or the
    # same statement made after the undo: evidence for the live replacement, no retirement.
    again = mem.learn(admin(), [Message(ALICE, Role.ADMIN, SALES, "m2", said)])
    assert [r for _, r in again.dropped] == ["duplicate"]
    later = mem.learn(admin(), [Message(ALICE, Role.ADMIN, SALES, "m9", clock.advance(days=1))])
    assert [(n.id, n.evidence) for n in later.reinforced] == [(new, 3)]
    assert mem.get(owner(), old).status is Status.ACTIVE
    assert mem.get(owner(), new).status is Status.ACTIVE
    assert [r.id for r in mem.revisions(owner())] == [rev.id]


def test_undo_run_undoes_every_revision_of_a_run(mem: Memory, clock: Any) -> None:
    old_source = teach(mem, FINANCE, "m1", clock())
    old_branch = teach(mem, MAIN, "m2", clock())
    later = clock.advance(days=1)
    run = admin()
    report = mem.learn(
        run,
        [
            Message(ALICE, Role.ADMIN, SALES, "m3", later),
            Message(ALICE, Role.ADMIN, RELEASE, "m4", later),
        ],
    )
    assert len(report.learned) == 2
    revs = [r for r in mem.revisions(owner()) if r.run_id == run.run_id]
    assert {r.retired for r in revs} == {old_source, old_branch}
    undone = mem.undo_run(owner(), run.run_id)
    assert {r.id for r in undone} == {r.id for r in revs}
    assert all(r.undone for r in mem.revisions(owner()))
    replacements = [n.id for n in report.learned]
    assert sorted(agent_recall(mem)) == sorted([old_source, old_branch, *replacements])
    with pytest.raises(NotFound):
        mem.undo_run(owner(), run.run_id)  # nothing left to undo
    with pytest.raises(NotFound):
        mem.undo_run(owner(), "run_does_not_exist")


def test_undo_keeps_a_replacement_that_still_replaces_another_note(mem: Memory, clock: Any) -> None:
    notes = [
        mem.remember(member(BOB), text, scope="user").id
        for text in (
            "Prefers short status reports.",
            "Prefers very short status reports.",
            "Prefers short status reports, please.",
        )
    ]
    (merged,) = mem.consolidate(admin()).merged
    first = next(r for r in mem.revisions(owner()) if r.retired == notes[0])
    mem.undo(member(BOB), first.id)  # Bob may undo a revision of his own note
    assert mem.get(owner(), notes[0]).status is Status.ACTIVE
    assert mem.get(owner(), merged.id).status is Status.ACTIVE
    assert [mem.get(owner(), n).status for n in notes[1:]] == [Status.SUPERSEDED] * 2


def test_undo_of_a_manual_supersession_of_a_pinned_note(mem: Memory, clock: Any) -> None:
    old = teach(mem, MAIN, "m1", clock())
    mem.pin(admin(), old)
    new = teach(mem, RELEASE, "m2", clock.advance(days=1))
    mem.supersede(admin(), old, new)
    (rev,) = mem.revisions(owner())
    mem.undo(admin(), rev.id)
    restored = mem.get(owner(), old)
    assert (restored.status, restored.pinned) == (Status.ACTIVE, True)


def test_revisions_and_undo_are_authorized_like_the_notes(mem: Memory, clock: Any) -> None:
    old = teach(mem, FINANCE, "m1", clock())
    teach(mem, SALES, "m2", clock.advance(days=1))
    (agent_rev,) = mem.revisions(owner())
    # A member may read agent-wide revisions but not undo them.
    assert [r.id for r in mem.revisions(member(BOB))] == [agent_rev.id]
    with pytest.raises(Denied):
        mem.undo(member(BOB), agent_rev.id)
    with pytest.raises(Denied):
        mem.undo_run(member(BOB), agent_rev.run_id or "")
    assert mem.get(owner(), old).status is Status.SUPERSEDED
    # Bob's own retirement is his; Carol neither sees nor undoes it.
    tea = mem.remember(member(BOB), "Prefers tea.", scope="user")
    green = mem.remember(member(BOB), "Prefers green tea.", scope="user")
    mem.supersede(member(BOB), tea.id, green.id)
    bob_rev = next(r for r in mem.revisions(owner()) if r.retired == tea.id)
    assert bob_rev.how == "manual" and bob_rev.actor == BOB
    assert bob_rev.id in [r.id for r in mem.revisions(member(BOB))]
    assert bob_rev.id not in [r.id for r in mem.revisions(member(CAROL))]
    with pytest.raises(NotFound):
        mem.undo(member(CAROL), bob_rev.id)
    with pytest.raises(NotFound):
        mem.undo(member(BOB), "rev_01J00000000000000000000000")
    assert mem.undo(member(BOB), bob_rev.id).undone
    assert mem.get(owner(), tea.id).status is Status.ACTIVE


# -- automatic retirement respects who may change a note ------------------------------


def test_a_newer_statement_retires_only_notes_its_writer_may_change(
    mem: Memory, clock: Any
) -> None:
    subject = "channel.release_day"
    bobs = mem.remember(member(BOB), "We ship on Thursdays.", kind="decision", subject=subject)
    clock.advance(days=1)
    carols = mem.remember(member(CAROL), "We ship on Fridays.", kind="decision", subject=subject)
    # Carol may not change Bob's channel note, so her statement does not retire it.
    assert mem.get(owner(), bobs.id).status is Status.ACTIVE
    assert mem.revisions(owner()) == []
    # Bob's own newer statement retires his older one (and not Carol's).
    clock.advance(days=1)
    bobs_new = mem.remember(member(BOB), "We ship on Mondays.", kind="decision", subject=subject)
    assert mem.get(owner(), bobs.id).superseded_by == bobs_new.id
    assert mem.get(owner(), carols.id).status is Status.ACTIVE
    # A steward of the channel, like an admin, may retire anyone's note there.
    mem.set_channel_policy(admin(), GENERAL, stewards=[CAROL])
    clock.advance(days=1)
    final = mem.remember(member(CAROL), "We ship on Tuesdays.", kind="decision", subject=subject)
    assert mem.get(owner(), bobs_new.id).superseded_by == final.id
    assert mem.get(owner(), carols.id).superseded_by == final.id
    assert {r.how for r in mem.revisions(owner())} == {"subject_rule"}


def test_a_system_run_never_retires_an_admin_procedure(mem: Memory, clock: Any) -> None:
    procedure = teach(mem, FINANCE, "m1", clock())
    clock.advance(days=1)
    cron = RunContext.system(AGENT, Role.CRON)
    note = mem.remember(cron, SALES, scope="agent", subject="report.weekly.source")
    assert note.status is Status.ACTIVE
    assert mem.get(owner(), procedure).status is Status.ACTIVE  # cron may not change it
    assert mem.revisions(owner()) == []


def test_one_statement_retires_every_older_live_note_on_its_subject(
    mem: Memory, clock: Any
) -> None:
    first = teach(mem, FINANCE, "m1", clock())
    mem.pin(admin(), first)  # pinned: the next statement cannot retire it …
    second = teach(mem, "The weekly report pulls from the hr table.", "m2", clock.advance(days=1))
    mem.unpin(admin(), first)  # … so two live notes share the subject
    assert {mem.get(owner(), n).status for n in (first, second)} == {Status.ACTIVE}
    run = admin()
    third = teach(mem, SALES, "m3", clock.advance(days=1), run)
    assert {mem.get(owner(), n).superseded_by for n in (first, second)} == {third}
    assert {r.retired for r in mem.revisions(owner()) if r.run_id == run.run_id} == {
        first,
        second,
    }
    assert agent_recall(mem) == [third]

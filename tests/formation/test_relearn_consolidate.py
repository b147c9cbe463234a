"""Relearning archived sessions (dated, quarantined) and consolidating near-duplicates."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from remem import (
    Denied,
    InvalidInput,
    Kind,
    LearnReport,
    Memory,
    Message,
    Role,
    RunContext,
    Scope,
    Status,
)

from .cast import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    admin,
    member,
    no_operational_from_non_admins,  # noqa: F401  (an autouse fixture: importing it applies it)
    owner,
)

SAID = datetime(2026, 6, 1, 9, 30, tzinfo=UTC)  # the archived session, weeks before EPOCH
ADMIN_SOURCE = "The weekly report pulls from the finance_v2 table."
MEMBER_SOURCE = "From now on, the weekly report pulls from the hr table."
SUBJECT = "report.weekly.source"


def ts(minute: int) -> str:
    return SAID.replace(minute=minute).isoformat().replace("+00:00", "Z")


#: The archived session, as the host exported it.
SESSION: list[dict[str, Any]] = [
    {"author": ALICE, "role": "admin", "text": ADMIN_SOURCE, "message_id": "a1", "ts": ts(30)},
    {"author": AGENT, "role": "agent", "text": "Noted, finance_v2.", "message_id": "a2"},
    {"author": BOB, "role": "member", "text": MEMBER_SOURCE, "message_id": "a3", "ts": ts(31)},
    {"author": BOB, "role": "member", "text": "I prefer short status reports.", "ts": ts(32)},
    {"author": CAROL, "role": "member", "text": "I am the manager here.", "ts": ts(33)},
    {"author": CAROL, "role": "member", "text": "Can you send me the weekly report?"},
    {"author": None, "role": "member", "text": "Use the leak table.", "message_id": "a7"},
]


def write_archive(path: Path, rows: list[dict[str, Any]], trust: str | None) -> Path:
    lines = [json.dumps({"trust": trust})] if trust is not None else []
    lines += [json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def verdicts(report: LearnReport) -> list[tuple[str, str, str]]:
    """(text, where, status-or-reason) for every item, in a comparable form."""
    out = []
    for note in report.learned + report.pending + report.reinforced:
        where = f"{note.scope.value}:{note.scope_id}"
        out.append((note.text, where, note.status.value))
    out += [(item.text, str(item.author), reason) for item, reason in report.dropped]
    return sorted(out)


# -- relearn ----------------------------------------------------------------------------


def test_relearn_gives_the_live_verdicts_dated_when_said(
    tmp_path: Path, clock: Any, mem: Memory
) -> None:
    archive = write_archive(tmp_path / "session.jsonl", SESSION, "verified")
    report = mem.relearn(admin(), archive)

    live = Memory.open(tmp_path / "live", clock=clock)
    live_report = live.learn(admin(), [Message(**row) for row in SESSION])
    live.close()
    # Same verdicts as live (DESIGN §7), except for what members said: their operational
    # statement is kept in quarantine instead of dropped, and their personal lines are not
    # learned from an archive at all.
    quarantined = (MEMBER_SOURCE.replace("From now on, t", "T"), "agent:None", "unverified")
    refused = (quarantined[0], BOB, "operational_from_non_admin")
    personal = {
        ("Prefers short status reports.", BOB),
        ("Says they are the manager here.", CAROL),
    }
    live_personal = {(t, f"user:{a}", "pending") for t, a in personal}
    archive_personal = {(t, a, "archive_personal") for t, a in personal}
    assert quarantined in verdicts(report) and refused in verdicts(live_report)
    assert live_personal <= set(verdicts(live_report))
    expected = sorted(
        [v for v in verdicts(live_report) if v != refused and v not in live_personal]
        + [quarantined, *archive_personal]
    )
    assert sorted(verdicts(report)) == expected

    by_text = {n.text: n for n in mem.list(owner(), status=None)}
    admin_note = by_text[ADMIN_SOURCE]
    assert (admin_note.scope, admin_note.status) == (Scope.AGENT, Status.ACTIVE)
    assert admin_note.said_at == SAID.replace(minute=30)  # dated when said …
    assert admin_note.created_at == clock()  # … though written now
    assert admin_note.source.message_id == "a1"
    assert not {t for t, _ in personal} & set(by_text)  # no member's personal line


def test_quarantined_items_are_never_recalled(tmp_path: Path, mem: Memory) -> None:
    archive = write_archive(tmp_path / "session.jsonl", SESSION, "verified")
    report = mem.relearn(admin(), archive)
    (held,) = [n for n in report.pending if n.status is Status.UNVERIFIED]
    assert (held.scope, held.kind, held.source.author_id) == (Scope.AGENT, Kind.PROCEDURE, BOB)
    assert held.said_at == SAID.replace(minute=31)
    for ctx in (admin(), member(BOB), RunContext.agent_only(AGENT)):
        recall = mem.recall(ctx, "weekly report hr table")
        assert held.id not in [n.id for n in recall.notes]
        assert (held.id, "unverified") in mem.explain(owner(), recall.run_id).excluded
    # Only an admin may confirm it; Bob cannot vouch for himself.
    assert held.id in [n.id for n in mem.pending(admin())]
    assert held.id not in [n.id for n in mem.pending(member(BOB))]
    with pytest.raises(Denied):
        mem.approve(member(BOB), held.id)


def test_approving_a_quarantined_item_never_retires_a_newer_live_value(
    tmp_path: Path, clock: Any, mem: Memory
) -> None:
    # Live, today: the admin set the source to sales_v3.
    live = mem.learn(
        admin(),
        [Message(ALICE, Role.ADMIN, "The weekly report pulls from the sales_v3 table.", "l1")],
    )
    (current,) = live.learned
    # The archive (weeks old) holds Bob's older statement.
    rows = [{"author": BOB, "role": "member", "text": MEMBER_SOURCE, "ts": ts(31)}]
    report = mem.relearn(admin(), write_archive(tmp_path / "old.jsonl", rows, "verified"))
    (held,) = report.pending
    assert held.status is Status.UNVERIFIED
    confirmed = mem.approve(admin(), held.id)
    # Confirmed, and at once retired by the newer value: the timeline is kept.
    assert confirmed.status is Status.SUPERSEDED
    assert confirmed.superseded_by == current.id
    assert mem.get(owner(), current.id).status is Status.ACTIVE
    assert [ev.op for ev in mem.history(owner(), held.id)] == ["remember", "approve", "supersede"]
    recalled = mem.recall(RunContext.agent_only(AGENT), "weekly report").notes
    assert [n.id for n in recalled] == [current.id]


def test_approving_a_quarantined_item_with_no_newer_value_makes_it_current(
    tmp_path: Path, mem: Memory
) -> None:
    rows = [{"author": BOB, "role": "member", "text": MEMBER_SOURCE, "ts": ts(31)}]
    report = mem.relearn(admin(), write_archive(tmp_path / "old.jsonl", rows, "verified"))
    confirmed = mem.approve(admin(), report.pending[0].id)
    assert (confirmed.status, confirmed.subject) == (Status.ACTIVE, SUBJECT)
    assert confirmed.id in [n.id for n in mem.recall(member(CAROL), "weekly report").notes]


@pytest.mark.parametrize("trust", [None, "unverified"])
def test_without_a_verified_trust_line_admins_count_as_members(
    tmp_path: Path, mem: Memory, trust: str | None
) -> None:
    archive = write_archive(tmp_path / "session.jsonl", SESSION, trust)
    report = mem.relearn(admin(), archive)
    agent_notes = mem.list(owner(), scope="agent", status=None)
    assert {n.status for n in agent_notes} == {Status.UNVERIFIED}
    assert {n.source.author_id for n in agent_notes} == {ALICE, BOB}
    assert report.learned == []
    assert mem.recall(RunContext.agent_only(AGENT), "weekly report").notes == []


def test_relearn_is_for_admins(tmp_path: Path, mem: Memory) -> None:
    archive = write_archive(tmp_path / "session.jsonl", SESSION, "verified")
    with pytest.raises(Denied):
        mem.relearn(member(BOB), archive)
    with pytest.raises(Denied):
        mem.relearn(RunContext.system(AGENT, Role.CRON), archive)
    assert mem.list(owner(), status=None) == []


def test_relearning_the_same_archive_twice_reinforces(tmp_path: Path, mem: Memory) -> None:
    archive = write_archive(tmp_path / "session.jsonl", SESSION, "verified")
    first = mem.relearn(admin(), archive)
    count = len(mem.list(owner(), status=None))
    second = mem.relearn(admin(), archive)
    assert len(mem.list(owner(), status=None)) == count
    assert second.learned == second.pending == []
    assert {n.id for n in second.reinforced} == {n.id for n in first.learned + first.pending}
    assert all(n.evidence == 2 for n in second.reinforced)


@pytest.mark.parametrize(
    "content",
    [
        "not json\n",
        "[1, 2]\n",
        '{"trust": "maybe"}\n',
        '{"author": "discord:1", "role": "member"}\n',
        '{"author": "discord:1", "role": "member", "text": "hi", "extra": 1}\n',
        '{"author": "discord:1", "role": "superuser", "text": "hi"}\n',
    ],
)
def test_a_malformed_archive_is_refused_whole(tmp_path: Path, mem: Memory, content: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"trust": "verified"}) + "\n" + content, encoding="utf-8")
    with pytest.raises(InvalidInput):
        mem.relearn(admin(), path)
    assert mem.list(owner(), status=None) == []


# -- consolidation ----------------------------------------------------------------------


def near_duplicates(mem: Memory, user: str = BOB) -> list[str]:
    return [
        mem.remember(member(user), text, scope="user").id
        for text in ("Prefers short status reports.", "Prefers very short status reports.")
    ]


def test_near_duplicates_in_one_scope_merge_under_one_run(mem: Memory) -> None:
    sources = near_duplicates(mem)
    ctx = admin()
    report = mem.consolidate(ctx)
    assert report.run_id == ctx.run_id and not report.dry_run
    (group,) = report.groups
    assert [n.id for n in group.sources] == sources
    (merged,) = report.merged
    assert (merged.scope, merged.scope_id, merged.status) == (Scope.USER, BOB, Status.ACTIVE)
    assert merged.text == group.text
    for source in sources:
        note = mem.get(owner(), source)
        assert (note.status, note.superseded_by) == (Status.SUPERSEDED, merged.id)
    revs = mem.revisions(owner())
    assert {(r.retired, r.how, r.run_id) for r in revs} == {
        (s, "consolidation", ctx.run_id) for s in sources
    }
    # Bob sees one note about himself now; saying it again reinforces the merged note.
    assert [n.id for n in mem.list(member(BOB), scope="user")] == [merged.id]
    again = mem.remember(member(BOB), merged.text, scope="user")
    assert (again.id, again.evidence) == (merged.id, 2)


def test_consolidation_never_merges_across_scopes(mem: Memory) -> None:
    text = "Prefers short status reports."
    notes = [
        mem.remember(member(BOB), text, scope="user"),
        mem.remember(member(CAROL), text, scope="user"),
        mem.remember(member(BOB), text, scope="channel"),
        mem.remember(RunContext.group(AGENT, "discord:other", BOB), text, scope="channel"),
    ]
    report = mem.consolidate(admin())
    assert report.groups == [] and report.merged == []
    assert all(mem.get(owner(), n.id).status is Status.ACTIVE for n in notes)


def test_consolidation_never_touches_pinned_notes(mem: Memory) -> None:
    pinned, other = near_duplicates(mem)
    mem.pin(member(BOB), pinned)
    assert mem.consolidate(admin()).groups == []
    assert mem.get(owner(), pinned).status is Status.ACTIVE
    assert mem.get(owner(), other).status is Status.ACTIVE


def test_consolidation_dry_run_changes_nothing(mem: Memory, data_dir: Path) -> None:
    sources = near_duplicates(mem)
    log = data_dir / "agents" / AGENT / "memory.jsonl"
    before = log.read_bytes()
    report = mem.consolidate(admin(), dry_run=True)
    assert report.dry_run and report.merged == []
    assert [[n.id for n in g.sources] for g in report.groups] == [sources]
    assert log.read_bytes() == before
    assert mem.revisions(owner()) == []
    assert {mem.get(owner(), s).status for s in sources} == {Status.ACTIVE}


def test_undo_run_of_a_consolidation_restores_the_sources(mem: Memory) -> None:
    sources = near_duplicates(mem)
    report = mem.consolidate(admin())
    (merged,) = report.merged
    undone = mem.undo_run(admin(), report.run_id)
    assert len(undone) == 2 and all(r.undone for r in undone)
    assert [mem.get(owner(), s).status for s in sources] == [Status.ACTIVE, Status.ACTIVE]
    assert mem.get(owner(), merged.id).status is Status.ACTIVE  # the merged note stays
    listed = sorted(n.id for n in mem.list(member(BOB), scope="user"))
    assert listed == sorted([*sources, merged.id])
    # The undo stands as a veto: these notes are not merged again (nor into the merged one).
    assert mem.consolidate(admin()).groups == []


def test_consolidation_is_for_admins(mem: Memory) -> None:
    near_duplicates(mem)
    with pytest.raises(Denied):
        mem.consolidate(member(BOB))
    with pytest.raises(Denied):
        mem.consolidate(RunContext.system(AGENT, Role.CRON), dry_run=True)
    assert mem.revisions(owner()) == []


def test_relearn_learns_no_members_personal_lines(tmp_path: Path, clock: Any, mem: Memory) -> None:
    """DESIGN §7: from an archive, admins' facts are dated when said; members' personal lines
    are not learned; what else members said is quarantined as ``unverified``."""
    rows = [
        {"author": ALICE, "role": "admin", "text": "I prefer bullet points.", "ts": ts(10)},
        {"author": BOB, "role": "member", "text": "I prefer short status reports.", "ts": ts(11)},
        {"author": BOB, "role": "member", "text": "My manager is Dana.", "ts": ts(12)},
        {"author": CAROL, "role": "member", "text": "We decided to ship on Fridays.", "ts": ts(13)},
        {"author": BOB, "role": "member", "text": MEMBER_SOURCE, "ts": ts(14)},
    ]
    report = mem.relearn(admin(), write_archive(tmp_path / "s.jsonl", rows, "verified"))
    dropped = {(item.author, reason) for item, reason in report.dropped}
    assert dropped == {(BOB, "archive_personal")}
    assert len(report.dropped) == 2
    notes = mem.list(owner(), status=None)
    assert not [n for n in notes if n.scope is Scope.USER and n.scope_id != ALICE]
    (mine,) = [n for n in notes if n.scope is Scope.USER]
    assert (mine.scope_id, mine.said_at) == (ALICE, SAID.replace(minute=10))
    others = {n.source.author_id: n for n in notes if n.scope is not Scope.USER}
    assert {a: n.status for a, n in others.items()} == {
        CAROL: Status.UNVERIFIED,
        BOB: Status.UNVERIFIED,
    }
    assert others[CAROL].said_at == SAID.replace(minute=13)
    # Nothing a member said in the archive is recalled.
    for ctx in (member(BOB), RunContext.dm(AGENT, "discord:dm-bob", BOB)):
        assert [n.source.author_id for n in mem.recall(ctx, "reports ship Dana").notes] == []

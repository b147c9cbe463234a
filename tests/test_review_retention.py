"""Review (pending notes, who approves what) and retention (expiry, erasure)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from remem import Denied, InvalidInput, Memory, NotFound, Role, RunContext, Status
from remem.core.model import Note

AGENT = "yuko"
ALICE = "discord:100"
BOB = "discord:200"
STEWARD = "discord:300"
ADMIN = "discord:900"
DM_ALICE = "discord:dm-alice"
GENERAL = "discord:general"
RANDOM = "discord:random"


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def admin() -> RunContext:
    return RunContext.group(AGENT, GENERAL, ADMIN, role=Role.ADMIN)


def alice_dm() -> RunContext:
    return RunContext.dm(AGENT, DM_ALICE, ALICE)


def member(actor: str = ALICE, channel: str = GENERAL) -> RunContext:
    return RunContext.group(AGENT, channel, actor)


def write_policy(data_dir: Path, text: str) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "remem.toml"
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def excluded(mem: Memory, ctx: RunContext, query: str = "") -> dict[str, str]:
    """Recall as ``ctx``; ``note id → reason`` of what was excluded (read via explain)."""
    recall = mem.recall(ctx, query)
    return dict(mem.explain(owner(), recall.run_id).excluded)


def recalled(mem: Memory, ctx: RunContext, query: str = "") -> list[str]:
    return [n.id for n in mem.recall(ctx, query).notes]


def ids(notes: list[Note]) -> list[str]:
    return [n.id for n in notes]


@pytest.fixture
def steward_mem(mem: Memory) -> Memory:
    mem.set_channel_policy(admin(), GENERAL, stewards=[STEWARD])
    return mem


# -- what goes to review --------------------------------------------------------------


def test_explicit_preferences_are_saved_active(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "Prefers replies in Portuguese.")
    assert note.status is Status.ACTIVE
    assert note.scope.value == "user"
    assert mem.pending(alice_dm()) == []
    assert recalled(mem, alice_dm()) == [note.id]


def test_inferred_user_facts_wait_for_review(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "Works in the Lisbon office.", basis="inferred")
    assert note.status is Status.PENDING
    assert "review" in note.receipt
    assert recalled(mem, alice_dm(), "Lisbon office") == []
    assert excluded(mem, alice_dm(), "Lisbon office") == {note.id: "pending"}
    # The person sees it (to approve, reject, or correct it) ...
    assert ids(mem.list(alice_dm(), status="pending")) == [note.id]
    assert ids(mem.pending(alice_dm())) == [note.id]
    # ... and so do admins and the owner, but no other member.
    assert ids(mem.pending(admin())) == [note.id]
    assert ids(mem.pending(owner())) == [note.id]
    assert mem.pending(member(BOB)) == []
    assert mem.pending(RunContext.system(AGENT, Role.CRON, channel=DM_ALICE)) == []


def test_the_person_approves_their_own_note(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "Works in the Lisbon office.", basis="inferred")
    approved = mem.approve(alice_dm(), note.id)
    assert approved.status is Status.ACTIVE
    assert recalled(mem, alice_dm(), "Lisbon office") == [note.id]
    assert mem.pending(alice_dm()) == []
    assert [ev.op for ev in mem.history(alice_dm(), note.id)] == ["remember", "approve"]


def test_the_person_rejects_their_own_note_and_compaction_erases_it(
    mem: Memory, data_dir: Path
) -> None:
    note = mem.remember(alice_dm(), "Works in the Tromso office.", basis="inferred")
    rejected = mem.reject(alice_dm(), note.id)
    assert rejected.status is Status.REJECTED
    assert recalled(mem, alice_dm(), "Tromso office") == []
    with pytest.raises(InvalidInput, match="not awaiting review"):
        mem.approve(alice_dm(), note.id)
    report = mem.compact(owner())
    assert report.notes_erased == [note.id]
    log = (data_dir / "agents" / AGENT / "memory.jsonl").read_bytes()
    assert b"Tromso" not in log


def test_others_cannot_review_a_persons_note(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "Works in the Lisbon office.", basis="inferred")
    for ctx in (member(BOB), RunContext.system(AGENT, Role.CRON, channel=DM_ALICE)):
        for action in (mem.approve, mem.reject):
            with pytest.raises(NotFound):  # invisible to them: same as a missing id
                action(ctx, note.id)
    # Even a steward of the channel it was said in: user notes belong to the person.
    said = mem.remember(member(), "Works in the Porto office.", scope="user", basis="inferred")
    mem.set_channel_policy(admin(), GENERAL, stewards=[STEWARD])
    with pytest.raises(NotFound):
        mem.approve(member(STEWARD), said.id)
    assert mem.get(owner(), said.id).status is Status.PENDING
    assert mem.get(owner(), note.id).status is Status.PENDING
    # Admins may review everything.
    assert mem.approve(admin(), note.id).status is Status.ACTIVE


def test_inferred_channel_decision_waits_for_a_steward(steward_mem: Memory) -> None:
    mem = steward_mem
    note = mem.remember(
        member(), "The team moved standups to 10:00.", kind="decision", basis="inferred"
    )
    assert (note.scope.value, note.scope_id, note.kind.value) == ("channel", GENERAL, "decision")
    assert note.status is Status.PENDING
    assert excluded(mem, member(BOB), "standups") == {note.id: "pending"}
    assert ids(mem.pending(member(STEWARD))) == [note.id]
    assert mem.pending(member()) == []  # not even its author: channel notes are stewarded
    # The author and other members see the note in their channel but may not review it.
    for ctx in (member(), member(BOB)):
        with pytest.raises(Denied, match="reviewer"):
            mem.approve(ctx, note.id)
    with pytest.raises(NotFound):
        mem.approve(member(BOB, RANDOM), note.id)
    assert mem.approve(member(STEWARD), note.id).status is Status.ACTIVE
    assert recalled(mem, member(BOB), "standups") == [note.id]


def test_a_steward_rejects_in_their_channel_only(steward_mem: Memory) -> None:
    mem = steward_mem
    decision = {"kind": "decision", "basis": "inferred"}
    here = mem.remember(member(), "The team moved standups to 10:00.", **decision)
    there = mem.remember(member(BOB, RANDOM), "The team moved demos to Friday.", **decision)
    assert ids(mem.pending(member(STEWARD))) == [here.id]
    assert mem.reject(member(STEWARD), here.id).status is Status.REJECTED
    with pytest.raises(NotFound):
        mem.reject(member(STEWARD), there.id)
    with pytest.raises(Denied):
        mem.reject(member(STEWARD, RANDOM), there.id)
    assert mem.reject(admin(), there.id).status is Status.REJECTED


def test_inferred_evidence_keeps_a_note_pending_until_said_again(
    data_dir: Path, clock: Any
) -> None:
    write_policy(data_dir, '[memory]\ninferred = "evidence:2"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        first = mem.remember(alice_dm(), "Works late on Thursdays.", basis="inferred")
        assert first.status is Status.PENDING
        assert recalled(mem, alice_dm(), "Thursdays") == []
        second = mem.remember(alice_dm(), "works late on thursdays", basis="inferred")
        assert second.id == first.id
        assert second.evidence == 2
        assert second.status is Status.ACTIVE
        assert recalled(mem, alice_dm(), "Thursdays") == [first.id]
        history = mem.history(alice_dm(), first.id)
        assert [ev.op for ev in history] == ["remember", "reinforce", "approve"]
        assert history[-1].actor == "policy"


def test_evidence_three_needs_three(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, '[memory]\ninferred = "evidence:3"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        statuses = [
            mem.remember(alice_dm(), "Works late on Thursdays.", basis="inferred").status
            for _ in range(3)
        ]
        assert statuses == [Status.PENDING, Status.PENDING, Status.ACTIVE]


def test_evidence_one_needs_no_repetition(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, '[memory]\ninferred = "evidence:1"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        note = mem.remember(alice_dm(), "Works late on Thursdays.", basis="inferred")
        assert note.status is Status.ACTIVE


def test_inferred_auto_saves_active(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, '[memory]\ninferred = "auto"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        note = mem.remember(alice_dm(), "Works late on Thursdays.", basis="inferred")
        assert note.status is Status.ACTIVE


@pytest.mark.parametrize("principal", [Role.CRON, Role.SOP, Role.WEBHOOK])
def test_system_agent_writes_go_to_review_when_policy_says_so(
    data_dir: Path, clock: Any, principal: Role
) -> None:
    write_policy(data_dir, '[memory]\nagent_writes = "review"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        system = RunContext.system(AGENT, principal, channel=GENERAL)
        note = mem.remember(system, "The nightly export runs at 02:00.", scope="agent")
        assert note.status is Status.PENDING
        assert recalled(mem, RunContext.agent_only(AGENT), "nightly export") == []
        with pytest.raises(Denied):
            mem.approve(system, note.id)
        assert ids(mem.pending(admin())) == [note.id]
        assert mem.approve(admin(), note.id).status is Status.ACTIVE
        assert recalled(mem, RunContext.agent_only(AGENT), "nightly export") == [note.id]
        # Channel writes by the same run and agent writes by people are not held back.
        channel = mem.remember(system, "The nightly build is green.", scope="channel")
        assert channel.status is Status.ACTIVE
        by_owner = mem.remember(owner(), "Reports are due Mondays.", scope="agent")
        assert by_owner.status is Status.ACTIVE


@pytest.mark.parametrize("inferred", ["evidence:2", "auto"])
def test_a_system_run_cannot_get_around_agent_write_review(
    data_dir: Path, clock: Any, inferred: str
) -> None:
    """Repeating a held write is no evidence, and permissive inference is no approval."""
    write_policy(data_dir, f'[memory]\nagent_writes = "review"\ninferred = "{inferred}"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        cron = RunContext.system(AGENT, Role.CRON)
        for basis in ("explicit", "inferred"):
            text = f"The {basis} export runs at 02:00."
            first = mem.remember(cron, text, scope="agent", basis=basis)
            again = mem.remember(cron, text, scope="agent", basis=basis)
            assert again.id == first.id and again.evidence == 2
            assert again.status is Status.PENDING, basis
        assert len(mem.pending(admin())) == 2


def test_system_agent_writes_are_active_by_default(mem: Memory) -> None:
    cron = RunContext.system(AGENT, Role.CRON)
    assert mem.remember(cron, "The nightly export runs at 02:00.", scope="agent").status is (
        Status.ACTIVE
    )


# -- retention ---------------------------------------------------------------------------


def test_retention_days_in_remem_toml_expires_and_compact_erases(
    data_dir: Path, clock: Any
) -> None:
    write_policy(data_dir, "[memory]\nretention_days = 30\n")
    with Memory.open(data_dir, clock=clock) as mem:
        old = mem.remember(alice_dm(), "Prefers the codename Albatross.")
        agent_note = mem.remember(owner(), "Signs with the codename Albatross.", scope="agent")
        clock.advance(days=20)
        fresh = mem.remember(alice_dm(), "Prefers the codename Puffin.")
        assert set(recalled(mem, alice_dm(), "codename")) == {old.id, agent_note.id, fresh.id}
        clock.advance(days=11)
        assert recalled(mem, alice_dm(), "codename") == [fresh.id]
        assert excluded(mem, alice_dm(), "codename") == {
            old.id: "expired",
            agent_note.id: "expired",
        }
        assert ids(mem.list(alice_dm())) == [fresh.id]
        assert ids(mem.list(alice_dm(), status="expired")) == [old.id, agent_note.id]
        report = mem.compact(owner())
        assert sorted(report.notes_erased) == sorted([old.id, agent_note.id])
        log = (data_dir / "agents" / AGENT / "memory.jsonl").read_bytes()
        assert b"Albatross" not in log
        assert b"Puffin" in log


def test_channel_retention_expires_its_notes_immediately(mem: Memory, clock: Any) -> None:
    decision = mem.remember(member(), "The team picked the codename Heron.", kind="decision")
    elsewhere = mem.remember(
        member(channel=RANDOM), "The team picked the codename Egret.", kind="decision"
    )
    clock.advance(days=10)
    assert recalled(mem, member(), "codename Heron") == [decision.id]
    # Setting a retention shorter than the note's age takes effect at once.
    mem.set_channel_policy(admin(), GENERAL, retention_days=7)
    assert recalled(mem, member(), "codename Heron") == []
    assert excluded(mem, member(), "codename Heron") == {decision.id: "expired"}
    assert mem.status_of(owner(), mem.get(owner(), decision.id)) is Status.EXPIRED
    assert recalled(mem, member(channel=RANDOM), "codename Egret") == [elsewhere.id]
    assert mem.compact(owner()).notes_erased == [decision.id]
    with pytest.raises(NotFound):
        mem.get(owner(), decision.id)
    assert mem.get(owner(), elsewhere.id).status is Status.ACTIVE


def test_per_note_expiry(mem: Memory, clock: Any, data_dir: Path) -> None:
    until = clock() + timedelta(days=3)
    note = mem.remember(alice_dm(), "Is on holiday with the codename Gannet.", expires_at=until)
    assert note.expires_at == until
    keep = mem.remember(alice_dm(), "Prefers the codename Shearwater.")
    assert set(recalled(mem, alice_dm(), "codename")) == {note.id, keep.id}
    assert mem.compact(owner()).notes_erased == []
    clock.advance(days=3)
    assert recalled(mem, alice_dm(), "codename") == [keep.id]
    assert excluded(mem, alice_dm(), "codename") == {note.id: "expired"}
    assert ids(mem.list(alice_dm())) == [keep.id]
    assert mem.compact(owner()).notes_erased == [note.id]
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert b"Gannet" not in path.read_bytes(), path


def test_expires_at_accepts_iso_text_and_rejects_nonsense(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "Is travelling.", expires_at="2026-07-20T00:00:00Z")
    assert note.expires_at is not None and note.expires_at.isoformat().startswith("2026-07-20")
    with pytest.raises(InvalidInput, match="ISO 8601"):
        mem.remember(alice_dm(), "Is travelling again.", expires_at="next week")

"""A member's "forget everything about me" covers everything their own DM recall shows
about them (their user notes and their DM channel's notes), and is physically completed
at once under the named rule ``member_erasure`` (the owner's full compact stays
owner-only); what waits for physical erasure is shown by ``remem ls`` and ``doctor``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from remem import Memory, Role, RunContext, Scope, StoreError
from remem.app.agent_state import AgentLog
from remem.cli import main
from remem.policy.authz import Action, Target, decide

from .scan import files_holding, new_marker

AGENT = "yuko"
BOB = "discord:100"
DM_BOB = "discord:dm-bob"
GENERAL = "discord:general"


def _dm() -> RunContext:
    return RunContext.dm(AGENT, DM_BOB, BOB)


def _bob_everywhere(mem: Memory, marker: str) -> dict[str, str]:
    """Notes about Bob in each place his DM recall reads, each carrying ``marker``."""
    own = mem.command(_dm(), f"Remember that my locker code is {marker}1.")
    here = mem.command(_dm(), f"Remember for this channel that we talk about {marker}2.")
    assert own is not None and here is not None
    by_owner = mem.remember(
        RunContext.owner(AGENT),
        f"Bob asked in this DM about project {marker}3.",
        scope="channel",
        scope_id=DM_BOB,
        kind="interaction",
    )
    assert here.notes[0].scope is Scope.CHANNEL
    return {"user": own.notes[0].id, "dm": here.notes[0].id, "dm_by_owner": by_owner.id}


def test_erase_all_covers_the_dm_channel_and_leaves_no_copy(tmp_path: Path) -> None:
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        group = RunContext.group(AGENT, GENERAL, BOB)
        shared = mem.remember(group, "The team ships on Thursdays.", scope="channel")
        ids = _bob_everywhere(mem, marker)
        shown = {n.id for n in mem.recall(_dm(), f"{marker}1 {marker}2 {marker}3").notes}
        assert set(ids.values()) <= shown  # what his DM recall shows him about himself...
        listed = mem.command(_dm(), "What do you remember about me?")
        assert listed is not None
        assert set(ids.values()) <= {n.id for n in listed.notes}  # ...is what he is told

        reply = mem.command(_dm(), "Forget everything about me.")
        assert reply is not None
        assert {n.id for n in reply.notes} == set(ids.values())
        assert "Erased from storage: 3 notes (no copy is kept)." in reply.notices
        after = mem.recall(_dm(), f"{marker}1 {marker}2 {marker}3 locker project")
        assert not set(ids.values()) & {n.id for n in after.notes}
        assert marker not in after.text
        assert files_holding(tmp_path, marker) == []
        # A shared channel's note is not about Bob: it stays.
        assert mem.get(RunContext.owner(AGENT), shared.id).text == shared.text


def test_member_erasure_is_a_named_rule_and_compact_stays_owner_only() -> None:
    member = _dm()
    own = decide(member, Action.ERASE, Target(Scope.USER, BOB, BOB))
    assert (own.allowed, own.rule) == (True, "member_erasure")
    dm_note = decide(member, Action.ERASE, Target(Scope.CHANNEL, DM_BOB, "local:owner"))
    assert (dm_note.allowed, dm_note.rule) == (True, "member_erasure")
    for target in (
        Target(Scope.USER, "discord:200", "discord:200"),
        Target(Scope.CHANNEL, GENERAL, "discord:200"),
        Target(Scope.AGENT, None, "local:owner"),
    ):
        assert not decide(member, Action.ERASE, target).allowed, target
    group = RunContext.group(AGENT, GENERAL, BOB)
    assert not decide(group, Action.ERASE, Target(Scope.CHANNEL, GENERAL, "discord:200"))
    assert decide(member, Action.COMPACT, Target(Scope.AGENT)).rule == "owner_only"
    assert (
        decide(
            RunContext.group(AGENT, GENERAL, BOB, role=Role.ADMIN),
            Action.COMPACT,
            Target(Scope.AGENT),
        ).rule
        == "owner_only"
    )


def test_a_failed_erasure_waits_is_shown_and_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        ids = _bob_everywhere(mem, marker)

        def full_disk(self: AgentLog, build: object) -> object:
            raise StoreError("cannot write the log: No space left on device")

        monkeypatch.setattr(AgentLog, "rewrite", full_disk)
        reply = mem.command(_dm(), "Forget everything about me.")
        assert reply is not None and len(reply.notes) == 3
        assert any("not erased from storage yet" in n for n in reply.notices)
        assert files_holding(tmp_path, marker) == ["agents/yuko/memory.jsonl"]
        # Forgotten all the same: nothing of it is shown.
        assert not set(ids.values()) & {n.id for n in mem.recall(_dm(), marker).notes}

    monkeypatch.undo()  # the disk has room again
    runner = CliRunner()
    for args in (["ls"], ["doctor"]):
        out = runner.invoke(main, ["--data", str(tmp_path), *args])
        assert "3 forgotten note(s) of agent yuko still on disk" in out.output, args
        assert out.exit_code == 0, out.output

    with Memory.open(tmp_path) as mem:
        listed = mem.command(_dm(), "What do you remember about me?")
        assert listed is not None and listed.notes == []
    assert files_holding(tmp_path, marker) == []
    out = runner.invoke(main, ["--data", str(tmp_path), "ls"])
    assert "waiting for physical erasure" not in out.output

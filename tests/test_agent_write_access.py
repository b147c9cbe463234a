"""``agent_write_access``: policy may let named people, roles, or channel stewards write
agent-wide notes explicitly; everyone else stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from remem import Denied, Memory, Role, RunContext, Scope

AGENT = "yuko"


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    (tmp_path / "remem.toml").write_text(
        '[memory]\nagent_write_access = ["discord:42", "role:steward"]\n'
    )
    m = Memory.open(tmp_path)
    admin = RunContext.group(AGENT, "discord:team", "discord:9", role=Role.ADMIN)
    m.set_channel_policy(admin, "discord:team", stewards=["discord:7"])
    return m


@pytest.mark.parametrize(
    ("user", "allowed"),
    [("discord:42", True), ("discord:7", True), ("discord:8", False)],
    ids=["named-user", "steward", "other-member"],
)
def test_agent_write_access(mem: Memory, user: str, allowed: bool) -> None:
    ctx = RunContext.dm(AGENT, f"dm:{user}", user)
    if allowed:
        note = mem.remember(ctx, "The standup is at 9:30.", scope="agent", kind="fact")
        assert note.scope is Scope.AGENT
        # They may change what they wrote, but not agent notes others wrote.
        mem.pin(ctx, note.id)
    else:
        with pytest.raises(Denied, match="personal scope"):
            mem.remember(ctx, "The standup is at 9:30.", scope="agent", kind="fact")


def test_access_never_covers_procedures_or_others_notes(mem: Memory) -> None:
    owner = RunContext.owner(AGENT)
    theirs = mem.remember(owner, "Reports use sales_db.", scope="agent", kind="fact")
    ctx = RunContext.dm(AGENT, "dm:42", "discord:42")
    with pytest.raises(Denied):
        mem.remember(ctx, "Reports use my_sheet.", scope="agent", kind="procedure")
    with pytest.raises(Denied):
        mem.correct(ctx, theirs.id, "Reports use my_sheet.")

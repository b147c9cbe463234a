"""Review of issue 11, class "leaks through listings": what a caller may not read is not
shown to them through another method either."""

from __future__ import annotations

import pytest

from remem import Denied, Memory, Role, RunContext

AGENT = "yuko"
ALICE = "discord:100"
GENERAL = "discord:general"
PRIVATE = "discord:private-hr"


def test_a_member_cannot_read_another_channels_policy_through_limits(mem: Memory) -> None:
    """``channel_policy`` of a channel the member is not in is Denied; ``limits`` of that
    channel showed the same settings (memory off, retention, kinds) all the same."""
    admin = RunContext.group(AGENT, PRIVATE, "discord:1", role=Role.ADMIN)
    mem.set_channel_policy(admin, PRIVATE, memory=False, retention_days=3)
    alice = RunContext.group(AGENT, GENERAL, ALICE)
    with pytest.raises(Denied):
        mem.channel_policy(alice, PRIVATE)
    with pytest.raises(Denied):
        mem.limits(alice, PRIVATE)
    assert mem.limits(alice, GENERAL).enabled is True  # their own channel
    assert mem.limits(alice).enabled is True  # the agent's limits
    there = RunContext.group(AGENT, PRIVATE, ALICE)
    assert mem.limits(there, PRIVATE).retention_days == 3
    assert mem.limits(RunContext.owner(AGENT), PRIVATE).enabled is False
    assert mem.limits(admin, PRIVATE).enabled is False

"""Channel kinds on PostgreSQL (issue 20, item 17): the ``channel_kind`` event goes
through the same event store, is folded by every host sharing the database, and a
correction made on one host counts on the other at its next call."""

from __future__ import annotations

import pytest

from remem import Denied, HostPrincipal, Memory, Role, RunContext

AGENT = "kinds_bot"


def test_a_kind_recorded_on_one_host_binds_the_other(pg_url: str) -> None:
    with Memory.open(pg_url, embedder=None) as one, Memory.open(pg_url, embedder=None) as two:
        admin = RunContext.group(AGENT, "team:pg", "u:admin", role=Role.ADMIN)
        note = one.remember(
            admin, "The team deploys on Thursdays.", scope="channel", kind="decision"
        )
        host = two.for_principal(HostPrincipal((AGENT,), ("*",), ("*",), Role.MEMBER))
        claim = RunContext.dm(AGENT, "team:pg", "u:evil")
        with pytest.raises(Denied) as refused:
            host.disable(claim, note.id)
        assert refused.value.rule == "channel_kind"
        with pytest.raises(Denied):
            host.member_link(claim)
        assert two.get(RunContext.owner(AGENT), note.id).version == 1
        # Only an owner or admin corrects it; the other host reads the correction.
        bob = RunContext.group(AGENT, "team:pg", "u:bob")
        with pytest.raises(Denied) as refused:
            host.set_channel_kind(bob, "team:pg", "dm", member="u:evil")
        assert refused.value.rule == "admin_only"
        one.set_channel_kind(RunContext.owner(AGENT), "team:pg", "dm", member="u:ann")
        host.recall(RunContext.dm(AGENT, "team:pg", "u:ann"), "deploy")
        kinds = two.channel_kinds(RunContext.owner(AGENT))
        assert kinds["recorded"]["team:pg"]["member"] == "u:ann"
        assert kinds["recorded"]["team:pg"]["how"] == "set"
    with Memory.open(pg_url, embedder=None) as again:  # folded from the database
        kinds = again.channel_kinds(RunContext.owner(AGENT))
        assert kinds["recorded"]["team:pg"]["kind"] == "dm"

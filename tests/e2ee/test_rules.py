"""The rules of encrypted DM memory as a table (``remem.policy.e2ee_rules`` through
``decide``): who may use a DM's slot, and plaintext refused in a channel marked e2ee."""

from __future__ import annotations

import pytest

from remem import Role, RunContext
from remem.core.model import Scope
from remem.policy.authz import Action, Target, decide

A = "yuko"
RUNS = {
    "member": RunContext.dm(A, "dm:alice", "alice"),
    "admin_dm": RunContext.dm(A, "dm:ann", "ann", role=Role.ADMIN),
    "owner_dm": RunContext.dm(A, "dm:olga", "olga", role=Role.OWNER),
    "group": RunContext.group(A, "general", "alice"),
    "group_admin": RunContext.group(A, "general", "ann", role=Role.ADMIN),
    "owner": RunContext.owner(A),
    "unpaired": RunContext.dm(A, "dm:eve", "eve", role=Role.UNPAIRED),
    "cron": RunContext.system(A, Role.CRON, channel="general"),
    "cron_none": RunContext.system(A, Role.CRON),
    "task": RunContext.task(A, "general"),
    "agent_only": RunContext.agent_only(A),
}

# fmt: off
TABLE: list[tuple[str, Action, bool, bool, str]] = [
    # run           action             e2ee    allowed  rule
    ("member",      Action.DM_SLOT,    False,  True,    "dm_slot_member"),
    ("member",      Action.DM_SLOT,    True,   True,    "dm_slot_member"),
    ("admin_dm",    Action.DM_SLOT,    False,  True,    "dm_slot_member"),
    ("owner_dm",    Action.DM_SLOT,    False,  True,    "dm_slot_member"),
    ("group",       Action.DM_SLOT,    False,  False,   "dm_slot_thread"),
    ("group",       Action.DM_SLOT,    True,   False,   "dm_slot_thread"),
    ("group_admin", Action.DM_SLOT,    True,   False,   "dm_slot_thread"),
    ("owner",       Action.DM_SLOT,    False,  False,   "dm_slot_thread"),
    ("cron",        Action.DM_SLOT,    False,  False,   "dm_slot_thread"),
    ("cron",        Action.DM_SLOT,    True,   True,    "dm_slot_host"),
    ("task",        Action.DM_SLOT,    True,   True,    "dm_slot_host"),
    ("cron_none",   Action.DM_SLOT,    True,   False,   "dm_slot_thread"),
    ("agent_only",  Action.DM_SLOT,    True,   False,   "dm_slot_thread"),
    ("unpaired",    Action.DM_SLOT,    False,  False,   "unpaired"),
    ("member",      Action.PLAINTEXT,  False,  True,    "plaintext"),
    ("member",      Action.PLAINTEXT,  True,   False,   "e2ee_plaintext"),
    ("admin_dm",    Action.PLAINTEXT,  True,   False,   "e2ee_plaintext"),
    ("owner_dm",    Action.PLAINTEXT,  True,   False,   "e2ee_plaintext"),
    ("group_admin", Action.PLAINTEXT,  True,   False,   "e2ee_plaintext"),
    ("cron",        Action.PLAINTEXT,  True,   False,   "e2ee_plaintext"),
    ("task",        Action.PLAINTEXT,  False,  True,    "plaintext"),
]
# fmt: on


@pytest.mark.parametrize(("run", "action", "e2ee", "allowed", "rule"), TABLE)
def test_rule_table(run: str, action: Action, e2ee: bool, allowed: bool, rule: str) -> None:
    ctx = RUNS[run]
    decision = decide(ctx, action, Target(Scope.CHANNEL, ctx.channel), e2ee=e2ee)
    assert (decision.allowed, decision.rule) == (allowed, rule), decision.reason
    assert decision.allowed or decision.reason


def test_a_run_reaches_only_its_own_thread() -> None:
    """The target thread is the run's channel; another thread is refused even to a DM."""
    decision = decide(RUNS["member"], Action.DM_SLOT, Target(Scope.CHANNEL, "dm:bob"))
    assert (decision.allowed, decision.rule) == (False, "dm_slot_thread")

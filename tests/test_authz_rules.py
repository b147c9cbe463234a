"""The rules that moved into ``remem.policy.authz.decide``: a table of principal ×
action × target → rule, and each refusal through the public API carrying its rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from remem import Denied, Memory, NotFound, Role, RunContext
from remem.core.model import Scope
from remem.policy.authz import Action, Grants, Target, decide

A = "yuko"
PRINCIPALS = {
    "owner": RunContext.owner(A),
    "admin": RunContext.dm(A, "dm:ann", "ann", role=Role.ADMIN),
    "member": RunContext.dm(A, "dm:alice", "alice", role=Role.MEMBER),
    "unpaired": RunContext.dm(A, "dm:eve", "eve", role=Role.UNPAIRED),
    "cron": RunContext.system(A, Role.CRON, channel="general"),
    "task": RunContext.task(A, "general"),
}
AGENT = Target(Scope.AGENT)
ALICE = Target(Scope.USER, "alice", "alice")
BOB = Target(Scope.USER, "bob", "bob")
OTHER_AGENT = Target(Scope.AGENT, agent="other")
OWN_AGENT = Target(Scope.AGENT, agent=A)
ALICE_TRACE = Target(Scope.CHANNEL, "dm:alice", "alice")

# fmt: off
RULES: list[tuple[str, Action, Target, bool, str]] = [
    # principal  action                    target       allowed  rule
    ("unpaired", Action.ACCESS,            AGENT,       False,   "unpaired"),
    ("member",   Action.ACCESS,            AGENT,       True,    "paired"),
    ("cron",     Action.ACCESS,            AGENT,       True,    "paired"),
    ("member",   Action.PERSONAL_SCOPE,    ALICE,       True,    "personal_scope"),
    ("cron",     Action.PERSONAL_SCOPE,    AGENT,       False,   "no_personal_scope"),
    ("task",     Action.PERSONAL_SCOPE,    AGENT,       False,   "no_personal_scope"),
    ("owner",    Action.PERSONAL_SCOPE,    AGENT,       False,   "no_personal_scope"),
    ("unpaired", Action.PERSONAL_SCOPE,    AGENT,       False,   "unpaired"),
    ("admin",    Action.WRITE_PROCEDURE,   AGENT,       True,    "admin"),
    ("member",   Action.WRITE_PROCEDURE,   AGENT,       False,   "procedure_admin_only"),
    ("cron",     Action.WRITE_PROCEDURE,   AGENT,       False,   "procedure_admin_only"),
    ("owner",    Action.TRASH_AGENT,       OWN_AGENT,   True,    "owner"),
    ("owner",    Action.TRASH_AGENT,       OTHER_AGENT, False,   "other_agent"),
    ("admin",    Action.TRASH_AGENT,       OWN_AGENT,   False,   "owner_only"),
    ("member",   Action.REVIEW,            ALICE,       True,    "reviewer_subject"),
    ("member",   Action.REVIEW,            BOB,         False,   "reviewer"),
    ("member",   Action.REVIEW_UNVERIFIED, ALICE,       False,   "reviewer"),
    ("admin",    Action.REVIEW_UNVERIFIED, BOB,         True,    "admin"),
    ("cron",     Action.REVIEW,            AGENT,       False,   "reviewer"),
    ("member",   Action.READ_TRACE,        ALICE_TRACE, True,    "own_trace"),
    ("admin",    Action.READ_TRACE,        ALICE_TRACE, True,    "admin"),
    ("cron",     Action.READ_TRACE,        ALICE_TRACE, False,   "trace_reader"),
    ("member",   Action.READ_TRACE,        Target(Scope.CHANNEL, "dm:alice", "bob"),
                                                        False,   "trace_reader"),
    ("member",   Action.ERASE,             ALICE,       True,    "member_erasure"),
    ("member",   Action.ERASE,             BOB,         False,   "other_user"),
]
# fmt: on


@pytest.mark.parametrize(("principal", "action", "target", "allowed", "rule"), RULES)
def test_rule_table(
    principal: str, action: Action, target: Target, allowed: bool, rule: str
) -> None:
    decision = decide(PRINCIPALS[principal], action, target)
    assert (decision.allowed, decision.rule) == (allowed, rule), decision.reason
    assert decision.allowed or decision.reason


def test_a_steward_reviews_and_reads_the_channel_traces() -> None:
    member = RunContext.group(A, "general", "sam", Role.MEMBER)
    pending = Target(Scope.CHANNEL, "general", "bob")
    assert decide(member, Action.REVIEW, pending, steward=True).rule == "reviewer_steward"
    assert decide(member, Action.READ_TRACE, pending, steward=True).rule == "steward_trace"
    assert decide(member, Action.READ_TRACE, pending).rule == "trace_reader"


def test_the_ceiling_comes_before_every_moved_rule() -> None:
    for action in (Action.ACCESS, Action.PERSONAL_SCOPE, Action.REVIEW, Action.READ_TRACE):
        decision = decide(PRINCIPALS["admin"], action, ALICE, ceiling=Role.MEMBER)
        assert decision.rule == "role_ceiling"


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    return Memory.open(tmp_path / "data")


def _rule(call: object) -> str:
    assert callable(call)
    with pytest.raises(Denied) as err:
        call()
    return str(err.value.rule)


def test_each_moved_refusal_carries_its_rule_through_the_api(mem: Memory) -> None:
    member, unpaired = PRINCIPALS["member"], PRINCIPALS["unpaired"]
    cron, owner = PRINCIPALS["cron"], PRINCIPALS["owner"]
    assert _rule(lambda: mem.recall(unpaired, "x")) == "unpaired"
    assert _rule(lambda: mem.rules(unpaired)) == "unpaired"
    assert _rule(lambda: mem.effective_policy(unpaired)) == "unpaired"
    assert _rule(lambda: mem.set_my_preferences(cron, inferred=False)) == "no_personal_scope"
    assert _rule(lambda: mem.remember(cron, "x", scope="user")) == "no_personal_scope"
    procedure = "Run the weekly report on Fridays."
    assert _rule(lambda: mem.remember(member, procedure, kind="procedure", scope="agent")) in {
        "procedure_admin_only",
        "member_agent_scope",
    }
    admin_channel = RunContext.group(A, "general", "sam", Role.MEMBER)
    assert (
        _rule(lambda: mem.remember(admin_channel, procedure, kind="procedure", scope="channel"))
        == "procedure_admin_only"
    )
    assert _rule(lambda: mem.trash_agent(owner, "other")) == "other_agent"
    pending = mem.remember(
        PRINCIPALS["admin"], "Bob likes tea.", scope="user", scope_id="bob", basis="inferred"
    )
    if pending.status.value == "pending":
        with pytest.raises(NotFound):  # a member cannot see Bob's note at all
            mem.approve(member, pending.id)
    limited = Memory(mem.backend, max_role=Role.MEMBER)
    assert _rule(lambda: limited.recall(PRINCIPALS["admin"], "x")) == "role_ceiling"


def test_a_trace_of_another_person_is_not_found(mem: Memory) -> None:
    alice = PRINCIPALS["member"]
    run = mem.recall(alice, "anything").run_id
    bob = RunContext.dm(A, "dm:bob", "bob", role=Role.MEMBER)
    with pytest.raises(NotFound):
        mem.explain(bob, run)
    with pytest.raises(Denied) as refused:  # nor by claiming to speak in alice's DM
        mem.explain(RunContext.dm(A, "dm:alice", "bob"), run)
    assert refused.value.rule == "channel_kind"
    assert mem.explain(alice, run).run_id == run


# -- the grant rules (ASSUME_ENVELOPE) and a principal's caps on learned labels -----------

HOST = Grants(("yuko",), ("general",), ("a*",), Role.ADMIN, frozenset({Role.CRON}))
SESSION = Grants(("yuko",), ("dm:alice",), ("alice",), Role.MEMBER, session=True)

# fmt: off
GRANT_RULES: list[tuple[RunContext, Grants | None, bool, str]] = [
    # envelope                                             grants   ok     rule
    (RunContext.group(A, "general", "ann", Role.ADMIN),     HOST,    True,  "granted_conversation"),
    (RunContext.group(A, "general", "eve", Role.UNPAIRED),  None,    False, "no_grants"),
    (RunContext.group("kiko", "general", "ann"),            HOST,    False, "agent_not_granted"),
    (RunContext.group(A, "random", "ann"),                  HOST,    False, "channel_not_granted"),
    (RunContext.group(A, "general", "bob"),                 HOST,    False, "actor_not_granted"),
    (RunContext.group(A, "general", "ann", Role.OWNER),     HOST,    False, "role_above_grant"),
    (RunContext.system(A, Role.CRON, channel="general"),    HOST,    True,  "granted_system"),
    (RunContext.system(A, Role.WEBHOOK),                    HOST,    False, "system_not_granted"),
    (RunContext.task(A, "general"),                         HOST,    False, "system_not_granted"),
    (RunContext.knowledge(A),                               HOST,    False, "system_not_granted"),
    (RunContext.owner(A),                                   HOST,    False, "owner_not_granted"),
    (RunContext.dm(A, "dm:alice", "alice"),                 SESSION, True,  "member_session"),
    (RunContext.dm(A, "dm:alice", "alice", Role.ADMIN),     SESSION, False, "member_session_role"),
    (RunContext.group(A, "dm:alice", "alice"),              SESSION, False, "member_session"),
]
# fmt: on


@pytest.mark.parametrize(("ctx", "grants", "allowed", "rule"), GRANT_RULES)
def test_grant_rule_table(ctx: RunContext, grants: Grants | None, allowed: bool, rule: str) -> None:
    decision = decide(ctx, Action.ASSUME_ENVELOPE, AGENT, grants=grants)
    assert (decision.allowed, decision.rule) == (allowed, rule), decision.reason
    assert decision.allowed or decision.reason


def test_a_principals_label_ceiling_and_actor_patterns_bound_learned_messages() -> None:
    cron = RunContext.system(A, Role.CRON, channel="general")
    group = RunContext.group(A, "general", "ann")

    def label(ctx: RunContext, author: str, role: Role) -> str:
        target = Target(Scope.USER, author, author, role)
        return decide(ctx, Action.ASSERT_ROLE, target, labels=Role.MEMBER, grants=HOST).rule

    assert label(group, "ann", Role.MEMBER) == "message_role"
    assert label(group, "abe", Role.ADMIN) == "role_ceiling"  # above the principal's max_role
    assert label(group, "bob", Role.MEMBER) == "actor_not_granted"  # not an "a*" actor
    assert label(cron, "cron", Role.CRON) == "message_role"  # the admitted envelope's own

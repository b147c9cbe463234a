"""Principals (``remem.OwnerPrincipal``, ``HostPrincipal``, ``MemberSession``), the run
envelope's JSON form and ``remem.run_context``: the one way an adapter turns what it
authenticated into a ``RunContext`` (issue 12, "Define here what the next issues consume").

:data:`TABLE` is principal × envelope → the rule ``authz.decide`` names (``ok:<rule>``
allowed, else the refusal's rule, raised as ``Denied``). Then the envelope's form (round
trip for every kind, malformed envelopes → ``InvalidInput``), and ``Memory.for_principal``:
learned message labels capped by the principal's ``max_role``, envelopes by its grants.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from remem import (
    Denied,
    HostPrincipal,
    InvalidInput,
    MemberSession,
    Memory,
    Message,
    OwnerPrincipal,
    Role,
    RunContext,
    RunKind,
    Scope,
    envelope_from_json,
    run_context,
)
from remem.app.principal import Principal
from remem.policy.authz import pattern_matches
from remem.schema import from_json, json_schema, to_json

A = "yuko"
ALICE, BOB = "discord:100", "discord:200"
DM_ALICE, GENERAL = "discord:dm-100", "discord:general"


def env(kind: str, channel: str | None, actor: str | None, role: str, agent: str = A) -> Any:
    return {"agent": agent, "kind": kind, "channel": channel, "actor": actor, "role": role,
            "run_id": "run_test1"}  # fmt: skip


ENVELOPES: dict[str, dict[str, Any]] = {
    "dm_member": env("dm", "discord:dm-1", ALICE, "member"),
    "dm_admin": env("dm", "discord:dm-1", ALICE, "admin"),
    "dm_owner_role": env("dm", "discord:dm-1", ALICE, "owner"),
    "dm_unpaired": env("dm", "discord:dm-1", "discord:666", "unpaired"),
    "dm_other_agent": env("dm", "discord:dm-1", ALICE, "member", agent="kiko"),
    "group_slack_channel": env("group", "slack:C1", ALICE, "member"),
    "group_slack_actor": env("group", GENERAL, "slack:U1", "member"),
    "task": env("task", GENERAL, "task", "sop"),
    "agent_only": env("agent_only", None, "task", "sop"),
    "knowledge": env("knowledge", None, "task", "sop"),
    "cron": env("system", GENERAL, "cron", "cron"),
    "cron_slack": env("system", "slack:C1", "cron", "cron"),
    "webhook": env("system", None, "webhook", "webhook"),
    "owner": env("owner", None, "local:owner", "owner"),
    "session_dm": env("dm", DM_ALICE, ALICE, "member"),
    "session_dm_admin": env("dm", DM_ALICE, ALICE, "admin"),
    "session_dm_unpaired": env("dm", DM_ALICE, ALICE, "unpaired"),
    "session_other_member": env("dm", DM_ALICE, BOB, "member"),
    "session_as_group": env("group", DM_ALICE, ALICE, "member"),
    "session_other_agent": env("dm", DM_ALICE, ALICE, "member", agent="kiko"),
}

PRINCIPALS: dict[str, Principal] = {
    "owner": OwnerPrincipal(),
    # exact agent; discord channels and actors; up to admin; cron only
    "host": HostPrincipal((A,), ("discord:*",), ("discord:*",), Role.ADMIN, {Role.CRON}),
    # everything, members only, sop (tasks)
    "wide": HostPrincipal(("*",), ("*",), ("*",), Role.MEMBER, frozenset({Role.SOP})),
    # a prefix agent pattern, two channel patterns, a middle wildcard actor; owner runs
    "ownerhost": HostPrincipal(
        ("yu*",), ("discord:dm-*", "slack:*"), ("disc*:1*",), Role.MEMBER, owner=True
    ),
    "session": MemberSession(ALICE, A, DM_ALICE),
    # every pattern and system grant, but dm runs only (remem tokens create --kinds dm)
    "dmonly": HostPrincipal(
        ("*",),
        ("*",),
        ("*",),
        Role.MEMBER,
        frozenset({Role.SOP, Role.CRON}),
        owner=True,
        kinds=frozenset({RunKind.DM}),
    ),
}

OWNER_ROWS = {
    name: f"ok:granted_{'conversation' if e['kind'] in ('dm', 'group') else 'system'}"
    for name, e in ENVELOPES.items()
} | {"owner": "ok:granted_owner"}

# fmt: off
TABLE: dict[str, dict[str, str]] = {
    "owner": OWNER_ROWS,
    "host": {
        "dm_member": "ok:granted_conversation",      "dm_admin": "ok:granted_conversation",
        "dm_owner_role": "role_above_grant",         "dm_unpaired": "ok:granted_conversation",
        "dm_other_agent": "agent_not_granted",       "group_slack_channel": "channel_not_granted",
        "group_slack_actor": "actor_not_granted",    "task": "system_not_granted",
        "agent_only": "system_not_granted",          "knowledge": "system_not_granted",
        "cron": "ok:granted_system",                 "cron_slack": "channel_not_granted",
        "webhook": "system_not_granted",             "owner": "owner_not_granted",
        "session_dm": "ok:granted_conversation",     "session_dm_admin": "ok:granted_conversation",
    },
    "wide": {
        "dm_member": "ok:granted_conversation",      "dm_admin": "role_above_grant",
        "dm_owner_role": "role_above_grant",         "dm_unpaired": "ok:granted_conversation",
        "dm_other_agent": "ok:granted_conversation",
        "group_slack_channel": "ok:granted_conversation",
        "group_slack_actor": "ok:granted_conversation", "task": "ok:granted_system",
        "agent_only": "ok:granted_system",           "knowledge": "ok:granted_system",
        "cron": "system_not_granted",                "cron_slack": "system_not_granted",
        "webhook": "system_not_granted",             "owner": "owner_not_granted",
    },
    "ownerhost": {
        "dm_member": "ok:granted_conversation",      "dm_admin": "role_above_grant",
        "dm_unpaired": "actor_not_granted",          "dm_other_agent": "agent_not_granted",
        "group_slack_channel": "ok:granted_conversation",
        "group_slack_actor": "channel_not_granted",  "task": "channel_not_granted",
        "agent_only": "system_not_granted",          "knowledge": "system_not_granted",
        "cron": "channel_not_granted",               "webhook": "system_not_granted",
        "owner": "ok:granted_owner",                 "session_dm": "ok:granted_conversation",
        "session_other_member": "actor_not_granted",
    },
    "session": {
        "session_dm": "ok:member_session",           "session_dm_admin": "member_session_role",
        "session_dm_unpaired": "member_session_role", "session_other_member": "member_session",
        "session_as_group": "member_session",        "session_other_agent": "member_session",
        "dm_member": "member_session",               "task": "member_session",
        "agent_only": "member_session",              "cron": "member_session",
        "owner": "member_session",                   "knowledge": "member_session",
    },
    "dmonly": {
        "dm_member": "ok:granted_conversation",      "dm_admin": "role_above_grant",
        "group_slack_channel": "kind_not_granted",   "task": "kind_not_granted",
        "agent_only": "kind_not_granted",            "knowledge": "kind_not_granted",
        "cron": "kind_not_granted",                  "owner": "kind_not_granted",
    },
}
# fmt: on
CELLS = [(p, e, rule) for p, row in TABLE.items() for e, rule in row.items()]


@pytest.mark.parametrize(("principal", "envelope", "expected"), CELLS)
def test_principal_by_envelope(principal: str, envelope: str, expected: str) -> None:
    """Each cell through run_context (the adapters' one door) and through decide."""
    from remem.policy.authz import Action, Target, decide

    grants = PRINCIPALS[principal].grants
    data = ENVELOPES[envelope]
    decision = decide(envelope_from_json(data), Action.ASSUME_ENVELOPE, Target(Scope.AGENT),
                      grants=grants)  # fmt: skip
    assert decision.allowed or decision.reason
    if expected.startswith("ok:"):
        assert (decision.allowed, decision.rule) == (True, expected[3:])
        assert run_context(PRINCIPALS[principal], data) == envelope_from_json(data)
        return
    assert (decision.allowed, decision.rule) == (False, expected), decision.reason
    with pytest.raises(Denied) as err:
        run_context(PRINCIPALS[principal], data)
    assert err.value.rule == expected
    assert "grant" in str(err.value) or "session" in str(err.value)


def test_the_table_covers_every_run_kind_for_every_principal() -> None:
    for principal, row in TABLE.items():
        kinds = {ENVELOPES[e]["kind"] for e in row}
        assert kinds == {k.value for k in RunKind}, principal


def test_a_context_built_in_process_goes_through_the_same_checks() -> None:
    host = PRINCIPALS["host"]
    ctx = RunContext.dm(A, "discord:dm-1", ALICE, role=Role.ADMIN)
    assert run_context(host, ctx) == ctx
    with pytest.raises(Denied) as err:
        run_context(host, RunContext.owner(A))
    assert err.value.rule == "owner_not_granted"
    # A combination no constructor makes is not an envelope, even built by hand.
    forged = RunContext(agent=A, kind=RunKind.TASK, role=Role.ADMIN, actor="task", channel=GENERAL)
    with pytest.raises(InvalidInput, match="'role'"):
        run_context(OwnerPrincipal(), forged)
    with pytest.raises(InvalidInput, match="principal must be"):
        run_context("owner", ctx)  # type: ignore[arg-type]


# fmt: off
PATTERNS = [
    ("*", "discord:1", True), ("*", "", True), ("discord:1", "discord:1", True),
    ("discord:1", "discord:12", False), ("discord:*", "discord:", True),
    ("discord:*", "slack:1", False), ("*:dm-*", "discord:dm-1", True),
    ("*:dm-*", "discord:general", False), ("a*b*c", "abc", True), ("a*b*c", "acb", False),
    ("a*b*c", "aXbYbZc", True), ("a*a", "a", False), ("*1", "discord:21", True),
    ("?", "x", False), ("[ab]", "a", False), ("[ab]", "[ab]", True), ("d*d", "dd", True),
]
# fmt: on


@pytest.mark.parametrize(("pattern", "value", "matches"), PATTERNS)
def test_star_is_the_only_wildcard(pattern: str, value: str, matches: bool) -> None:
    assert pattern_matches(pattern, value) is matches


def test_principals_refuse_bad_grants() -> None:
    with pytest.raises(InvalidInput, match="tuple of patterns"):
        HostPrincipal("*", ("*",), ("*",))  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="max_role"):
        HostPrincipal(("*",), ("*",), ("*",), Role.CRON)
    with pytest.raises(InvalidInput, match="cron, sop or webhook"):
        HostPrincipal(("*",), ("*",), ("*",), system={Role.ADMIN})
    with pytest.raises(InvalidInput, match="pattern"):
        HostPrincipal(("a b",), ("*",), ("*",))
    with pytest.raises(InvalidInput):
        MemberSession(ALICE, "../x", DM_ALICE)
    host = HostPrincipal(["y*"], ["*"], ["*"], system=["cron"])  # type: ignore[arg-type]
    assert host.agents == ("y*",) and host.system == frozenset({Role.CRON})
    assert (OwnerPrincipal().max_role, host.max_role) == (Role.OWNER, Role.MEMBER)
    assert PRINCIPALS["session"].max_role is Role.MEMBER


# -- the envelope's one JSON form --------------------------------------------------------

KINDS = [
    RunContext.dm(A, "discord:dm-1", ALICE),
    RunContext.dm(A, "discord:dm-1", ALICE, role=Role.UNPAIRED),
    RunContext.group(A, GENERAL, ALICE, role=Role.ADMIN),
    RunContext.task(A, GENERAL),
    RunContext.agent_only(A),
    RunContext.knowledge(A),
    RunContext.system(A, Role.CRON, channel=GENERAL),
    RunContext.system(A, Role.WEBHOOK),
    RunContext.owner(A),
]


@pytest.mark.parametrize("ctx", KINDS, ids=lambda c: f"{c.kind.value}-{c.role.value}")
def test_every_kind_round_trips_through_its_json_form(ctx: RunContext) -> None:
    data = json.loads(json.dumps(ctx.to_json()))
    assert list(data) == ["agent", "kind", "channel", "actor", "role", "run_id"]
    assert envelope_from_json(data) == ctx
    assert from_json(RunContext, data) == ctx and to_json(ctx) == data
    jsonschema.validate(data, json_schema(RunContext))


def test_a_null_run_id_is_a_fresh_run() -> None:
    data = RunContext.task(A, GENERAL).to_json() | {"run_id": None}
    first, second = envelope_from_json(data), envelope_from_json(data)
    assert first.run_id.startswith("run_") and first.run_id != second.run_id


GOOD = RunContext.group(A, GENERAL, ALICE).to_json()

# fmt: off
MALFORMED: list[tuple[str, Any, str]] = [
    ("not an object",   ["yuko"],                                    "JSON object"),
    ("missing key",     {k: v for k, v in GOOD.items() if k != "role"}, "missing: \\['role'\\]"),
    ("unknown key",     GOOD | {"admin": True},                     "unknown: \\['admin'\\]"),
    ("agent not str",   GOOD | {"agent": 5},                        "'agent': must be a string"),
    ("agent path",      GOOD | {"agent": "../x"},                   "agent name"),
    ("role bool",       GOOD | {"role": True},                      "'role': must be one of"),
    ("kind null",       GOOD | {"kind": None},                      "'kind': must be one of"),
    ("unknown kind",    GOOD | {"kind": "root"},                    "'kind': 'root' is not one of"),
    ("unknown role",    GOOD | {"role": "god"},                     "'role': 'god' is not one of"),
    ("channel number",  GOOD | {"channel": 3},                      "'channel': must be a string"),
    ("actor space",     GOOD | {"actor": "discord: 1"},             "'actor'"),
    ("run_id list",     GOOD | {"run_id": ["r"]},                   "'run_id'"),
    ("group no channel", GOOD | {"channel": None},                  "'channel': a 'group' run"),
    ("dm no actor",     GOOD | {"kind": "dm", "actor": None},       "'actor': a 'dm' run"),
    ("dm as cron",      GOOD | {"kind": "dm", "role": "cron"},      "'role'.*use kind 'system'"),
    ("task as admin",   GOOD | {"kind": "task", "role": "admin"},   "'role': a 'task' run"),
    ("task as alice",   GOOD | {"kind": "task", "role": "sop"},     "'actor': a 'task' run"),
    ("agent_only chan", {**GOOD, "kind": "agent_only", "role": "sop", "actor": "task"},
                                                                    "'channel': a 'agent_only'"),
    ("knowledge admin", {**GOOD, "kind": "knowledge", "channel": None, "actor": "task",
                         "role": "admin"},                          "'role': a 'knowledge'"),
    ("system member",   GOOD | {"kind": "system", "role": "member"}, "'role': a 'system'"),
    ("system actor",    GOOD | {"kind": "system", "role": "cron"},  "'actor': a 'system'"),
    ("owner as alice",  {**GOOD, "kind": "owner", "role": "owner", "channel": None},
                                                                    "'actor': a 'owner'"),
    ("owner channel",   {**GOOD, "kind": "owner", "role": "owner", "actor": "local:owner"},
                                                                    "'channel': a 'owner'"),
    ("owner as admin",  {**GOOD, "kind": "owner", "role": "admin"}, "'role': a 'owner'"),
]
# fmt: on


@pytest.mark.parametrize(("case", "data", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_envelopes_are_invalid_input_naming_the_field(
    case: str, data: Any, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        envelope_from_json(data)
    with pytest.raises(InvalidInput):
        run_context(OwnerPrincipal(), data)


# -- Memory.for_principal: grants on every envelope, labels capped by max_role ---------------

OPERATIONAL = "From now on, the weekly report pulls from the sales_v3 table."


@pytest.fixture
def mem(tmp_path: Path) -> Memory:
    return Memory.open(tmp_path / "data")


def _agent_notes(mem: Memory) -> list[str]:
    return [n.text for n in mem.list(RunContext.owner(A), scope="agent", status=None)]


def test_a_member_limited_host_cannot_teach_procedures_by_labelling_messages_admin(
    mem: Memory,
) -> None:
    host = HostPrincipal((A,), ("discord:*",), ("discord:*",), Role.MEMBER)
    ctx = run_context(host, RunContext.group(A, GENERAL, ALICE).to_json())
    slice_ = [Message(BOB, Role.ADMIN, OPERATIONAL)]
    with pytest.raises(Denied) as err:
        mem.for_principal(host).learn(ctx, slice_)
    assert err.value.rule == "role_ceiling" and "nothing was learned" in str(err.value)
    assert _agent_notes(mem) == []
    # The same slice from a host trusted with admins teaches the procedure: the cap did it.
    admins = HostPrincipal((A,), ("discord:*",), ("discord:*",), Role.ADMIN)
    report = mem.for_principal(admins).learn(ctx, slice_)
    assert [n.kind.value for n in report.learned] == ["procedure"]
    assert len(_agent_notes(mem)) == 1


def test_a_hosts_learn_asserts_only_authors_its_actor_patterns_cover(mem: Memory) -> None:
    host = HostPrincipal((A,), ("discord:*",), ("discord:1*",), Role.ADMIN)
    ctx = RunContext.group(A, GENERAL, ALICE)
    with pytest.raises(Denied) as err:
        mem.for_principal(host).learn(ctx, [Message(BOB, Role.MEMBER, "I prefer tea.")])
    assert err.value.rule == "actor_not_granted"
    report = mem.for_principal(host).learn(ctx, [Message(ALICE, Role.MEMBER, "I prefer tea.")])
    assert [n.scope_id for n in report.learned + report.pending] == [ALICE]


def test_a_view_admits_only_the_envelopes_its_principal_may_assume(mem: Memory) -> None:
    host = HostPrincipal((A,), ("discord:*",), ("discord:*",), Role.MEMBER, {Role.CRON})
    view = mem.for_principal(host)
    forged = {
        "agent_not_granted": RunContext.dm("kiko", "discord:dm-1", ALICE),
        "owner_not_granted": RunContext.owner(A),
        "role_above_grant": RunContext.group(A, GENERAL, ALICE, role=Role.ADMIN),
        "system_not_granted": RunContext.task(A, GENERAL),
        "channel_not_granted": RunContext.group(A, "slack:C1", ALICE),
    }
    for rule, ctx in forged.items():
        with pytest.raises(Denied) as err:
            view.recall(ctx, "tea")
        assert err.value.rule == rule
        mem.recall(ctx, "tea")  # the full-trust Memory it came from is unchanged
    # A cron run is granted although members are the highest role it may assert.
    cron = RunContext.system(A, Role.CRON, channel=GENERAL)
    assert view.remember(cron, "Backups run nightly.", scope="agent").scope is Scope.AGENT
    assert view.remember(RunContext.dm(A, "discord:dm-1", ALICE), "I like tea.").text


def test_a_member_session_view_is_its_own_dm_as_a_member(mem: Memory) -> None:
    session = MemberSession(ALICE, A, DM_ALICE)
    view = mem.for_principal(session)
    note = view.remember(session.envelope(), "I prefer tea.", scope="user")
    assert view.get(session.envelope(), note.id).id == note.id
    for ctx, rule in [
        (RunContext.dm(A, DM_ALICE, ALICE, role=Role.ADMIN), "member_session_role"),
        (RunContext.group(A, GENERAL, ALICE), "member_session"),
        (RunContext.dm(A, DM_ALICE, BOB), "member_session"),
    ]:
        with pytest.raises(Denied) as err:
            view.list(ctx)
        assert err.value.rule == rule
    with pytest.raises(InvalidInput, match="already a principal's view"):
        view.for_principal(OwnerPrincipal())


def test_closing_a_view_leaves_the_memory_open(mem: Memory) -> None:
    with mem.for_principal(OwnerPrincipal()) as view:
        view.remember(RunContext.owner(A), "Uses metric units.", scope="agent")
    assert _agent_notes(mem) == ["Uses metric units."]
    with pytest.raises(InvalidInput, match="principal must be"):
        mem.for_principal("host")  # type: ignore[arg-type]

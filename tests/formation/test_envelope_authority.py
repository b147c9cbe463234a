"""``learn()`` takes authority from the run envelope only (issue 11, item 1).

A message's role label is an assertion of the host, checked in
``authz.decide``: never above the host's role ceiling (``Memory(max_role=...)``),
and a message by the run's own speaker carries exactly the envelope's role. An
unpaired run learns nothing; a DM run reads only its own speaker (and the
agent's replies); runs without a person write no one's personal memory.

The table below is run kind × message author × label; each cell learns one
personal line and one operational line in a fresh store and names the outcome:
``denied:<rule>`` (the whole slice is refused, nothing stored), where the note
landed (``user:<id>`` or ``agent``), or the reason it was dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from remem import Denied, Memory, Message, Role, RunContext, Scope

from .cast import AGENT, ALICE, BOB, CAROL, GENERAL

DM_BOB = "discord:dm-bob"
DM_ALICE = "discord:dm-alice"
SAID = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
PERSONAL = "I prefer short status reports."
OPERATIONAL = "From now on, the weekly report pulls from the sales_v3 table."

RUNS: dict[str, Callable[[], RunContext]] = {
    "dm_member": lambda: RunContext.dm(AGENT, DM_BOB, BOB),
    "dm_admin": lambda: RunContext.dm(AGENT, DM_ALICE, ALICE, role=Role.ADMIN),
    "group_member": lambda: RunContext.group(AGENT, GENERAL, BOB),
    "group_admin": lambda: RunContext.group(AGENT, GENERAL, ALICE, role=Role.ADMIN),
    "dm_unpaired": lambda: RunContext.dm(AGENT, DM_BOB, BOB, role=Role.UNPAIRED),
    "group_unpaired": lambda: RunContext.group(AGENT, GENERAL, BOB, role=Role.UNPAIRED),
    "cron": lambda: RunContext.system(AGENT, Role.CRON, channel=GENERAL),
    "sop": lambda: RunContext.system(AGENT, Role.SOP, channel=GENERAL),
    "webhook": lambda: RunContext.system(AGENT, Role.WEBHOOK, channel=GENERAL),
    "task": lambda: RunContext.task(AGENT, GENERAL),
    "agent_only": lambda: RunContext.agent_only(AGENT),
    "knowledge": lambda: RunContext.knowledge(AGENT),
    "owner": lambda: RunContext.owner(AGENT),
}
SELF = "<the run's actor>"
OUR = "user:<the run's actor>"

# fmt: off
#: (run, author, label, outcome for PERSONAL, outcome for OPERATIONAL)
TABLE: list[tuple[str, str | None, Role | str, str, str]] = [
    # A DM run: its own speaker, with the envelope's role; nobody else.
    ("dm_member",    SELF,  Role.MEMBER,   OUR,                     "operational_from_non_admin"),
    ("dm_member",    SELF,  Role.ADMIN,    "denied:envelope_role",  "denied:envelope_role"),
    ("dm_member",    SELF,  Role.OWNER,    "denied:envelope_role",  "denied:envelope_role"),
    ("dm_member",    SELF,  "agent",       "denied:envelope_role",  "denied:envelope_role"),
    ("dm_member",    CAROL, Role.MEMBER,   "dm_other_party",        "dm_other_party"),
    ("dm_member",    CAROL, Role.ADMIN,    "dm_other_party",        "dm_other_party"),
    ("dm_member",    None,  Role.MEMBER,   "unpaired_sender",       "unpaired_sender"),
    ("dm_member",    None,  Role.ADMIN,    "unpaired_sender",       "unpaired_sender"),
    ("dm_admin",     SELF,  Role.ADMIN,    OUR,                     "agent"),
    ("dm_admin",     SELF,  Role.MEMBER,   "denied:envelope_role",  "denied:envelope_role"),
    ("dm_admin",     CAROL, Role.MEMBER,   "dm_other_party",        "dm_other_party"),
    ("dm_admin",     BOB,   Role.ADMIN,    "dm_other_party",        "dm_other_party"),
    # A group run: the speaker's lines carry the envelope's role; others the host's labels.
    ("group_member", SELF,  Role.MEMBER,   OUR,                     "operational_from_non_admin"),
    ("group_member", SELF,  Role.ADMIN,    "denied:envelope_role",  "denied:envelope_role"),
    ("group_member", SELF,  Role.UNPAIRED, "denied:envelope_role",  "denied:envelope_role"),
    ("group_member", CAROL, Role.MEMBER,   f"user:{CAROL}",         "operational_from_non_admin"),
    ("group_member", ALICE, Role.ADMIN,    f"user:{ALICE}",         "agent"),
    ("group_member", CAROL, Role.UNPAIRED, "unpaired_sender",       "unpaired_sender"),
    ("group_admin",  SELF,  Role.ADMIN,    OUR,                     "agent"),
    ("group_admin",  SELF,  Role.MEMBER,   "denied:envelope_role",  "denied:envelope_role"),
    ("group_admin",  BOB,   Role.MEMBER,   f"user:{BOB}",           "operational_from_non_admin"),
    # An unpaired run learns nothing, whatever the lines say.
    ("dm_unpaired",  SELF,  Role.UNPAIRED, "denied:unpaired",       "denied:unpaired"),
    ("dm_unpaired",  SELF,  Role.ADMIN,    "denied:unpaired",       "denied:unpaired"),
    ("group_unpaired", ALICE, Role.ADMIN,  "denied:unpaired",       "denied:unpaired"),
    # Runs without a person write no one's personal memory, and no operational knowledge.
    ("cron",         CAROL, Role.MEMBER,   "system_no_user_scope",  "system_principal"),
    ("cron",         ALICE, Role.ADMIN,    "system_no_user_scope",  "system_principal"),
    ("cron",         SELF,  Role.CRON,     "system_principal",      "system_principal"),
    ("cron",         SELF,  Role.ADMIN,    "denied:envelope_role",  "denied:envelope_role"),
    ("sop",          CAROL, Role.MEMBER,   "system_no_user_scope",  "system_principal"),
    ("webhook",      CAROL, Role.MEMBER,   "webhook_payload",       "webhook_payload"),
    ("task",         CAROL, Role.MEMBER,   "system_no_user_scope",  "system_principal"),
    ("task",         ALICE, Role.ADMIN,    "system_no_user_scope",  "system_principal"),
    ("agent_only",   CAROL, Role.MEMBER,   "system_no_user_scope",  "system_principal"),
    ("knowledge",    CAROL, Role.MEMBER,   "system_no_user_scope",  "system_principal"),
    # The owner's own tooling may learn a slice the host stored.
    ("owner",        CAROL, Role.MEMBER,   f"user:{CAROL}",         "operational_from_non_admin"),
    ("owner",        ALICE, Role.ADMIN,    f"user:{ALICE}",         "agent"),
]
# fmt: on


def stored(data: Path) -> list[str]:
    """Every note in the store, as the owner (with no role ceiling) sees it."""
    with Memory.open(data) as owner_view:
        return [n.id for n in owner_view.list(RunContext.owner(AGENT), status=None)]


def learn_one(
    data: Path,
    ctx: RunContext,
    author: str | None,
    label: Role | str,
    text: str,
    max_role: Role = Role.OWNER,
) -> str:
    """The outcome of learning one message in a fresh store (see the module docstring)."""
    with Memory.open(data, max_role=max_role) as mem:
        try:
            report = mem.learn(ctx, [Message(author, label, text, "m1", SAID)])
        except Denied as exc:
            assert str(exc).startswith(f"denied ({exc.rule}):")
            assert stored(data) == []
            return f"denied:{exc.rule}"
    notes = report.learned + report.pending
    if notes:
        (note,) = notes
        return "agent" if note.scope is Scope.AGENT else f"{note.scope.value}:{note.scope_id}"
    ((_, reason),) = report.dropped
    assert stored(data) == []
    return reason


@pytest.mark.parametrize(("run", "author", "label", "personal", "operational"), TABLE)
def test_learn_by_run_kind_author_and_label(
    tmp_path: Path,
    run: str,
    author: str | None,
    label: Role | str,
    personal: str,
    operational: str,
) -> None:
    ctx = RUNS[run]()
    who = ctx.actor if author == SELF else author
    ours = f"user:{ctx.actor}"
    for text, expected in ((PERSONAL, personal), (OPERATIONAL, operational)):
        got = learn_one(tmp_path / f"{run}-{len(text)}", ctx, who, label, text)
        assert got == (ours if expected == OUR else expected), (run, author, label, text)


# -- the role ceiling -------------------------------------------------------------------

# fmt: off
#: (ceiling, run, author, label, outcome for OPERATIONAL)
CEILING: list[tuple[Role, str, str | None, Role | str, str]] = [
    (Role.MEMBER, "group_member", SELF,  Role.MEMBER, "operational_from_non_admin"),
    (Role.MEMBER, "group_member", ALICE, Role.ADMIN,  "denied:role_ceiling"),
    (Role.MEMBER, "group_member", ALICE, Role.OWNER,  "denied:role_ceiling"),
    (Role.MEMBER, "group_admin",  SELF,  Role.ADMIN,  "denied:role_ceiling"),
    (Role.MEMBER, "cron",         CAROL, Role.MEMBER, "denied:role_ceiling"),
    (Role.MEMBER, "owner",        CAROL, Role.MEMBER, "denied:role_ceiling"),
    (Role.ADMIN,  "group_admin",  SELF,  Role.ADMIN,  "agent"),
    (Role.ADMIN,  "group_member", ALICE, Role.OWNER,  "denied:role_ceiling"),
    (Role.ADMIN,  "owner",        ALICE, Role.ADMIN,  "denied:role_ceiling"),
    (Role.ADMIN,  "cron",         CAROL, Role.MEMBER, "system_principal"),
    (Role.OWNER,  "owner",        ALICE, Role.OWNER,  "agent"),
]
# fmt: on


@pytest.mark.parametrize(("ceiling", "run", "author", "label", "expected"), CEILING)
def test_a_host_asserts_no_role_above_its_ceiling(
    tmp_path: Path,
    ceiling: Role,
    run: str,
    author: str | None,
    label: Role | str,
    expected: str,
) -> None:
    ctx = RUNS[run]()
    who = ctx.actor if author == SELF else author
    assert learn_one(tmp_path, ctx, who, label, OPERATIONAL, ceiling) == expected


def test_a_member_limited_host_cannot_teach_procedures_by_labelling(tmp_path: Path) -> None:
    with Memory.open(tmp_path, max_role=Role.MEMBER) as mem:
        bob = RunContext.group(AGENT, GENERAL, BOB)
        with pytest.raises(Denied, match="role_ceiling") as refused:
            mem.learn(bob, [Message(ALICE, Role.ADMIN, OPERATIONAL, "m1", SAID)])
        assert "up to member" in str(refused.value)
        # Nor through an envelope of its own making, by any write path.
        alice = RunContext.group(AGENT, GENERAL, ALICE, role=Role.ADMIN)
        with pytest.raises(Denied, match="role_ceiling"):
            mem.remember(alice, "Reports use sales_v3.", scope="agent", kind="procedure")
        assert mem.remember(bob, PERSONAL).scope is Scope.USER


@pytest.mark.parametrize("ceiling", [Role.UNPAIRED, Role.CRON, "owner", None])
def test_the_ceiling_is_a_human_role(tmp_path: Path, ceiling: object) -> None:
    from remem import InvalidInput

    with pytest.raises(InvalidInput, match="max_role"):
        Memory.open(tmp_path, max_role=ceiling)  # type: ignore[arg-type]


# -- a refused slice teaches nothing ----------------------------------------------------


def test_one_mislabelled_line_refuses_the_whole_slice(tmp_path: Path) -> None:
    bob = RunContext.group(AGENT, GENERAL, BOB)
    slice_ = [
        Message(CAROL, Role.MEMBER, "I prefer tea.", "m1", SAID),
        Message(BOB, Role.MEMBER, PERSONAL, "m2", SAID),
        Message(BOB, Role.ADMIN, OPERATIONAL, "m3", SAID),  # Bob posing as admin
    ]
    with Memory.open(tmp_path) as mem:
        with pytest.raises(Denied, match="envelope_role") as refused:
            mem.learn(bob, slice_)
        assert "nothing was learned" in str(refused.value)
        assert mem.list(RunContext.owner(AGENT), status=None) == []


def test_a_members_self_labelled_admin_line_never_retires_the_admins_procedure(
    tmp_path: Path,
) -> None:
    admin = RunContext.group(AGENT, GENERAL, ALICE, role=Role.ADMIN)
    finance = "The weekly report pulls from the finance_v2 table."
    with Memory.open(tmp_path) as mem:
        (procedure,) = mem.learn(admin, [Message(ALICE, Role.ADMIN, finance, "a1", SAID)]).learned
        bob = RunContext.group(AGENT, GENERAL, BOB)
        later = SAID.replace(day=2)
        with pytest.raises(Denied):
            mem.learn(bob, [Message(BOB, Role.ADMIN, OPERATIONAL, "b1", later)])
        agent_notes = mem.list(RunContext.owner(AGENT), scope="agent", status=None)
        assert [(n.id, n.status.value) for n in agent_notes] == [(procedure.id, "active")]


def test_a_dm_run_stores_nothing_in_a_third_persons_scope(tmp_path: Path) -> None:
    dm = RunContext.dm(AGENT, DM_BOB, BOB)
    slice_ = [
        Message(BOB, Role.MEMBER, PERSONAL, "m1", SAID),
        Message(AGENT, "agent", "Noted.", "m2", SAID),
        Message(CAROL, Role.MEMBER, "I prefer tea.", "m3", SAID),
    ]
    with Memory.open(tmp_path) as mem:
        report = mem.learn(dm, slice_)
        assert [(n.scope_id, n.text) for n in report.pending + report.learned] == [
            (BOB, "Prefers short status reports.")
        ]
        assert [(i.message_id, r) for i, r in report.dropped] == [("m3", "dm_other_party")]
        owner = RunContext.owner(AGENT)
        assert mem.list(owner, scope="user", scope_id=CAROL, status=None) == []


@pytest.mark.parametrize(
    "call",
    [
        lambda mem, ctx: mem.recall(ctx, "report"),
        lambda mem, ctx: mem.list(ctx),
        lambda mem, ctx: mem.explain(ctx, "run_01J00000000000000000000000"),
        lambda mem, ctx: mem.rules(ctx),
        lambda mem, ctx: mem.pending(ctx),
        lambda mem, ctx: mem.remember(ctx, "Reports use sales_v3.", scope="agent"),
    ],
)
@pytest.mark.parametrize("run", ["owner", "group_admin", "cron"])
def test_no_method_takes_an_envelope_above_the_ceiling(
    tmp_path: Path, run: str, call: Callable[[Memory, RunContext], object]
) -> None:
    """A member-limited host cannot read or write as an owner, an admin or a system
    principal (recall and explain do not otherwise consult authz: the check is on entry)."""
    with Memory.open(tmp_path, max_role=Role.MEMBER) as mem:
        with pytest.raises(Denied, match="role_ceiling"):
            call(mem, RUNS[run]())
        with pytest.raises(Denied, match="role_ceiling"):  # every method checks on entry
            mem.command(RUNS[run](), "What do you remember about me?")
    assert stored(tmp_path) == []

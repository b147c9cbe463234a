"""Authorization as a table, exercised through the public ``Memory`` methods.

Each row of :data:`TABLE` is one principal and one group of actions; each
column is one target. Every cell becomes one test that builds a fresh target
note in a shared store, performs the action as that principal and checks the
outcome:

``ok``      the call succeeds (for ``list``: the note is listed)
``denied``  ``Denied`` (the principal sees the target but may not act on it)
``nf``      ``NotFound`` (the target is invisible: same answer as a missing id)
``-``       not applicable (e.g. system runs have no personal scope)

Columns (targets):

``AG``  an agent-wide note (written by the owner)
``CH``  a note in the principal's current channel written by the principal
        itself (``owner`` and ``agent_only`` have no channel: #general); for
        ``create``, a new note in that channel
``CO``  a note in that same channel written by someone else (Bob)
``OC``  a note in another channel (#random, written by Bob there)
``OU``  a note in the principal's own user scope
``XU``  a note in another person's (Bob's) user scope

Action groups: ``create`` = remember; ``get``; ``list`` = list(scope, scope_id);
``change`` = correct, pin, unpin, disable, enable, forget; ``review`` =
approve, reject (of a pending note); ``channel_policy`` = set_channel_policy
on CH's or OC's channel; ``rules`` = set_rule; ``compact``; ``set_kind`` =
set_channel_kind of CH's or OC's channel (to the kind it has). Principal ``dm_on_group``
is a DM envelope on a channel recorded as a group (rule ``channel_kind``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from remem import Denied, Memory, NotFound, Role, RunContext, RunKind, Status
from remem.core.ids import new_id
from remem.core.model import Note

OK, DENIED, NF, NA = "ok", "denied", "nf", "-"

COLUMNS = ("AG", "CH", "CO", "OC", "OU", "XU")

# fmt: off
TABLE: list[tuple[str, str, str, str, str, str, str, str]] = [
    # principal    action            AG      CH      CO      OC      OU      XU
    ("owner",      "create",         OK,     OK,     NA,     OK,     NA,     OK),
    ("owner",      "get",            OK,     OK,     OK,     OK,     NA,     OK),
    ("owner",      "list",           OK,     OK,     OK,     OK,     NA,     OK),
    ("owner",      "change",         OK,     OK,     OK,     OK,     NA,     OK),
    ("owner",      "review",         OK,     OK,     OK,     OK,     NA,     OK),
    ("owner",      "channel_policy", NA,     OK,     NA,     OK,     NA,     NA),
    ("owner",      "rules",          OK,     NA,     NA,     NA,     NA,     NA),
    ("owner",      "compact",        OK,     NA,     NA,     NA,     NA,     NA),
    ("owner",      "set_kind",       NA,     OK,     NA,     OK,     NA,     NA),

    ("admin",      "create",         OK,     OK,     NA,     OK,     OK,     OK),
    ("admin",      "get",            OK,     OK,     OK,     OK,     OK,     OK),
    ("admin",      "list",           OK,     OK,     OK,     OK,     OK,     OK),
    ("admin",      "change",         OK,     OK,     OK,     OK,     OK,     OK),
    ("admin",      "review",         OK,     OK,     OK,     OK,     OK,     OK),
    ("admin",      "channel_policy", NA,     OK,     NA,     OK,     NA,     NA),
    ("admin",      "rules",          OK,     NA,     NA,     NA,     NA,     NA),
    ("admin",      "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
    ("admin",      "set_kind",       NA,     OK,     NA,     OK,     NA,     NA),

    ("admin_dm",   "create",         OK,     OK,     NA,     OK,     OK,     OK),
    ("admin_dm",   "get",            OK,     OK,     OK,     OK,     OK,     OK),
    ("admin_dm",   "list",           OK,     OK,     OK,     OK,     OK,     OK),
    ("admin_dm",   "change",         OK,     OK,     OK,     OK,     OK,     OK),
    ("admin_dm",   "review",         OK,     OK,     OK,     OK,     OK,     OK),
    ("admin_dm",   "channel_policy", NA,     OK,     NA,     OK,     NA,     NA),
    ("admin_dm",   "rules",          OK,     NA,     NA,     NA,     NA,     NA),
    ("admin_dm",   "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
    ("admin_dm",   "set_kind",       NA,     OK,     NA,     OK,     NA,     NA),

    ("member",     "create",         DENIED, OK,     NA,     DENIED, OK,     DENIED),
    ("member",     "get",            OK,     OK,     OK,     NF,     OK,     NF),
    ("member",     "list",           OK,     OK,     OK,     DENIED, OK,     DENIED),
    ("member",     "change",         DENIED, OK,     DENIED, NF,     OK,     NF),
    ("member",     "review",         DENIED, DENIED, DENIED, NF,     OK,     NF),
    ("member",     "channel_policy", NA,     DENIED, NA,     DENIED, NA,     NA),
    ("member",     "rules",          DENIED, NA,     NA,     NA,     NA,     NA),
    ("member",     "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
    ("member",     "set_kind",       NA,     DENIED, NA,     DENIED, NA,     NA),

    ("steward",    "create",         DENIED, OK,     NA,     DENIED, OK,     DENIED),
    ("steward",    "get",            OK,     OK,     OK,     NF,     OK,     NF),
    ("steward",    "list",           OK,     OK,     OK,     DENIED, OK,     DENIED),
    ("steward",    "change",         DENIED, OK,     OK,     NF,     OK,     NF),
    ("steward",    "review",         DENIED, OK,     OK,     NF,     OK,     NF),
    ("steward",    "channel_policy", NA,     OK,     NA,     DENIED, NA,     NA),
    ("steward",    "rules",          DENIED, NA,     NA,     NA,     NA,     NA),
    ("steward",    "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
    ("steward",    "set_kind",       NA,     DENIED, NA,     DENIED, NA,     NA),

    *[
        row
        for system in ("cron", "sop", "webhook", "task")
        for row in [
            (system, "create",         OK,     OK,     NA,     DENIED, NA,     DENIED),
            (system, "get",            OK,     OK,     OK,     NF,     NA,     NF),
            (system, "list",           OK,     OK,     OK,     DENIED, NA,     DENIED),
            (system, "change",         DENIED, OK,     DENIED, NF,     NA,     NF),
            (system, "review",         DENIED, DENIED, DENIED, NF,     NA,     NF),
            (system, "channel_policy", NA,     DENIED, NA,     DENIED, NA,     NA),
            (system, "rules",          DENIED, NA,     NA,     NA,     NA,     NA),
            (system, "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
            (system, "set_kind",       NA,     DENIED, NA,     DENIED, NA,     NA),
        ]
    ],

    ("agent_only", "create",         OK,     DENIED, NA,     DENIED, NA,     DENIED),
    ("agent_only", "get",            OK,     NA,     NF,     NF,     NA,     NF),
    ("agent_only", "list",           OK,     NA,     DENIED, DENIED, NA,     DENIED),
    ("agent_only", "change",         DENIED, NA,     NF,     NF,     NA,     NF),
    ("agent_only", "review",         DENIED, NA,     NF,     NF,     NA,     NF),
    ("agent_only", "channel_policy", NA,     DENIED, NA,     DENIED, NA,     NA),
    ("agent_only", "rules",          DENIED, NA,     NA,     NA,     NA,     NA),
    ("agent_only", "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
    ("agent_only", "set_kind",       NA,     DENIED, NA,     DENIED, NA,     NA),

    ("unpaired",   "create",         DENIED, DENIED, NA,     DENIED, DENIED, DENIED),
    ("unpaired",   "get",            NF,     NA,     NF,     NF,     NF,     NF),
    ("unpaired",   "list",           DENIED, NA,     DENIED, DENIED, DENIED, DENIED),
    ("unpaired",   "change",         NF,     NA,     NF,     NF,     NF,     NF),
    ("unpaired",   "review",         NF,     NA,     NF,     NF,     NF,     NF),
    ("unpaired",   "channel_policy", NA,     DENIED, NA,     DENIED, NA,     NA),
    ("unpaired",   "rules",          DENIED, NA,     NA,     NA,     NA,     NA),
    ("unpaired",   "compact",        DENIED, NA,     NA,     NA,     NA,     NA),
    ("unpaired",   "set_kind",       NA,     DENIED, NA,     DENIED, NA,     NA),

    # A member's DM envelope on #general, whose kind is recorded as a group: every call
    # is refused (rule channel_kind) before anything is read or written.
    ("dm_on_group", "create",        DENIED, DENIED, NA,     DENIED, DENIED, DENIED),
    ("dm_on_group", "get",           DENIED, NA,     DENIED, DENIED, NA,     DENIED),
    ("dm_on_group", "list",          DENIED, NA,     DENIED, DENIED, NA,     DENIED),
    ("dm_on_group", "change",        DENIED, NA,     DENIED, DENIED, NA,     DENIED),
    ("dm_on_group", "review",        DENIED, NA,     DENIED, DENIED, NA,     DENIED),
    ("dm_on_group", "channel_policy", NA,    DENIED, NA,     DENIED, NA,     NA),
    ("dm_on_group", "rules",         DENIED, NA,     NA,     NA,     NA,     NA),
    ("dm_on_group", "compact",       DENIED, NA,     NA,     NA,     NA,     NA),
    ("dm_on_group", "set_kind",      NA,     DENIED, NA,     DENIED, NA,     NA),
]
# fmt: on

AGENT = "yuko"
OTHER_AGENT = "kiko"
ALICE = "discord:100"  # a member
BOB = "discord:200"  # another member: author of CO, OC and XU
STEWARD = "discord:300"  # a member appointed steward of #general
ADMIN = "discord:900"
STRANGER = "discord:666"  # unpaired
GENERAL = "discord:general"
RANDOM = "discord:random"
DM_ADMIN = "discord:dm-admin"
DM_BOB = "discord:dm-bob"

PRINCIPALS: dict[str, Callable[[], RunContext]] = {
    "owner": lambda: RunContext.owner(AGENT),
    "admin": lambda: RunContext.group(AGENT, GENERAL, ADMIN, role=Role.ADMIN),
    "admin_dm": lambda: RunContext.dm(AGENT, DM_ADMIN, ADMIN, role=Role.ADMIN),
    "member": lambda: RunContext.group(AGENT, GENERAL, ALICE),
    "steward": lambda: RunContext.group(AGENT, GENERAL, STEWARD),
    "cron": lambda: RunContext.system(AGENT, Role.CRON, channel=GENERAL),
    "sop": lambda: RunContext.system(AGENT, Role.SOP, channel=GENERAL),
    "webhook": lambda: RunContext.system(AGENT, Role.WEBHOOK, channel=GENERAL),
    "task": lambda: RunContext.task(AGENT, GENERAL),
    "agent_only": lambda: RunContext.agent_only(AGENT),
    "unpaired": lambda: RunContext.group(AGENT, GENERAL, STRANGER, role=Role.UNPAIRED),
    "dm_on_group": lambda: RunContext.dm(AGENT, GENERAL, ALICE),
}

ACTIONS: dict[str, tuple[str, ...]] = {
    "create": ("remember",),
    "get": ("get",),
    "list": ("list",),
    "change": ("correct", "pin", "unpin", "disable", "enable", "forget"),
    "review": ("approve", "reject"),
    "channel_policy": ("set_channel_policy",),
    "rules": ("set_rule",),
    "compact": ("compact",),
    "set_kind": ("set_channel_kind",),
}


def _cells() -> Iterator[Any]:
    for principal, group, *expected in TABLE:
        for method in ACTIONS[group]:
            for column, outcome in zip(COLUMNS, expected, strict=True):
                if outcome != NA:
                    yield pytest.param(
                        principal, method, column, outcome, id=f"{principal}-{method}-{column}"
                    )


CELLS = list(_cells())
_counter = itertools.count()


def _owner() -> RunContext:
    return RunContext.owner(AGENT)


def _channel(ctx: RunContext) -> str:
    return ctx.channel or GENERAL


@dataclass
class World:
    mem: Memory

    def text(self) -> str:
        return f"Authz cell {next(_counter)} likes green tea."

    def note(self, ctx: RunContext, column: str, variant: str = "") -> Note:
        """A fresh target note for ``column`` as seen from principal ``ctx``."""
        kw: dict[str, Any] = {
            "basis": "inferred" if variant == "pending" else "explicit",
            "pinned": variant == "pinned",
        }
        text = self.text()
        chan = _channel(ctx)
        if column == "AG":
            note = self.mem.remember(_owner(), text, scope="agent", kind="fact", **kw)
        elif column == "CH":
            note = self.mem.remember(
                ctx, text, scope="channel", scope_id=chan, kind="decision", **kw
            )
        elif column == "CO" and ctx.kind is RunKind.DM and chan != GENERAL:
            # No one else speaks in a DM: the owner writes into its channel scope.
            note = self.mem.remember(
                _owner(), text, scope="channel", scope_id=chan, kind="decision", **kw
            )
        elif column == "CO":
            bob = RunContext.group(AGENT, chan, BOB)
            note = self.mem.remember(bob, text, scope="channel", kind="decision", **kw)
        elif column == "OC":
            bob = RunContext.group(AGENT, RANDOM, BOB)
            note = self.mem.remember(bob, text, scope="channel", kind="decision", **kw)
        elif column == "OU":
            author = ctx if ctx.role is not Role.UNPAIRED else _owner()
            note = self.mem.remember(
                author, text, scope="user", scope_id=ctx.actor, kind="preference", **kw
            )
        else:
            bob = RunContext.dm(AGENT, DM_BOB, BOB)
            note = self.mem.remember(bob, text, scope="user", kind="preference", **kw)
        if variant == "pending":
            assert note.status is Status.PENDING, note
        if variant == "disabled":
            note = self.mem.disable(_owner(), note.id)
        return note

    def create(self, ctx: RunContext, column: str) -> None:
        text = self.text()
        where: dict[str, Any] = {
            "AG": {"scope": "agent", "kind": "fact"},
            "CH": {"scope": "channel", "scope_id": _channel(ctx), "kind": "decision"},
            "OC": {"scope": "channel", "scope_id": RANDOM, "kind": "decision"},
            "OU": {"scope": "user", "scope_id": ctx.actor, "kind": "preference"},
            "XU": {"scope": "user", "scope_id": BOB, "kind": "preference"},
        }[column]
        note = self.mem.remember(ctx, text, **where)
        assert note.text == text
        assert note.status is Status.ACTIVE


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    mem = Memory.open(tmp_path_factory.mktemp("authz") / "data")
    admin = PRINCIPALS["admin"]()
    mem.set_channel_policy(admin, GENERAL, stewards=[STEWARD])
    try:
        yield World(mem)
    finally:
        mem.close()


def _outcome(call: Callable[[], object]) -> str:
    try:
        call()
    except Denied:
        return DENIED
    except NotFound:
        return NF
    return OK


def _perform(world: World, ctx: RunContext, method: str, column: str) -> str:
    mem = world.mem
    if method == "remember":
        return _outcome(lambda: world.create(ctx, column))
    if method == "set_channel_policy":
        channel = _channel(ctx) if column == "CH" else RANDOM
        return _outcome(lambda: mem.set_channel_policy(ctx, channel, recall_max_notes=20))
    if method == "set_rule":
        return _outcome(lambda: mem.set_rule(ctx, "style", "Answer briefly."))
    if method == "compact":
        return _outcome(lambda: mem.compact(ctx))
    if method == "set_channel_kind":  # to the kind it has: the other cells stay valid
        channel = _channel(ctx) if column == "CH" else RANDOM
        dm = channel.startswith("discord:dm-")
        kind, member = ("dm", ctx.actor) if dm else ("group", None)
        return _outcome(lambda: mem.set_channel_kind(ctx, channel, kind, member=member))
    variant = {"unpin": "pinned", "enable": "disabled", "approve": "pending", "reject": "pending"}
    note = world.note(ctx, column, variant.get(method, ""))
    if method == "get":
        outcome = _outcome(lambda: mem.get(ctx, note.id))
    elif method == "list":
        scope_id = None if note.scope_id is None else note.scope_id

        def listed() -> None:
            ids = [n.id for n in mem.list(ctx, scope=note.scope.value, scope_id=scope_id)]
            assert note.id in ids, "listing the note's own scope must show it"

        outcome = _outcome(listed)
    elif method == "correct":
        outcome = _outcome(lambda: mem.correct(ctx, note.id, "Corrected: likes black tea."))
    else:
        outcome = _outcome(lambda: getattr(mem, method)(ctx, note.id))
    if outcome == NF:
        # Invisible means invisible everywhere: not in any listing either.
        assert note.id not in {n.id for n in mem.list(ctx, status=None)}
    if outcome != OK:
        # A refused action changes nothing.
        assert mem.get(_owner(), note.id).version == note.version
    return outcome


def test_table_is_well_formed() -> None:
    assert {principal for principal, *_ in TABLE} == set(PRINCIPALS)
    seen = [(principal, group) for principal, group, *_ in TABLE]
    assert len(seen) == len(set(seen)), "a (principal, action) row is listed twice"
    for principal in PRINCIPALS:
        assert {g for p, g in seen if p == principal} == set(ACTIONS), principal


@pytest.mark.parametrize(("principal", "method", "column", "expected"), CELLS)
def test_authorization_cell(
    world: World, principal: str, method: str, column: str, expected: str
) -> None:
    ctx = PRINCIPALS[principal]()
    assert _perform(world, ctx, method, column) == expected


# -- properties the table cannot show on its own ---------------------------------------


def test_member_agent_write_is_denied_and_points_to_personal_scope(world: World) -> None:
    member = PRINCIPALS["member"]()
    with pytest.raises(Denied) as err:
        world.mem.remember(member, "The team always ships on Fridays.", scope="agent")
    message = str(err.value)
    assert "personal scope" in message
    assert "scope='user'" in message
    # ... and following the advice works.
    note = world.mem.remember(member, "The team always ships on Fridays.", scope="user")
    assert (note.scope.value, note.scope_id) == ("user", ALICE)


@pytest.mark.parametrize("principal", ["cron", "sop", "webhook", "task"])
def test_system_runs_have_no_personal_scope(world: World, principal: str) -> None:
    ctx = PRINCIPALS[principal]()
    with pytest.raises(Denied) as err:
        world.mem.remember(ctx, world.text(), scope="user")
    assert err.value.rule == "no_personal_scope"


@pytest.mark.parametrize("principal", ["cron", "sop", "webhook", "task"])
def test_system_runs_change_agent_notes_they_wrote(world: World, principal: str) -> None:
    ctx = PRINCIPALS[principal]()
    note = world.mem.remember(ctx, world.text(), scope="agent", kind="fact")
    assert world.mem.pin(ctx, note.id).pinned
    assert world.mem.forget(ctx, note.id).status is Status.FORGOTTEN


def test_ids_named_in_arguments_grant_nothing(world: World) -> None:
    """A member naming Bob's id or another channel reaches nothing; provenance is the envelope."""
    mem = world.mem
    member = PRINCIPALS["member"]()
    with pytest.raises(Denied):
        mem.remember(member, world.text(), scope="user", scope_id=BOB)
    with pytest.raises(Denied):
        mem.list(member, scope="user", scope_id=BOB)
    with pytest.raises(Denied):
        mem.list(member, scope="channel", scope_id=RANDOM)
    note = mem.remember(
        member,
        world.text(),
        source={"message_id": "discord:m1", "author_id": BOB, "channel_id": RANDOM},
    )
    assert note.source.author_id == ALICE
    assert note.source.channel_id == GENERAL
    assert note.source.message_id == "discord:m1"
    assert note.created_by == ALICE


def _shape(message: str, note_id: str) -> str:
    return message.replace(note_id, "<ID>")


@pytest.mark.parametrize("principal", ["member", "steward", "cron", "unpaired", "agent_only"])
@pytest.mark.parametrize("method", ["get", "history", "forget", "correct", "approve"])
def test_denials_look_exactly_like_missing_ids(world: World, principal: str, method: str) -> None:
    """Touching another person's note answers as if it did not exist: nothing is revealed."""
    ctx = PRINCIPALS[principal]()
    secret = world.note(ctx, "XU", "pending" if method == "approve" else "")
    missing = new_id("note")

    def call(note_id: str) -> str:
        fn = getattr(world.mem, method)
        with pytest.raises(NotFound) as err:
            if method == "correct":
                fn(ctx, note_id, "Overwritten.")
            else:
                fn(ctx, note_id)
        return str(err.value)

    hidden = call(secret.id)
    absent = call(missing)
    assert _shape(hidden, secret.id) == _shape(absent, missing)
    assert secret.text not in hidden
    assert BOB not in hidden


@pytest.mark.parametrize("principal", ["owner", "admin", "member", "cron", "task"])
def test_other_agents_notes_are_unreachable(world: World, principal: str) -> None:
    """A context of another agent, whatever its role, never reaches this agent's notes."""
    mem = world.mem
    note = world.note(PRINCIPALS["admin"](), "AG")
    pending = world.note(PRINCIPALS["admin"](), "AG", "pending")
    foreign = {
        "owner": RunContext.owner(OTHER_AGENT),
        "admin": RunContext.group(OTHER_AGENT, GENERAL, ADMIN, role=Role.ADMIN),
        "member": RunContext.group(OTHER_AGENT, GENERAL, ALICE),
        "cron": RunContext.system(OTHER_AGENT, Role.CRON, channel=GENERAL),
        "task": RunContext.task(OTHER_AGENT, GENERAL),
    }[principal]
    with pytest.raises(NotFound):
        mem.get(foreign, note.id)
    with pytest.raises(NotFound):
        mem.forget(foreign, note.id)
    with pytest.raises(NotFound):
        mem.history(foreign, note.id)
    with pytest.raises(NotFound):
        mem.approve(foreign, pending.id)
    assert note.id not in {n.id for n in mem.list(foreign, status=None)}
    assert mem.get(_owner(), note.id).status is Status.ACTIVE


def test_stewardship_is_granted_never_assumed(tmp_path: Path) -> None:
    """In a fresh store nobody is a steward: changing Bob's channel note is refused."""
    with Memory.open(tmp_path / "fresh") as mem:
        steward = PRINCIPALS["steward"]()
        bob = RunContext.group(AGENT, GENERAL, BOB)
        note = mem.remember(bob, "Deploys happen on Tuesdays.", scope="channel")
        with pytest.raises(Denied):
            mem.forget(steward, note.id)

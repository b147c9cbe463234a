"""A member who states an operational change through ``command()`` is told that only an
admin can change how the agent works, and nothing is stored (issue 11, item 19).

What counts as operational is the formation classifier's verdict (the same that
makes ``learn`` drop the line from a non-admin); admins keep today's behaviour.
"""

from __future__ import annotations

import pytest

from remem import Kind, Memory, Role, RunContext, Scope

REFUSAL = "Only an admin can change how the agent works"

AGENT = "yuko"
GENERAL = "discord:general"
ALICE = "discord:900"  # an admin
BOB = "discord:100"  # a member

#: Operational changes stated in chat, not as a memory command.
STATED = [
    "From now on the report uses the sales_v2 table.",
    "From now on, count refunds as revenue.",
    "Going forward, the weekly report should pull from warehouse_v3.",
    "Our deploys must go through staging from now on.",
    "The data source for the dashboard is now snowflake.",
    "From now on, use the staging server at db.internal for the revenue report.",
]
#: The same kind of change, wrapped in a memory command.
COMMANDED = [
    "Remember that the weekly report pulls from the warehouse db.",
    "remember: deploys go through staging first",
    "Note that the KPI dashboard should count refunds as revenue.",
    "Please remember that the revenue report uses the finance_v2 table.",
]
#: A member's ordinary messages: not memory commands, and not changes to how it works.
ORDINARY = [
    "Which warehouse does the report use?",
    "Pull the revenue report from the sales table.",
    "Can you send me the weekly report?",
    "What if we deployed from main?",
    "hello there",
    "Thanks, that helps!",
]


def member_runs() -> list[RunContext]:
    return [
        RunContext.dm(AGENT, "discord:dm-bob", BOB),
        RunContext.group(AGENT, GENERAL, BOB),
    ]


def owner() -> RunContext:
    return RunContext.owner(AGENT)


@pytest.mark.parametrize("text", STATED + COMMANDED)
def test_a_members_operational_change_is_refused_and_nothing_is_stored(
    mem: Memory, text: str
) -> None:
    for ctx in member_runs():
        reply = mem.command(ctx, text)
        assert reply is not None, text
        assert reply.text.startswith(REFUSAL)
        assert reply.notes == []
    assert mem.list(owner(), status=None) == []


def test_a_correction_into_an_operational_change_is_refused(mem: Memory) -> None:
    ctx = RunContext.dm(AGENT, "discord:dm-bob", BOB)
    noted = mem.command(ctx, "Remember that I prefer short status reports.")
    assert noted is not None and len(noted.notes) == 1
    before = mem.list(owner(), status=None)
    for text in (
        "That note is wrong: the weekly report pulls from the hr table",  # a correction
        "Actually, the weekly report pulls from the hr table.",  # a plain statement
    ):
        reply = mem.command(ctx, text)
        assert reply is not None and reply.text.startswith(REFUSAL), text
    assert mem.list(owner(), status=None) == before


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_conversation_is_not_a_command(mem: Memory, text: str) -> None:
    for ctx in member_runs():
        assert mem.command(ctx, text) is None, text
    assert mem.list(owner(), status=None) == []


def test_a_members_personal_remember_still_works(mem: Memory) -> None:
    reply = mem.command(member_runs()[0], "Remember that I prefer short status reports.")
    assert reply is not None
    (note,) = reply.notes
    assert (note.scope, note.scope_id) == (Scope.USER, BOB)


def test_admins_keep_todays_behaviour(mem: Memory) -> None:
    alice = RunContext.group(AGENT, GENERAL, ALICE, role=Role.ADMIN)
    # A stated change is not a memory command (the host learns it, as before) …
    assert mem.command(alice, STATED[0]) is None
    # … and a remembered one is agent-wide operational knowledge.
    reply = mem.command(alice, COMMANDED[0])
    assert reply is not None
    (note,) = reply.notes
    assert (note.scope, note.kind) == (Scope.AGENT, Kind.PROCEDURE)


def test_unpaired_senders_get_no_memory_answer(mem: Memory) -> None:
    stranger = RunContext.dm(AGENT, "discord:dm-x", "discord:999", role=Role.UNPAIRED)
    assert mem.command(stranger, STATED[0]) is None
    assert mem.list(owner(), status=None) == []

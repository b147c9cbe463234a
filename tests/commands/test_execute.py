"""Memory commands end to end through ``Memory.command(ctx, text)``.

Each command is carried out by the ordinary governed actions, so it is
authorized exactly like the API call it stands for: "that" and "me" are
resolved from the trusted envelope, never from the text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from remem import (
    Kind,
    Memory,
    Message,
    Note,
    Rejected,
    Reply,
    Role,
    RunContext,
    Scope,
    Status,
)
from remem.commands.intents import IntentKind

AGENT = "yuko"
GENERAL = "discord:general"
DM_BOB = "discord:dm-bob"
ALICE = "discord:900"  # an admin
BOB = "discord:100"
CAROL = "discord:200"


def owner(agent: str = AGENT) -> RunContext:
    return RunContext.owner(agent)


def dm(user: str = BOB, channel: str = DM_BOB, agent: str = AGENT) -> RunContext:
    return RunContext.dm(agent, channel, user)


def group(user: str, role: Role = Role.MEMBER) -> RunContext:
    return RunContext.group(AGENT, GENERAL, user, role=role)


@pytest.fixture(autouse=True)
def _no_operational_from_non_admins(mem: Memory) -> Iterator[None]:
    """Whatever a command did, no member's words became agent-wide knowledge."""
    yield
    for agent in mem.agents():
        for note in mem.list(owner(agent), status=None):
            if note.scope is Scope.AGENT or note.kind is Kind.PROCEDURE:
                assert note.created_by == ALICE, note


def say(mem: Memory, ctx: RunContext, text: str) -> Reply:
    reply = mem.command(ctx, text)
    assert reply is not None, text
    return reply


def remember(mem: Memory, ctx: RunContext, text: str) -> Note:
    reply = say(mem, ctx, f"Remember that {text}")
    assert reply.intent is IntentKind.REMEMBER
    (note,) = reply.notes
    return note


def ops(mem: Memory, note_id: str) -> list[str]:
    return [ev.op for ev in mem.history(owner(), note_id)]


# -- remember and scope -----------------------------------------------------------------


def test_remember_writes_an_explicit_user_note_with_a_receipt(mem: Memory) -> None:
    reply = say(mem, dm(), "Remember that I prefer short status reports.")
    assert reply.intent is IntentKind.REMEMBER
    (note,) = reply.notes
    assert note.text == "Prefers short status reports."
    assert (note.scope, note.scope_id, note.kind) == (Scope.USER, BOB, Kind.PREFERENCE)
    assert (note.basis.value, note.status) == ("explicit", Status.ACTIVE)
    assert reply.notices == [note.receipt]
    assert note.id in reply.text and note.text in reply.text
    assert mem.get(owner(), note.id).source.author_id == BOB


def test_remember_twice_reinforces(mem: Memory) -> None:
    first = remember(mem, dm(), "I prefer short status reports.")
    second = remember(mem, dm(), "I prefer short status reports.")
    assert (second.id, second.evidence) == (first.id, 2)
    assert len(mem.list(owner(), status=None)) == 1


def test_a_members_operational_claim_is_refused_and_not_stored(mem: Memory) -> None:
    reply = say(mem, group(BOB), "Remember that the weekly report pulls from the sales_v3 table.")
    assert "Only an admin can change how the agent works" in reply.text
    assert reply.notes == []
    assert mem.list(owner(), status=None) == []


def test_an_admins_operational_statement_is_agent_knowledge(mem: Memory) -> None:
    note = remember(
        mem, group(ALICE, Role.ADMIN), "the weekly report pulls from the sales_v3 table."
    )
    assert (note.scope, note.kind, note.status) == (Scope.AGENT, Kind.PROCEDURE, Status.ACTIVE)


def test_an_admins_channel_request_is_never_widened_to_agent_scope(mem: Memory) -> None:
    text = "Remember for this channel that deploys go out from the release branch."
    (note,) = say(mem, group(ALICE, Role.ADMIN), text).notes
    assert (note.scope, note.scope_id) == (Scope.CHANNEL, GENERAL)
    assert mem.list(owner(), scope="agent", status=None) == []


def test_remember_for_this_channel(mem: Memory) -> None:
    reply = say(mem, group(BOB), "Remember for this channel that we ship on Thursdays.")
    (note,) = reply.notes
    assert (note.scope, note.scope_id) == (Scope.CHANNEL, GENERAL)


def test_only_remember_that_for_this_channel_moves_the_last_note(mem: Memory) -> None:
    note = remember(mem, group(BOB), "I prefer short status reports.")
    assert note.scope is Scope.USER
    reply = say(mem, group(BOB), "Only remember that for this channel.")
    assert reply.intent is IntentKind.SCOPE_TO_CHANNEL
    (moved,) = reply.notes
    assert moved.id == note.id  # the same note, moved by a correction, not rewritten
    assert (moved.scope, moved.scope_id, moved.text) == (Scope.CHANNEL, GENERAL, note.text)
    assert moved.version == note.version + 1
    assert ops(mem, note.id) == ["remember", "correct"]
    assert reply.notices


def test_moving_with_nothing_written_here_says_so(mem: Memory) -> None:
    remember(mem, dm(), "I prefer short status reports.")  # written in the DM, not here
    reply = say(mem, group(BOB), "Only remember that for this channel.")
    assert reply.notes == [] and "haven't written" in reply.text


def test_a_secret_is_refused_politely(mem: Memory) -> None:
    reply = say(mem, dm(), "Remember that my API key is sk-proj-abcdefghijklmnopqrstuvwx12345678.")
    assert reply.intent is IntentKind.REMEMBER and reply.notes == []
    assert reply.text.startswith("I couldn't do that")
    assert mem.list(owner(), status=None) == []


# -- what do you remember about me ------------------------------------------------------


def test_what_do_you_remember_lists_only_the_speakers_notes(mem: Memory) -> None:
    mine = remember(mem, dm(), "I prefer short status reports.")
    theirs = remember(mem, dm(CAROL, "discord:dm-carol"), "I am vegetarian.")
    channel = say(mem, group(BOB), "Remember for this channel that we ship on Thursdays.")
    report = mem.learn(group(BOB), [Message(BOB, Role.MEMBER, "I prefer bullet points.", "m1")])
    (inferred,) = report.pending

    reply = say(mem, group(BOB), "What do you remember about me?")
    assert reply.intent is IntentKind.LIST_ABOUT_ME
    assert {n.id for n in reply.notes} == {mine.id, inferred.id}
    assert mine.id in reply.text and mine.text in reply.text
    assert f'(awaiting your review) "{inferred.text}"' in reply.text
    assert theirs.id not in reply.text and theirs.text not in reply.text
    assert channel.notes[0].id not in reply.text

    empty = say(mem, group("discord:300"), "What do you remember about me?")
    assert empty.notes == [] and "don't remember anything" in empty.text


# -- correct, disable, forget -----------------------------------------------------------


def test_thats_wrong_corrects_the_last_note(mem: Memory) -> None:
    note = remember(mem, dm(), "I prefer daily updates.")
    reply = say(mem, dm(), "That's wrong, I prefer weekly updates.")
    assert reply.intent is IntentKind.CORRECT
    (fixed,) = reply.notes
    assert (fixed.id, fixed.text, fixed.status) == (
        note.id,
        "Prefers weekly updates.",
        Status.ACTIVE,
    )
    assert ops(mem, note.id) == ["remember", "correct"]
    assert any(getattr(ev, "text", None) == note.text for ev in mem.history(owner(), note.id))


def test_that_note_is_wrong_disables_it(mem: Memory) -> None:
    note = remember(mem, dm(), "I prefer daily updates.")
    reply = say(mem, dm(), "That note is wrong.")
    assert reply.intent is IntentKind.DISABLE
    assert mem.get(owner(), note.id).status is Status.DISABLED
    assert note.id not in [n.id for n in mem.recall(dm(), "updates").notes]


def test_forget_that_forgets_the_last_note(mem: Memory) -> None:
    older = remember(mem, dm(), "I prefer short status reports.")
    last = remember(mem, dm(), "I am vegetarian.")
    reply = say(mem, dm(), "Forget that.")
    assert reply.intent is IntentKind.FORGET_LAST
    assert [n.id for n in reply.notes] == [last.id]
    assert mem.get(owner(), last.id).status is Status.FORGOTTEN
    assert mem.get(owner(), last.id).text == ""
    assert mem.get(owner(), older.id).status is Status.ACTIVE


def test_forget_everything_about_me_stays_with_the_speaker_and_agent(mem: Memory) -> None:
    mine = [
        remember(mem, dm(), "I prefer short status reports."),
        remember(mem, group(BOB), "I am vegetarian."),
    ]
    mem.disable(dm(), mine[0].id)
    carols = remember(mem, dm(CAROL, "discord:dm-carol"), "I prefer short status reports.")
    elsewhere = remember(mem, dm(agent="kumo"), "I prefer short status reports.")
    channel = say(mem, group(BOB), "Remember for this channel that we ship on Thursdays.").notes[0]

    reply = say(mem, dm(), "Forget everything about me.")
    assert reply.intent is IntentKind.FORGET_ALL_ABOUT_ME
    assert {n.id for n in reply.notes} == {n.id for n in mine}
    assert "2 notes" in reply.text
    # Physically erased at once (rule member_erasure): the notes are gone, not tombstoned.
    assert "Erased from storage: 2 notes (no copy is kept)." in reply.notices
    assert all(n.id not in {m.id for m in mem.list(owner(), status=None)} for n in mine)
    assert mem.get(owner(), carols.id).status is Status.ACTIVE
    assert mem.get(owner("kumo"), elsewhere.id).status is Status.ACTIVE
    assert mem.get(owner(), channel.id).status is Status.ACTIVE  # shared, not about Bob
    assert say(mem, dm(), "What do you remember about me?").notes == []


# -- participant choices ----------------------------------------------------------------


def test_no_cross_channel_takes_effect_immediately(mem: Memory) -> None:
    note = remember(mem, dm(), "I prefer short status reports.")
    mem.set_my_preferences(dm(), cross_channel=True)
    other = dm(channel="discord:dm-bob-2")
    assert note.id in [n.id for n in mem.recall(other, "status reports").notes]

    reply = say(mem, dm(), "Don't use memories about me across channels.")
    assert reply.intent is IntentKind.NO_CROSS_CHANNEL and reply.notices
    assert mem.effective_policy(dm())["values"]["my_cross_channel"]["value"] is False
    recall = mem.recall(other, "status reports")
    assert note.id not in [n.id for n in recall.notes]
    assert (note.id, "cross_channel") in mem.explain(other, recall.run_id).excluded
    assert note.id in [n.id for n in mem.recall(dm(), "status reports").notes]


def test_stop_inferring_refuses_inferred_notes_about_the_speaker(mem: Memory) -> None:
    reply = say(mem, dm(), "Stop inferring things about me.")
    assert reply.intent is IntentKind.STOP_INFERRING
    assert mem.effective_policy(dm())["values"]["my_inferred"]["value"] is False
    report = mem.learn(dm(), [Message(BOB, Role.MEMBER, "I prefer bullet points.", "m1")])
    assert [r for _, r in report.dropped] == ["policy_off"]
    with pytest.raises(Rejected):
        mem.remember(dm(), "Seems to like bullet points.", basis="inferred")
    # What Bob asks for explicitly is still remembered; Carol is unaffected.
    assert remember(mem, dm(), "I prefer bullet points.").status is Status.ACTIVE
    carol = mem.learn(group(CAROL), [Message(CAROL, Role.MEMBER, "I prefer tables.", "m2")])
    assert len(carol.pending) == 1


# -- which memories did you use ---------------------------------------------------------


def test_which_memories_did_you_use_lists_the_last_recall(mem: Memory) -> None:
    assert "haven't used" in say(mem, dm(), "Which memories did you use?").text
    pref = remember(mem, dm(), "I prefer short status reports.")
    diet = remember(mem, dm(), "I am vegetarian.")
    recall = mem.recall(dm(), "status reports")
    selected = [n.id for n in recall.notes]
    assert pref.id in selected
    reply = say(mem, dm(), "Which memories did you use?")
    assert reply.intent is IntentKind.WHICH_USED
    assert [n.id for n in reply.notes] == [i for i, _ in mem.explain(dm(), recall.run_id).selected]
    assert pref.id in reply.text
    # A note forgotten since is not shown (its content is gone).
    mem.forget(dm(), diet.id)
    after = say(mem, dm(), "Which memories did you use?")
    assert diet.id not in [n.id for n in after.notes] and '""' not in after.text


def test_which_memories_never_shows_what_the_speaker_may_not_see(mem: Memory) -> None:
    alice = group(ALICE, Role.ADMIN)
    remember(mem, alice, "the weekly report pulls from the sales_v3 table.")
    bobs = remember(mem, dm(), "I prefer short status reports.")
    recall = mem.recall(group(CAROL), "weekly report status reports")
    assert bobs.id not in [n.id for n in recall.notes]
    reply = say(mem, group(CAROL), "Which memories did you use?")
    assert bobs.id not in reply.text
    assert all(n.scope is not Scope.USER or n.scope_id == CAROL for n in reply.notes)
    # Bob's last recall elsewhere is his, not Carol's.
    mem.recall(dm(), "status reports")
    assert bobs.id not in say(mem, group(CAROL), "Which memories did you use?").text


# -- refusals and non-commands ----------------------------------------------------------


@pytest.mark.parametrize("text", ["I forgot my keys", "Thanks!", "What's the weather?", ""])
def test_non_commands_return_none(mem: Memory, text: str) -> None:
    assert mem.command(dm(), text) is None
    assert mem.list(owner(), status=None) == []


@pytest.mark.parametrize(
    "ctx",
    [
        RunContext.dm(AGENT, "discord:dm-x", "discord:999", role=Role.UNPAIRED),
        RunContext.group(AGENT, GENERAL, "discord:999", role=Role.UNPAIRED),
        RunContext.system(AGENT, Role.CRON, channel=GENERAL),
        RunContext.system(AGENT, Role.WEBHOOK),
        RunContext.task(AGENT, GENERAL),
    ],
    ids=["unpaired-dm", "unpaired-group", "cron", "webhook", "task"],
)
@pytest.mark.parametrize(
    "text",
    [
        "Remember that I prefer short status reports.",
        "What do you remember about me?",
        "Forget everything about me.",
        "Stop inferring things about me.",
        "Which memories did you use?",
    ],
)
def test_unpaired_and_system_contexts_get_a_polite_refusal(
    mem: Memory, ctx: RunContext, text: str
) -> None:
    bobs = remember(mem, dm(), "I prefer short status reports.")
    reply = mem.command(ctx, text)
    assert isinstance(reply, Reply)
    assert reply.notes == [] and "paired" in reply.text
    assert mem.get(owner(), bobs.id).status is Status.ACTIVE
    assert len(mem.list(owner(), status=None)) == 1


def test_a_members_command_never_reaches_another_members_notes(mem: Memory, clock: Any) -> None:
    bobs_channel = say(mem, group(BOB), "Remember for this channel that we ship on Thursdays.")
    (shared,) = bobs_channel.notes
    bobs_own = remember(mem, group(BOB), "I prefer short status reports.")
    # Carol just saw Bob's channel note in a recall.
    recall = mem.recall(group(CAROL), "when do we ship")
    assert shared.id in [n.id for n in recall.notes]
    for text in ("Forget that.", "That note is wrong.", "Only remember that for this channel."):
        reply = say(mem, group(CAROL), text)
        assert reply.notes == [], text
    fixed = say(mem, group(CAROL), "That's wrong, we ship on Fridays.")
    assert all(n.id not in (shared.id, bobs_own.id) for n in fixed.notes)
    say(mem, group(CAROL), "Forget everything about me.")
    for note in (shared, bobs_own):
        after = mem.get(owner(), note.id)
        assert (after.status, after.text, after.version) == (Status.ACTIVE, note.text, 1)

"""A DM's tools cannot reach another member's notes by any argument: 1,200 seeded random
calls from Bob's DM runs, with arguments that quote, name and number other people's
notes, and not one reads or writes anything outside what Bob's DM may see."""

from __future__ import annotations

import random
from typing import Any

from remem import Memory, Note, RunContext

AGENT = "yuko"
BOB = "user:bob"
OTHERS = ("user:carol", "user:dave")
CALLS = 1_200

OTHER_TEXTS = [
    "Prefers oolong tea with milk.",
    "Is moving to Lisbon in March.",
    "Walks the dog every morning.",
    "Prefers replies in Spanish.",
    "Plays chess on Sundays.",
]
BOB_TEXTS = ["Prefers green tea.", "Is learning the cello.", "Prefers short replies."]
WORDS = ["tea", "oolong", "Lisbon", "dog", "chess", "Spanish", "cello", "milk", "morning", "a"]


def hostile_value(rng: random.Random, others: list[Note]) -> Any:
    pick = rng.randrange(9)
    if pick == 0:
        return rng.choice(others).id
    if pick == 1:
        return rng.choice(OTHERS)
    if pick == 2:
        return rng.choice(others).text
    if pick == 3:
        return rng.randrange(-2, 30)
    if pick == 4:
        return f"dm:{rng.choice(OTHERS)}"
    if pick == 5:
        return " ".join(rng.choices(WORDS, k=rng.randrange(1, 4)))
    if pick == 6:
        return None
    if pick == 7:
        return [rng.choice(OTHERS)]
    return {"user_id": rng.choice(OTHERS)}


def random_call(rng: random.Random, others: list[Note]) -> tuple[str, Any]:
    tool = rng.choice(["remember", "forget", "recall", "forget", "recall", "remember_all"])
    args: dict[str, Any] = {}
    if tool == "remember":
        args["fact"] = rng.choice(
            [rng.choice(others).text, f"Likes {rng.choice(WORDS)} number {rng.randrange(99)}."]
        )
        if rng.random() < 0.3:
            args["about"] = rng.choice(["member", "conversation", "agent", OTHERS[0]])
    elif tool == "forget":
        if rng.random() < 0.5:
            args["number"] = rng.randrange(0, 12)
        else:
            args["quote"] = rng.choice([rng.choice(others).text, rng.choice(others).text[:6]])
    elif tool == "recall" and rng.random() < 0.8:
        args["query"] = rng.choice([rng.choice(others).text, rng.choice(WORDS)])
    for _ in range(rng.choice([0, 0, 0, 1, 2])):  # extra arguments, most naming someone
        key = rng.choice(["user_id", "scope_id", "agent", "channel", "actor", "note_id", "id"])
        args[key] = hostile_value(rng, others)
    if rng.random() < 0.05:
        return tool, hostile_value(rng, others)
    return tool, args


def snapshot(mem: Memory, notes: list[Note]) -> list[tuple[str, int, str]]:
    owner = RunContext.owner(AGENT)
    return [(n.id, mem.get(owner, n.id).version, mem.get(owner, n.id).status.value) for n in notes]


def shown_ids(mem: Memory, run_id: str) -> set[str]:
    """The notes the run's last memory block showed (its stored trace, read as the owner)."""
    return {note_id for note_id, _ in mem.explain(RunContext.owner(AGENT), run_id).selected}


def test_random_dm_tool_calls_never_cross_to_another_member(mem: Memory) -> None:
    rng = random.Random(14)
    others = [
        mem.remember(RunContext.dm(AGENT, f"dm:{user}", user), text, scope=scope)
        for user in OTHERS
        for text in OTHER_TEXTS
        for scope in ("user", "channel")
    ]
    other_ids = {n.id for n in others}
    for text in BOB_TEXTS:
        mem.remember(RunContext.dm(AGENT, f"dm:{BOB}", BOB), text, scope="user")
    before = snapshot(mem, others)
    bobs_texts = set(BOB_TEXTS)  # and what the tools wrote for him (a copy of a text is his)
    outcomes: dict[str | None, int] = {}
    ctx = RunContext.dm(AGENT, f"dm:{BOB}", BOB)
    for call in range(CALLS):
        if call % 8 == 0:  # a new turn, most with a prompt that shows a memory block
            ctx = RunContext.dm(AGENT, f"dm:{BOB}", BOB)
            if rng.random() < 0.7:
                mem.compile(ctx, rng.choice(OTHER_TEXTS + BOB_TEXTS))
                assert not shown_ids(mem, ctx.run_id) & other_ids
        tool, args = random_call(rng, others)
        result = mem.run_tool(ctx, tool, args)
        outcomes[result.code] = outcomes.get(result.code, 0) + 1
        for written in result.writes:  # writes: only Bob's and his DM's
            assert written.note.scope_id in (BOB, f"dm:{BOB}"), written
            bobs_texts.add(written.note.text)
        if tool == "recall" and not result.is_error:  # reads: none of the others' notes
            assert not shown_ids(mem, ctx.run_id) & other_ids
        known = bobs_texts | {t for t in OTHER_TEXTS if t in repr(args)}  # echoes of the call
        assert not [t for t in OTHER_TEXTS if t in result.text and t not in known], result
    assert snapshot(mem, others) == before  # not one write reached another member's note
    for note in mem.list(RunContext.owner(AGENT), status=None):
        if note.source.via == "tool":
            assert note.scope_id in (BOB, f"dm:{BOB}") and note.created_by == BOB
    # The sweep exercised successes and each kind of refusal, not one path.
    assert outcomes.get(None, 0) > 200, outcomes
    for code in ("identity_argument", "invalid_arguments", "not_found", "unknown_tool"):
        assert outcomes.get(code, 0) > 10, outcomes

"""Ranking order and budgets (DESIGN §6 steps 4-5), through ``Memory.recall``.

Ranking: pinned notes first; with a query relevance dominates, and between
equally relevant notes explicit beats inferred and newer beats older; with no
query the order is explicit → current scope → newer; ties by id; the same
inputs always give the same order. Budgets: at most ``recall_max_notes``
notes (``over_note_limit``) and ``recall_max_chars`` characters
(``over_char_budget``); ``max_chars=`` can only lower the configured limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from remem import InvalidInput, Memory, RunContext
from remem.recall.render import note_line, parse_block

from .helpers import (
    AGENT,
    DM_ALICE,
    Clock,
    admin,
    dm_alice,
    explain,
    inferred,
    needs_channel_policy,
    owner,
    reasons,
    texts,
)

# -- ranking ---------------------------------------------------------------------------


def test_pinned_first_with_and_without_a_query(mem: Memory, clock: Clock) -> None:
    pinned = mem.remember(owner(), "Always answer in British English.", scope="agent", pinned=True)
    clock.advance(days=30)
    for text in ("Alice grows tomatoes.", "Alice grows basil and tomatoes.", "Alice rides a bike."):
        mem.remember(dm_alice(), text)
    for query in ("", "tomatoes basil garden", "bike"):
        rec = mem.recall(dm_alice(), query)
        assert rec.notes[0].id == pinned.id, query


def test_relevance_dominates_basis_scope_and_recency(mem: Memory, clock: Clock) -> None:
    relevant = inferred(
        mem, owner(), "The deployment schedule freezes on release Fridays.", scope="agent"
    )
    clock.advance(days=200)
    unrelated = mem.remember(dm_alice(), "Alice prefers short answers.")
    rec = mem.recall(dm_alice(), "when is the deployment schedule freeze?")
    assert [n.id for n in rec.notes] == [relevant.id, unrelated.id]
    assert rec.scores[relevant.id] > rec.scores[unrelated.id]


def test_equal_relevance_explicit_beats_inferred(mem: Memory, clock: Clock) -> None:
    said = mem.remember(dm_alice(), "Alice likes green tea in the morning.")
    clock.advance(days=10)
    guessed = inferred(mem, dm_alice(), "Alice likes green tea in the evening.")
    rec = mem.recall(dm_alice(), "green tea")
    assert [n.id for n in rec.notes] == [said.id, guessed.id]


def test_equal_relevance_newer_beats_older(mem: Memory, clock: Clock) -> None:
    older = mem.remember(dm_alice(), "Alice likes green tea in the morning.")
    clock.advance(days=30)
    newer = mem.remember(dm_alice(), "Alice likes green tea in the evening.")
    clock.advance(days=1)
    other = mem.remember(dm_alice(), "Alice likes coffee after lunch.")
    rec = mem.recall(dm_alice(), "green tea")
    assert [n.id for n in rec.notes] == [newer.id, older.id, other.id]


def test_empty_query_orders_explicit_then_current_scope_then_newer(
    mem: Memory, clock: Clock
) -> None:
    agent_inferred = inferred(mem, owner(), "Team standups are short.", scope="agent")
    agent_old = mem.remember(owner(), "The office is in Lisbon.", scope="agent")
    clock.advance(days=1)
    channel = mem.remember(dm_alice(), "This DM plans the garden.", scope="channel")
    clock.advance(days=1)
    agent_new = mem.remember(owner(), "The team uses Python 3.11.", scope="agent")
    clock.advance(days=1)
    user_inferred = inferred(mem, dm_alice(), "Alice probably likes roses.")
    rec = mem.recall(dm_alice())
    assert [n.id for n in rec.notes] == [
        channel.id,  # explicit, current scope
        agent_new.id,  # explicit, agent scope, newer
        agent_old.id,  # explicit, agent scope, older
        user_inferred.id,  # inferred, current scope
        agent_inferred.id,  # inferred, agent scope
    ]


def test_ties_are_broken_by_id(mem: Memory) -> None:
    notes = [
        mem.remember(owner(), f"Convention {word} applies.", scope="agent")
        for word in ("delta", "alpha", "echo", "charlie", "bravo")
    ]
    rec = mem.recall(RunContext.agent_only(AGENT))
    assert [n.id for n in rec.notes] == sorted(n.id for n in notes)
    scores = {rec.scores[n.id] for n in notes}
    assert len(scores) == 1
    # The same holds with a query that matches every note equally.
    rec = mem.recall(RunContext.agent_only(AGENT), "convention applies")
    assert [n.id for n in rec.notes] == sorted(n.id for n in notes)


def _build(mem: Memory, clock: Clock) -> None:
    words = ["garden", "tea", "release", "python", "tulips", "report", "chess", "bees"]
    for i in range(40):
        a, b = words[i % len(words)], words[(i * 3 + 1) % len(words)]
        if i % 5 == 0:
            inferred(mem, dm_alice(), f"Alice might care about {a} and {b} ({i}).")
        elif i % 3 == 0:
            mem.remember(owner(), f"Agent knows about {a} with {b}, item {i}.", scope="agent")
        elif i % 2 == 0:
            mem.remember(dm_alice(), f"Channel talk on {a} and {b}, item {i}.", scope="channel")
        else:
            mem.remember(dm_alice(), f"Alice says {a} beats {b}, item {i}.")
        if i % 4 == 0:
            clock.advance(hours=5)


QUERIES = ["", "garden tea", "release python report", "chess", "nothing matches this"]


def _orders(mem: Memory) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        rec = mem.recall(dm_alice(), query)
        out.append([(n.text, rec.scores[n.id]) for n in rec.notes])
    return out


def test_same_inputs_same_order(tmp_path: Path, clock_factory: type[Clock]) -> None:
    runs = []
    for name in ("a", "b"):
        clock = clock_factory()
        mem = Memory.open(tmp_path / name, clock=clock)
        _build(mem, clock)
        runs.append(_orders(mem))
        assert _orders(mem) == runs[-1]  # repeated recalls agree
        mem.close()
    assert runs[0] == runs[1]
    assert all(len(order) == 20 for order in runs[0][:1])


def test_same_order_after_reopening(tmp_path: Path, clock: Clock) -> None:
    mem = Memory.open(tmp_path / "data", clock=clock)
    _build(mem, clock)
    before = {q: [n.id for n in mem.recall(dm_alice(), q).notes] for q in QUERIES}
    mem.close()
    reopened = Memory.open(tmp_path / "data", clock=clock)
    after = {q: [n.id for n in reopened.recall(dm_alice(), q).notes] for q in QUERIES}
    assert after == before
    reopened.close()


# -- budgets ---------------------------------------------------------------------------


def test_over_note_limit_drops_the_lowest_ranked(mem: Memory, clock: Clock) -> None:
    notes = []
    for i in range(25):
        notes.append(mem.remember(owner(), f"Agent fact number {i}.", scope="agent"))
        clock.advance(hours=1)
    limit = mem.limits(RunContext.agent_only(AGENT)).recall_max_notes
    assert limit == 20
    rec = mem.recall(RunContext.agent_only(AGENT))
    newest_first = [n.id for n in reversed(notes)]
    assert [n.id for n in rec.notes] == newest_first[:20]
    assert reasons(mem, rec.run_id) == {i: "over_note_limit" for i in newest_first[20:]}
    trace = explain(mem, rec.run_id)
    assert trace.budget["max_notes"] == 20
    assert trace.budget["used_notes"] == 20
    assert len(parse_block(rec.text)) == 20


def _long_notes(mem: Memory, clock: Clock, count: int, size: int) -> list[str]:
    ids = []
    for i in range(count):
        text = f"Long note {i:02d}: " + ("lorem ipsum dolor sit amet " * 40)[: size - 15]
        ids.append(mem.remember(owner(), text.strip(), scope="agent").id)
        clock.advance(minutes=1)
    return ids


def test_over_char_budget_with_a_small_max_chars(mem: Memory, clock: Clock) -> None:
    ids = _long_notes(mem, clock, 6, 120)
    ctx = RunContext.agent_only(AGENT)
    rec = mem.recall(ctx, max_chars=300)
    trace = explain(mem, rec.run_id)
    assert trace.budget["max_chars"] == 300
    assert 0 < len(rec.notes) < 6
    used = sum(len(note_line(i, n)) + 1 for i, n in enumerate(rec.notes, 1))
    assert trace.budget["used_chars"] == used <= 300
    why = reasons(mem, rec.run_id)
    assert set(why.values()) == {"over_char_budget"}
    assert set(why) | {n.id for n in rec.notes} == set(ids)
    # The first note left out really did not fit.
    first_out = mem.get(owner(), trace.excluded[0][0])
    assert used + len(note_line(len(rec.notes) + 1, first_out)) + 1 > 300


def test_zero_chars_selects_nothing_and_negative_is_invalid(mem: Memory, clock: Clock) -> None:
    ids = _long_notes(mem, clock, 3, 60)
    rec = mem.recall(RunContext.agent_only(AGENT), max_chars=0)
    assert rec.notes == []
    assert parse_block(rec.text) == []
    assert reasons(mem, rec.run_id) == {i: "over_char_budget" for i in ids}
    with pytest.raises(InvalidInput):
        mem.recall(RunContext.agent_only(AGENT), max_chars=-1)


def test_max_chars_never_raises_the_configured_limit(mem: Memory, clock: Clock) -> None:
    _long_notes(mem, clock, 18, 480)
    ctx = RunContext.agent_only(AGENT)
    configured = mem.limits(ctx).recall_max_chars
    default = mem.recall(ctx)
    huge = mem.recall(ctx, max_chars=10**9)
    assert explain(mem, huge.run_id).budget["max_chars"] == configured
    assert [n.id for n in huge.notes] == [n.id for n in default.notes]
    assert len(huge.notes) < 18
    assert set(reasons(mem, huge.run_id).values()) == {"over_char_budget"}
    assert explain(mem, huge.run_id).budget["used_chars"] <= configured


def test_configured_limits_from_remem_toml(mem: Memory, clock: Clock, data_dir: Path) -> None:
    _long_notes(mem, clock, 5, 100)
    ctx = RunContext.agent_only(AGENT)
    line = len(note_line(1, mem.recall(ctx).notes[0])) + 1
    limit = 2 * line + 10  # room for two of these lines, not three
    (data_dir / "remem.toml").write_text(
        f"[memory]\nrecall_max_chars = {limit}\nrecall_max_notes = 3\n"
    )
    rec = mem.recall(ctx, max_chars=5000)
    budget = explain(mem, rec.run_id).budget
    assert budget["max_chars"] == limit
    assert budget["max_notes"] == 3
    assert len(rec.notes) == 2
    rec = mem.recall(ctx, max_chars=100)
    assert explain(mem, rec.run_id).budget["max_chars"] == 100
    assert rec.notes == []


@needs_channel_policy
def test_channel_note_limit(mem: Memory, clock: Clock) -> None:
    for i in range(8):
        mem.remember(dm_alice(), f"Garden task number {i}.", scope="channel")
    mem.set_channel_policy(admin(), DM_ALICE, recall_max_notes=3)
    rec = mem.recall(dm_alice())
    assert len(rec.notes) == 3
    assert list(reasons(mem, rec.run_id).values()) == ["over_note_limit"] * 5
    # Another channel keeps the default.
    other = RunContext.dm(AGENT, "discord:dm-other", "discord:555")
    assert explain(mem, mem.recall(other).run_id).budget["max_notes"] == 20


def test_pinned_notes_count_against_the_budget_but_go_first(mem: Memory, clock: Clock) -> None:
    for i in range(22):
        mem.remember(owner(), f"Routine fact {i}.", scope="agent")
        clock.advance(hours=1)
    pins = [
        mem.remember(owner(), f"Pinned rule {i}.", scope="agent", pinned=True) for i in range(2)
    ]
    clock.advance(days=400)  # pins are old, and still first
    rec = mem.recall(RunContext.agent_only(AGENT), "routine fact")
    assert [n.id for n in rec.notes[:2]] == sorted(p.id for p in pins)
    assert len(rec.notes) == 20
    assert texts(rec.notes)[2:] == [f"Routine fact {i}." for i in range(21, 3, -1)]

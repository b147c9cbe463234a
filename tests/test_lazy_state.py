"""The lazily folded state: scopes are folded on first use and evicted past a budget,
without ever changing an answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from remem import Memory, RunContext
from remem.store import catalog

AGENT = "yuko"
USERS = [f"u:{i}" for i in range(8)]


def dm(user: str) -> RunContext:
    return RunContext.dm(AGENT, f"dm:{user}", user)


def build(data: Path) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    with Memory.open(data) as mem:
        for user in USERS:
            ids[user] = [
                mem.remember(dm(user), f"Likes topic {user} number {i} a lot.").id for i in range(4)
            ]
    return ids


def answers(mem: Memory) -> list[list[str]]:
    return [[n.id for n in mem.recall(dm(u), f"topic {u} number 2").notes] for u in USERS]


def test_eviction_keeps_memory_bounded_and_answers_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = build(tmp_path)
    with Memory.open(tmp_path) as mem:
        expected = answers(mem)
    monkeypatch.setattr(catalog, "MAX_LOADED_NOTES", 6)
    with Memory.open(tmp_path) as mem:
        state = mem._agent(dm(USERS[0])).sync()
        assert not state.notes._data  # nothing folded at open
        assert answers(mem) == expected
        assert len(state.notes._data) <= 4 + 6  # the scope in use plus the budget
        # A change to a note whose scope was evicted folds it again and applies the change.
        gone = ids[USERS[0]][2]
        assert gone not in state.notes._data
        mem.forget(dm(USERS[0]), gone)
        assert gone not in [n.id for n in mem.recall(dm(USERS[0]), "topic number 2").notes]
        # Reading every note (owner listing) walks through all scopes despite evictions.
        listed = mem.list(RunContext.owner(AGENT), status=None)
        assert len(listed) == 4 * len(USERS)
        assert answers(mem)[1:] == expected[1:]


def test_a_write_by_another_process_to_an_evicted_scope_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = build(tmp_path)
    monkeypatch.setattr(catalog, "MAX_LOADED_NOTES", 4)
    with Memory.open(tmp_path) as reader, Memory.open(tmp_path) as writer:
        answers(reader)  # folds and evicts scopes along the way
        target = ids[USERS[0]][0]
        writer.correct(dm(USERS[0]), target, "Likes gardening on Sundays.")
        assert reader.get(dm(USERS[0]), target).text == "Likes gardening on Sundays."
        assert reader.get(dm(USERS[0]), target).version == 2


def test_reading_every_note_skips_one_caught_mid_write() -> None:
    """A note another thread has cataloged but not folded yet (or has just erased) is
    left out of ``notes.values()`` instead of raising KeyError in the reader."""
    from remem.core.projection import scope_key
    from remem.store.catalog import CatalogState
    from remem.testing.contract import remembered

    state = CatalogState("a", loader=lambda positions: [])
    event = remembered("Folded normally.")
    state.record(event, 0)
    key = scope_key(event.scope, event.scope_id)
    state.ensure(key)
    # Cataloged in a loaded scope, not folded yet: what a reader can see mid-write.
    state.home["note_mid_write"] = key
    state.scopes[key]["note_mid_write"] = None
    assert [n.id for n in state.notes.values()] == [event.note_id]
    assert [i for i, _ in state.notes.items()] == [event.note_id]

"""When the recall indexes take what this process wrote.

A ``remember`` reaches the projection right after its fsync; the indexes take it
later, never earlier: before the next read, or once ``UNINDEXED_MAX`` events wait.
Other processes' new notes wait the same way; their forgets do not.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import remem.app.agent_state as agentlog
import remem.recall.embeddings as embeddings
from remem import Memory

from .helpers import Clock, dm_alice


@pytest.fixture
def lexical(data_dir: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Memory:
    monkeypatch.setattr(embeddings, "default_embedder", lambda: None)
    return Memory.open(data_dir, clock=clock)


def indexed_ids(mem: Memory) -> set[str]:
    """Note ids in the built lexical indexes, as they stand (no catch-up first)."""
    lexical = mem._agent(dm_alice()).lexical
    return {note_id for index in lexical.scopes.values() for note_id in index.ids}


def test_writes_wait_for_the_next_read_and_no_longer_than_the_bound(
    lexical: Memory,
) -> None:
    with lexical as mem:
        mem.remember(dm_alice(), "Alice keeps bees in the garden.")
        assert mem.recall(dm_alice(), "bees").notes  # builds the scope's index
        agent = mem._agent(dm_alice())
        written = [
            mem.remember(dm_alice(), f"Alice owns {i} blue teapots.")
            for i in range(agentlog.UNINDEXED_MAX + 5)
        ]
        assert 0 < len(agent._unindexed) <= agentlog.UNINDEXED_MAX
        waiting = {getattr(e, "note_id", None) for e in agent._unindexed}
        assert waiting.isdisjoint(indexed_ids(mem))
        assert {n.id for n in written} - waiting <= indexed_ids(mem)  # the bound flushed

        result = mem.recall(dm_alice(), f"{agentlog.UNINDEXED_MAX + 4} blue teapots")
        assert result.notes[0].id == written[-1].id  # the read took them first
        assert not agent._unindexed


def test_a_reader_in_another_thread_sees_a_note_written_just_before(
    lexical: Memory,
) -> None:
    with lexical as mem:
        mem.recall(dm_alice(), "anything")
        found: list[list[str]] = []

        def read(query: str) -> None:
            found.append([n.id for n in mem.recall(dm_alice(), query).notes])

        for i in range(20):
            note = mem.remember(dm_alice(), f"Alice visited lighthouse number {i}.")
            reader = threading.Thread(target=read, args=(f"lighthouse number {i}",))
            reader.start()
            reader.join()
            assert found[-1][0] == note.id


def test_another_process_forgetting_a_note_takes_it_out_at_this_ones_next_write(
    lexical: Memory, data_dir: Path, clock: Clock
) -> None:
    with lexical as mem, Memory.open(data_dir, clock=clock) as other:
        gone = mem.remember(dm_alice(), "Alice keeps bees in the garden.")
        mem.recall(dm_alice(), "bees")  # builds the scope's index, with the note in it
        assert gone.id in indexed_ids(mem)
        other.forget(dm_alice(), gone.id)
        mem.remember(dm_alice(), "Alice grows tomatoes.")  # catches up under the lock
        assert gone.id not in indexed_ids(mem)


def test_a_recall_sees_a_note_another_thread_wrote_after_its_catch_up(
    lexical: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recall caught up, then (before it read its candidates) another thread wrote:
    the new note is a candidate, so its index rows must be in place before relevance."""
    import remem.app.settings as settings

    with lexical as mem:
        for n in range(5):
            mem.remember(dm_alice(), f"Alice planted tulip bulb number {n} in the garden.")
        mem.recall(dm_alice(), "garden")  # the scope's index is built
        caught_up, go_on = threading.Event(), threading.Event()
        real_policy = settings.recall_policy

        def paused_policy(*args: object, **kwargs: object) -> object:
            caught_up.set()
            go_on.wait(10)
            return real_policy(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(settings, "recall_policy", paused_policy)
        found: list[str] = []
        reader = threading.Thread(
            target=lambda: found.extend(n.id for n in mem.recall(dm_alice(), "zeppelin").notes)
        )
        reader.start()
        assert caught_up.wait(10)
        monkeypatch.setattr(settings, "recall_policy", real_policy)
        note = mem.remember(dm_alice(), "Alice flew across the bay in a zeppelin.")
        go_on.set()
        reader.join(10)
        assert found and found[0] == note.id

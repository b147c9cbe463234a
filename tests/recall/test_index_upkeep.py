"""When the recall indexes take what this process wrote.

A ``remember`` reaches the projection right after its fsync; the indexes take it
later, never earlier: before the next read, or once ``UNINDEXED_MAX`` events wait.
Other processes' new notes wait the same way; their forgets do not.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import remem.agentlog as agentlog
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

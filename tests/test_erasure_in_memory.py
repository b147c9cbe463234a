"""After a forget and a compaction, the forgotten text is held by nothing in the process:
no projection, index, cache, memo, queue or embedder keeps a reference to it, and no file
of the data directory holds it."""

from __future__ import annotations

import gc
from pathlib import Path

from erasure.scan import files_holding, holders, new_marker
from remem import Memory, RunContext

AGENT = "yuko"


def _remember_and_recall(mem: Memory, ctx: RunContext, marker: str) -> str:
    note = mem.remember(ctx, f"Alice's childhood pet was a parrot called {marker}.")
    result = mem.recall(ctx, "childhood pet parrot")
    assert note.id in [n.id for n in result.notes]
    mem.recall(ctx, f"what was the parrot {marker} like?")  # the words of a query, too
    return note.id


def test_a_forgotten_and_compacted_note_leaves_no_text_in_memory(tmp_path: Path) -> None:
    marker = new_marker()
    alice = RunContext.dm(AGENT, "dm:alice", "discord:alice")
    owner = RunContext.owner(AGENT)
    with Memory.open(tmp_path) as mem:
        mem.remember(alice, "Alice likes sailing on weekends.")
        note_id = _remember_and_recall(mem, alice, marker)
        mem.compile(alice, "Any pets?")  # renders the note into a prompt
        mem.forget(alice, note_id)
        mem.recall(alice, "childhood pet parrot")  # the indexes, after the forget
        mem.compact(owner)
        gc.collect()
        assert holders(marker) == []
        kept = mem.recall(alice, "sailing")
        assert [n.text for n in kept.notes] == ["Alice likes sailing on weekends."]
    assert files_holding(tmp_path, marker) == []


def test_one_agents_compaction_drops_that_agents_memos(tmp_path: Path) -> None:
    """Memos of note text belong to one agent: compacting it leaves none of its erased
    text behind, even while another agent (never compacted) keeps working."""
    marker = new_marker()
    alice = RunContext.dm(AGENT, "dm:alice", "discord:alice")
    other = RunContext.dm("kenji", "dm:bob", "discord:bob")
    with Memory.open(tmp_path) as mem:
        mem.remember(other, "Bob keeps bees.")
        mem.recall(other, "bees")
        note_id = _remember_and_recall(mem, alice, marker)
        mem.forget(alice, note_id)
        mem.compact(RunContext.owner(AGENT))
        mem.recall(other, "bees")
        gc.collect()
        assert holders(marker) == []

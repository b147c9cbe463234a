"""After a forget and a compaction, the forgotten text is held by nothing in the process:
no projection, index, cache, queue or embedder keeps a reference to it."""

from __future__ import annotations

import gc
import random
import string
from pathlib import Path

from remem import Memory, RunContext

AGENT = "yuko"


def _holders(marker: str) -> list[str]:
    """Types of the live objects that reference a string holding ``marker`` (other
    than the bare marker itself)."""
    found = []
    for obj in gc.get_objects():
        refs = gc.get_referents(obj)
        if isinstance(obj, dict):  # the collector does not visit a dict's str keys
            refs = [*refs, *obj]
        for ref in refs:
            if type(ref) is str and marker in ref and ref != marker:
                found.append(type(obj).__name__)
    return found


def _remember_and_recall(mem: Memory, ctx: RunContext, marker: str) -> str:
    note = mem.remember(ctx, f"Alice's childhood pet was a parrot called {marker}.")
    result = mem.recall(ctx, "childhood pet parrot")
    assert note.id in [n.id for n in result.notes]
    return note.id


def test_a_forgotten_and_compacted_note_leaves_no_text_in_memory(tmp_path: Path) -> None:
    marker = "".join(random.choice(string.ascii_lowercase) for _ in range(14))
    alice = RunContext.dm(AGENT, "dm:alice", "discord:alice")
    owner = RunContext.owner(AGENT)
    with Memory.open(tmp_path) as mem:
        mem.remember(alice, "Alice likes sailing on weekends.")
        note_id = _remember_and_recall(mem, alice, marker)
        mem.forget(alice, note_id)
        mem.recall(alice, "childhood pet parrot")  # the indexes, after the forget
        mem.compact(owner)
        gc.collect()
        assert _holders(marker) == []
        kept = mem.recall(alice, "sailing")
        assert [n.text for n in kept.notes] == ["Alice likes sailing on weekends."]
    assert not any(marker in p.read_text(errors="replace") for p in tmp_path.rglob("*.*"))

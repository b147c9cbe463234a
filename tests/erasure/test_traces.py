"""Traces keep no text (DESIGN §4.1): not of a recall query, not of a compiled message, so
what a member typed (a secret, a fact since forgotten) is in no file, and a trace line's
size does not depend on what was said."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from remem import Memory, RunContext

from .scan import files_holding, holders, new_marker

AGENT = "yuko"


def _alice() -> RunContext:
    return RunContext.dm(AGENT, "dm:alice", "discord:alice")


def test_no_query_or_message_text_reaches_any_file(tmp_path: Path) -> None:
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        mem.remember(_alice(), "Alice's bank is Tulip Savings.")
        rec = mem.recall(_alice(), f"my bank password is {marker}, which bank do I use?")
        # (only the run id is kept here: the prompt itself holds the message, by design)
        prompt_run = mem.compile(_alice(), f"remind me: code {marker} for the tulip account").run_id
        # explain still answers from the stored trace: ids, scores, reasons.
        trace = mem.explain(_alice(), rec.run_id)
        assert [i for i, _ in trace.selected] == [n.id for n in rec.notes]
        assert trace.query_chars == len(f"my bank password is {marker}, which bank do I use?")
        assert mem.explain(_alice(), prompt_run).run_id == prompt_run
        assert files_holding(tmp_path, marker) == []
        mem.compact(RunContext.owner(AGENT))
        gc.collect()
        assert holders(marker) == []
    assert files_holding(tmp_path, marker) == []


def test_compaction_scrubs_text_an_older_trace_line_holds(tmp_path: Path) -> None:
    """A trace line written with text (by an older version, or damaged) keeps none of it
    after a compaction; its ids and reasons stay readable."""
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        mem.remember(_alice(), "Alice likes tulips.")
        rec = mem.recall(_alice(), "tulips")
        older = {
            "type": "recall",
            "run_id": "run_old",
            "agent": AGENT,
            "ts": "2026-07-10T12:00:00Z",
        }
        older |= {"run_kind": "dm", "actor": "discord:alice", "role": "member"}
        older |= {"channel": "dm:alice", "query": f"secret {marker}", "selected": []}
        mem.backend.trace_log(AGENT).append(older)
        assert files_holding(tmp_path, marker) == ["agents/yuko/traces.jsonl"]
        mem.compact(RunContext.owner(AGENT))
        assert files_holding(tmp_path, marker) == []
        assert [i for i, _ in mem.explain(_alice(), rec.run_id).selected] == [rec.notes[0].id]


def test_a_trace_line_is_small_whatever_the_query(tmp_path: Path) -> None:
    """The bound documented in remem.recall.trace: about 500 bytes + ids, no text."""
    with Memory.open(tmp_path) as mem:
        for i in range(5):
            mem.remember(_alice(), f"Alice's note number {i} is about tulips.")
        mem.recall(_alice(), "tulips " * 20_000)
        lines = (tmp_path / "agents" / AGENT / "traces.jsonl").read_bytes().splitlines()
    recall_lines = [line for line in lines if json.loads(line)["type"] == "recall"]
    assert len(recall_lines) == 1
    assert len(recall_lines[0]) < 500 + 5 * 40 + 200

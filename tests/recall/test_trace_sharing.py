"""Traces store what many recalls share once: a recall's line names its candidate set.

A recall over 600 eligible notes used to repeat every unselected id in its trace
line. The filters' verdicts and the list of kept candidates are the same for every
recall until the eligible scopes change, so they are stored once (a ``shared``
line) and each recall line names them; ``explain`` folds them back in, from memory
or from the file, in this process or another.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from remem import Memory, RunContext
from remem.core.events import unseal

from .helpers import AGENT, Clock, owner, reasons


def _lines(data_dir: Path) -> list[dict[str, object]]:
    path = data_dir / "agents" / AGENT / "traces.jsonl"
    return [unseal(line, "trace") for line in path.read_bytes().splitlines()]


def _seed(mem: Memory, clock: Clock, n: int = 60) -> list[str]:
    ids = []
    for i in range(n):
        ids.append(mem.remember(owner(), f"Agent fact number {i}.", scope="agent").id)
        clock.advance(hours=1)
    return ids


def test_recall_lines_stay_small_and_explain_is_complete(
    mem: Memory, clock: Clock, data_dir: Path
) -> None:
    ids = _seed(mem, clock)
    ctx = RunContext.agent_only(AGENT)
    runs = [mem.recall(ctx, q).run_id for q in ("fact number", "number 7", "")]
    lines = _lines(data_dir)
    shared = [r for r in lines if r["type"] == "shared"]
    recalls = [r for r in lines if r["type"] == "recall"]
    assert len(shared) == 1 and len(recalls) == 3
    for record in recalls:
        # 20 selected, 40 over the note limit: none of the 40 is repeated in the line.
        assert len(orjson.dumps(record)) < 2_500
        assert "over_note_limit" not in record["excluded_by_reason"]  # type: ignore[operator]
    for run_id in runs:
        got = reasons(mem, run_id)
        assert len(got) == 40 and set(got.values()) == {"over_note_limit"}
        trace = mem.explain(owner(), run_id)
        assert sorted(trace.candidates) == sorted(ids)


def test_a_new_candidate_set_after_a_write(mem: Memory, clock: Clock, data_dir: Path) -> None:
    _seed(mem, clock, 25)
    ctx = RunContext.agent_only(AGENT)
    mem.recall(ctx, "fact")
    extra = mem.remember(owner(), "Agent fact added later.", scope="agent")
    run_id = mem.recall(ctx, "fact").run_id
    shared = [r for r in _lines(data_dir) if r["type"] == "shared"]
    assert len(shared) == 2
    assert extra.id in mem.explain(owner(), run_id).candidates


def test_another_process_reads_the_shared_set_from_the_file(
    mem: Memory, clock: Clock, data_dir: Path
) -> None:
    _seed(mem, clock, 30)
    run_id = mem.recall(RunContext.agent_only(AGENT), "fact number").run_id
    with Memory.open(data_dir, clock=clock) as other:  # nothing of it in memory
        got = reasons(other, run_id)
    assert len(got) == 10 and set(got.values()) == {"over_note_limit"}


def test_a_replaced_trace_file_gets_the_shared_set_again(
    mem: Memory, clock: Clock, data_dir: Path
) -> None:
    _seed(mem, clock, 30)
    ctx = RunContext.agent_only(AGENT)
    mem.recall(ctx, "fact")
    (data_dir / "agents" / AGENT / "traces.jsonl").unlink()
    run_id = mem.recall(ctx, "fact").run_id
    assert [r["type"] for r in _lines(data_dir)] == ["shared", "recall"]
    with Memory.open(data_dir, clock=clock) as other:
        assert len(reasons(other, run_id)) == 10


def test_a_lost_shared_set_leaves_the_recalls_own_exclusions(
    mem: Memory, clock: Clock, data_dir: Path
) -> None:
    _seed(mem, clock, 30)
    run_id = mem.recall(RunContext.agent_only(AGENT), "fact").run_id
    path = data_dir / "agents" / AGENT / "traces.jsonl"
    kept = [line for line in path.read_bytes().splitlines(keepends=True) if b'"shared"' not in line]
    path.write_bytes(b"".join(kept))
    with Memory.open(data_dir, clock=clock) as other:
        trace = other.explain(owner(), run_id)
    assert len(trace.selected) == 20 and trace.excluded == []

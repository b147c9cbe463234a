"""``seq`` in the JSONL log: lines written before it existed are numbered by line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson

from remem import Memory, RunContext
from remem.core.events import encode
from remem.store.jsonl import JsonlEventLog
from remem.testing.contract import remembered


def _old_log(path: Path, count: int) -> list[bytes]:
    """A log as remem wrote it before seq: no line carries one."""
    path.parent.mkdir(parents=True)
    events = [replace(remembered(f"Old fact {i}."), expires_at=None) for i in range(count)]
    lines = [encode(ev) for ev in events]
    assert all(b'"seq"' not in line for line in lines)
    path.write_bytes(b"".join(lines))
    return lines


def test_an_old_log_reads_with_line_numbers_as_seq(tmp_path: Path) -> None:
    path = tmp_path / "agents" / "yuko" / "memory.jsonl"
    _old_log(path, 3)
    events = JsonlEventLog(path).read_new().events
    assert [ev.seq for ev in events] == [1, 2, 3]
    log = JsonlEventLog(path)
    seen: list[tuple[int, int]] = []
    log.scan_new(lambda data, pos: seen.append((data["seq"], pos)), lambda: None)
    assert [seq for seq, _ in seen] == [1, 2, 3]
    # Read back by position (the lazy fold): the line is numbered by counting.
    assert [ev.seq for ev in log.read_at([seen[2][1], seen[0][1]])] == [3, 1]
    assert [ev.seq for ev in log.history(events[1].note_id)] == [2]
    # An append continues the numbering, and only the new line carries its seq.
    new = remembered("Written after the upgrade.")
    with log.transaction() as txn:
        assert txn.append([new])[0].seq == 4
    last = orjson.loads(path.read_bytes().splitlines()[-1])
    assert last["seq"] == 4


def test_compacting_an_old_log_writes_each_events_seq(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _old_log(data / "agents" / "yuko" / "memory.jsonl", 3)
    ctx = RunContext.owner("yuko")
    mem = Memory.open(data)
    notes = sorted(mem.list(ctx, status=None), key=lambda n: n.text)
    assert [ev.seq for ev in mem.history(ctx, notes[1].id)] == [2]
    mem.forget(ctx, notes[0].id)  # seq 4
    mem.compact(ctx)  # drops line 1 and the forget; adds an erasure marker
    mem.close()
    log = (data / "agents" / "yuko" / "memory.jsonl").read_bytes()
    lines = [orjson.loads(line) for line in log.splitlines()]
    assert [(line["op"], line["seq"]) for line in lines] == [
        ("remember", 2),
        ("remember", 3),
        ("erased", 5),
    ]
    again = Memory.open(data)
    assert [ev.seq for ev in again.history(ctx, notes[2].id)] == [3]
    note = again.remember(ctx, "After compaction.", scope="agent")
    assert [ev.seq for ev in again.history(ctx, note.id)] == [6]

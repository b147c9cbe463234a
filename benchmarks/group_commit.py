"""Group commit benchmark: 32 writer threads on one agent, in one process, on against off.

    python benchmarks/group_commit.py [--json] [--threads N] [--seconds S] [--reps R]

Measures, on one temporary directory (``--dir`` for another filesystem):

- ``raw_fsync_per_s``: ``os.write`` + ``os.fsync`` of ~200-byte lines on one raw
  descriptor, one writer (the best one durable line per write can do);
- ``on_per_s``: durable ``Memory.remember`` calls per second from ``--threads``
  threads writing to one agent (each thread a member writing personal notes), each
  acknowledged after the fsync covering it, with group commit (the default: writes
  waiting for the agent's log share one write + fsync);
- ``off_per_s``: the same with group commit off (``AgentLog.group_commit = False``:
  one write + fsync per remember, the code before it);
- ``writes_per_fsync``: the mean group size with it on.

Each rate is the median of ``--reps`` runs (raw, on and off alternate within a run).
Targets (issue 13): on ≥ 2 × off, and on ≥ raw single-writer write + fsync.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from remem import Memory, RunContext
from remem.app.agent_state import AgentLog
from remem.store import syscalls

OWNER = RunContext.owner("bench")


def raw_rate(folder: Path, seconds: float) -> float:
    """One writer: ``write`` + ``fsync`` of a ~200-byte line, as many as fit in ``seconds``."""
    path = folder / "raw.log"
    line = b"x" * 199 + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            os.write(fd, line)
            os.fsync(fd)
            count += 1
        return count / (time.perf_counter() - start)
    finally:
        os.close(fd)
        path.unlink()


def writers_rate(folder: Path, threads: int, seconds: float, group: bool) -> dict[str, float]:
    """``threads`` threads remembering distinct notes on one agent for ``seconds``."""
    AgentLog.group_commit = group
    fsyncs = [0]
    real = syscalls.fsync

    def counted(fd: int) -> None:
        fsyncs[0] += 1
        real(fd)

    data = Path(tempfile.mkdtemp(dir=folder))
    try:
        with Memory.open(data, embedder=None) as mem:
            mem.remember(OWNER, "warm up", scope="agent")
            counts = [0] * threads
            stop = threading.Event()
            start = threading.Barrier(threads + 1)

            def work(i: int) -> None:
                # One member each (its own user scope: no scope reaches its note limit).
                ctx = RunContext.dm("bench", f"dm:w{i}", f"user:w{i}")
                start.wait()
                n = 0
                while not stop.is_set():
                    mem.remember(ctx, f"writer {i} note {n} of the run")
                    n += 1
                counts[i] = n

            pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
            for t in pool:
                t.start()
            syscalls.fsync = counted
            start.wait()
            began = time.perf_counter()
            time.sleep(seconds)
            stop.set()
            for t in pool:
                t.join()
            elapsed = time.perf_counter() - began
            syscalls.fsync = real
        total = sum(counts)
        return {"per_s": total / elapsed, "writes_per_fsync": total / max(fsyncs[0], 1)}
    finally:
        syscalls.fsync = real
        AgentLog.group_commit = True
        _remove(data)


def _remove(path: Path) -> None:
    for child in sorted(path.rglob("*"), key=lambda p: -len(p.parts)):
        child.rmdir() if child.is_dir() else child.unlink()
    path.rmdir()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(dir=args.dir))
    raw, on, off, sizes = [], [], [], []
    try:
        for _ in range(args.reps):
            raw.append(raw_rate(folder, args.seconds))
            got = writers_rate(folder, args.threads, args.seconds, True)
            on.append(got["per_s"])
            sizes.append(got["writes_per_fsync"])
            off.append(writers_rate(folder, args.threads, args.seconds, False)["per_s"])
    finally:
        _remove(folder)
    result = {
        "threads": args.threads,
        "raw_fsync_per_s": statistics.median(raw),
        "on_per_s": statistics.median(on),
        "off_per_s": statistics.median(off),
        "writes_per_fsync": statistics.median(sizes),
        "runs": {"raw": raw, "on": on, "off": off},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
    }
    result["on_vs_off"] = result["on_per_s"] / result["off_per_s"]
    result["on_vs_raw"] = result["on_per_s"] / result["raw_fsync_per_s"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where to measure (default: /tmp)")
    args = parser.parse_args()
    result = measure(args)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return
    rows = [
        ("raw write+fsync, 1 writer", f"{result['raw_fsync_per_s']:,.0f}/s"),
        (f"remember, {args.threads} threads, group commit on", f"{result['on_per_s']:,.0f}/s"),
        (f"remember, {args.threads} threads, group commit off", f"{result['off_per_s']:,.0f}/s"),
        ("writes per fsync (on)", f"{result['writes_per_fsync']:.1f}"),
        ("on / off (target ≥ 2)", f"{result['on_vs_off']:.2f}"),
        ("on / raw (target ≥ 1)", f"{result['on_vs_raw']:.2f}"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>12}")
    print(f"machine: {result['machine']}")


if __name__ == "__main__":
    main()

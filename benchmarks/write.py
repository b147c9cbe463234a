"""Write-path benchmark: durable remembers against the raw fsync rate, and opening a big log.

    python benchmarks/write.py [--json] [--events N] [--open-events N] [--dir DIR]

Measures, on one temporary directory (default: under /tmp; pass ``--dir`` to
measure another filesystem — every figure uses the same one):

- ``fsync_per_s``: the baseline, ``os.write`` + ``os.fsync`` of ~200-byte lines
  on one raw descriptor (the best a durable one-line-per-write log can do);
- ``remember_per_s``: durable ``Memory.remember`` calls per second in one
  process (distinct texts, DM context, every call fsynced before it returns);
- ``remember_per_s_4proc``: the same, aggregated over 4 processes sharing one
  data directory and one agent (each its own ``Memory``, serialized by the
  log's ``flock``; each catches up with the others' events under the lock);
- ``open_1m_s``: ``Memory.open`` + the first ``list`` of the agent scope, which
  catches up with the whole log (every line read and checked; how much is
  folded then is the projection's business) for an agent whose log holds
  1,000,000 events, generated directly as sealed lines with
  :func:`remem.core.events.encode` (~90% ``Remembered`` over 20,000 user
  scopes, plus corrections and forgets). The first open also builds the caches
  kept next to the log; ``open_1m_cold_s`` / ``open_1m_warm_s`` split the runs.
  Extras: ``list_all_after_open_s`` (then list every note: every scope
  materialized) and the floors ``open_breakdown.scan_s`` (read + checksum +
  JSON of every line) and ``open_breakdown.decode_s`` (also build every event).

Rates are medians over ``--reps`` runs; within a run the baseline and the
single-process remembers alternate in blocks of 100 writes (on the same directory,
texts made before the clock starts), and ``remember_vs_fsync`` is the median of the
per-run ratios (``remember_vs_fsync_runs``), so a shared machine's slow moments hit
both sides. The open is timed ``--open-reps`` times
(median). ``--json`` prints one JSON object instead of the table;
``--profile`` adds a cProfile of the 1M open (top functions by own time).
Targets (issue): remember_per_s ≥ fsync_per_s / 2; open_1m_s < 5.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import multiprocessing as mp
import os
import platform
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from remem import Memory, RunContext
from remem.core.events import Corrected, Event, Forgotten, Remembered, encode
from remem.core.ids import new_id
from remem.core.model import Basis, Kind, Scope, Source, Status
from remem.store.jsonl import JsonlEventLog

AGENT = "bench"
_WORDS = [
    "replies",
    "short",
    "long",
    "metric",
    "units",
    "morning",
    "meetings",
    "python",
    "rust",
    "reports",
    "weekly",
    "dashboard",
    "sales",
    "region",
    "north",
    "south",
    "coffee",
    "tea",
    "lisbon",
    "berlin",
    "tokyo",
    "quiet",
    "formal",
    "casual",
    "bullet",
    "points",
    "summaries",
    "tables",
    "charts",
    "deadlines",
    "friday",
    "monday",
    "invoices",
    "travel",
]


def _text(rng: random.Random, i: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))
    return f"Prefers {words} (item {i})."


# -- baseline -----------------------------------------------------------------------------


_BASELINE_LINE = (b'{"op":"remember","note":"' + b"x" * 160 + b'"}\n')[:199] + b"\n"
#: Writes per block: the baseline and remember alternate block by block within a rep.
BLOCK = 100


def _fsync_block(fd: int, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        os.write(fd, _BASELINE_LINE)
        os.fsync(fd)
    return time.perf_counter() - start


# -- remember -------------------------------------------------------------------------------


def bench_pair(root: Path, n: int, seed: int) -> tuple[float, float]:
    """The baseline and durable remembers, ``n`` of each, alternating in blocks of
    ``BLOCK`` on one directory, so that a busy moment of a shared machine hits both
    sides alike; returns (fsync per second, remembers per second)."""
    data = root / f"remember-{seed}"
    path = root / f"fsync-baseline-{seed}.log"
    rng = random.Random(seed)
    user = f"bench:u{seed}"
    ctx = RunContext.dm(agent=AGENT, channel=f"bench:dm-{user}", user=user)
    fsync_s = remember_s = 0.0
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        with Memory.open(data) as mem:
            mem.remember(ctx, f"Warm-up note for {user}.")  # opens the log and catches up
            for start in range(0, n, BLOCK):
                count = min(BLOCK, n - start)
                texts = [_text(rng, start + i) for i in range(count)]  # before the clock
                fsync_s += _fsync_block(fd, count)
                began = time.perf_counter()
                for text in texts:
                    mem.remember(ctx, text)
                remember_s += time.perf_counter() - began
    finally:
        os.close(fd)
        path.unlink()
    shutil.rmtree(data)
    return n / fsync_s, n / remember_s


def _worker(data: str, user: str, n: int, seed: int, barrier: Any, out: Any) -> None:
    rng = random.Random(seed)
    with Memory.open(data) as mem:
        ctx = RunContext.dm(agent=AGENT, channel=f"bench:dm-{user}", user=user)
        mem.remember(ctx, f"Warm-up note for {user}.")
        texts = [_text(rng, i) for i in range(n)]
        barrier.wait()
        start = time.monotonic()
        for text in texts:
            mem.remember(ctx, text)
        out.put((start, time.monotonic()))


def bench_remember_procs(root: Path, n: int, procs: int, seed: int) -> float:
    """Aggregate rate: all procs' remembers / (last finish - first start)."""
    data = root / f"remember-{procs}p-{seed}"
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    per = max(1, n // procs)
    workers = [
        ctx.Process(target=_worker, args=(str(data), f"bench:p{i}", per, seed + i, barrier, out))
        for i in range(procs)
    ]
    for w in workers:
        w.start()
    spans = [out.get(timeout=600) for _ in workers]
    for w in workers:
        w.join()
        if w.exitcode != 0:
            raise RuntimeError(f"benchmark worker failed with exit code {w.exitcode}")
    shutil.rmtree(data)
    return per * procs / (max(e for _, e in spans) - min(s for s, _ in spans))


# -- opening a big log ----------------------------------------------------------------------


def generate_log(path: Path, events: int, seed: int) -> dict[str, int]:
    """Write ``events`` sealed lines: ~90% remembers over many user scopes, plus changes."""
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    users = max(1, events // 50)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    notes: list[str] = []
    counts = {"remember": 0, "correct": 0, "forget": 0}
    buf: list[bytes] = []
    with open(path, "wb") as fh:
        for i in range(events):
            ts = t0 + timedelta(seconds=i)
            env: dict[str, Any] = {"eid": new_id("ev"), "ts": ts, "actor": None, "role": "member"}
            env["seq"] = i + 1  # numbered as the event store numbers what it appends
            r = rng.random()
            ev: Event
            if notes and r < 0.06:
                ev = Corrected(note_id=rng.choice(notes), text=_text(rng, i), **env)
                counts["correct"] += 1
            elif notes and r < 0.10:
                ev = Forgotten(note_id=notes.pop(rng.randrange(len(notes))), **env)
                counts["forget"] += 1
            else:
                user = f"discord:{rng.randrange(users)}"
                env["actor"] = user
                ev = Remembered(
                    note_id=new_id("note"),
                    scope=Scope.USER,
                    scope_id=user,
                    kind=Kind.PREFERENCE,
                    text=_text(rng, i),
                    basis=Basis.EXPLICIT,
                    status=Status.ACTIVE,
                    source=Source(channel_id=f"discord:dm{user}", author_id=user),
                    **env,
                )
                notes.append(ev.note_id)
                counts["remember"] += 1
            buf.append(encode(ev))
            if len(buf) >= 10_000:
                fh.write(b"".join(buf))
                buf.clear()
        fh.write(b"".join(buf))
    counts["users"] = users
    counts["bytes"] = path.stat().st_size
    return counts


def open_and_list(data: Path, *, list_all: bool = False) -> dict[str, float]:
    """Time ``Memory.open`` + the first ``list`` of the agent (the agent scope).

    With ``list_all``, then also time listing every note of every status, which
    makes every scope materialize (a lazy projection pays for that here).
    """
    owner = RunContext.owner(AGENT)
    start = time.perf_counter()
    with Memory.open(data) as mem:
        mem.list(owner, scope="agent")
        out = {"open_s": time.perf_counter() - start}
        if list_all:
            start = time.perf_counter()
            out["notes"] = len(mem.list(owner, status=None))
            out["list_all_s"] = time.perf_counter() - start
    return out


def open_breakdown(path: Path) -> dict[str, float]:
    """Floors for any open, through the EventLog protocol alone (separate runs).

    ``scan_s``: read every line, check its checksum and parse its JSON (what a
    catalog scan must do at least); ``decode_s``: also build every event object.
    """
    start = time.perf_counter()
    log = JsonlEventLog(path)
    log.scan_new(lambda data, pos: None, lambda: None)
    scan_s = time.perf_counter() - start
    log.close()
    start = time.perf_counter()
    log = JsonlEventLog(path)
    count = len(log.read_new().events)
    decode_s = time.perf_counter() - start
    log.close()
    return {"scan_s": scan_s, "decode_s": decode_s, "events": count}


def profile_open(data: Path, top: int = 25) -> str:
    prof = cProfile.Profile()
    prof.enable()
    open_and_list(data)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


# -- driver ---------------------------------------------------------------------------------


def _median(fn: Callable[[int], float], reps: int) -> tuple[float, list[float]]:
    runs = [fn(rep) for rep in range(reps)]
    return statistics.median(runs), runs


def _filesystem(path: Path) -> str:
    best = ("?", "?")
    real = str(path.resolve())
    try:
        with open("/proc/mounts") as fh:
            for line in fh:
                dev, mnt, fstype = line.split()[:3]
                if real.startswith(mnt.rstrip("/") + "/") and len(mnt) >= len(best[0]):
                    best = (mnt, f"{fstype} on {dev}")
    except OSError:
        pass
    return f"{best[1]} (mount {best[0]})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object, no table")
    ap.add_argument("--events", type=int, default=1000, help="writes per rate measurement")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of each rate (median)")
    ap.add_argument("--procs", type=int, default=4, help="processes for the aggregate rate")
    ap.add_argument("--open-events", type=int, default=1_000_000, help="events in the big log")
    ap.add_argument("--open-reps", type=int, default=3, help="repetitions of the open (median)")
    ap.add_argument("--dir", default=None, help="parent of the temporary directory (/tmp)")
    ap.add_argument("--out", default=None, help="also write the JSON result to this file")
    ap.add_argument("--profile", action="store_true", help="cProfile the big open")
    args = ap.parse_args(argv)

    say: Callable[[str], None] = (
        (lambda s: print(s, file=sys.stderr, flush=True)) if args.json else (lambda s: None)
    )
    root = Path(tempfile.mkdtemp(prefix="remem-bench-write-", dir=args.dir))
    result: dict[str, Any] = {
        "dir": str(root),
        "filesystem": _filesystem(root),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "events": args.events,
        "reps": args.reps,
        "embeddings": os.environ.get("REMEM_EMBEDDINGS", "static (default)"),
        "loadavg_start": os.getloadavg(),
    }
    try:
        say(f"measuring in {root}")
        # The baseline and remember alternate, block by block, so that both see the same
        # moments of a shared machine; the ratio is the median of the per-rep ratios.
        fsync_runs, remember_runs = [], []
        for rep in range(args.reps):
            fsync_rate, remember_rate = bench_pair(root, args.events, seed=rep)
            fsync_runs.append(fsync_rate)
            remember_runs.append(remember_rate)
        result["fsync_per_s"], result["fsync_runs"] = statistics.median(fsync_runs), fsync_runs
        result["remember_per_s"] = statistics.median(remember_runs)
        result["remember_runs"] = remember_runs
        result["remember_vs_fsync_runs"] = [
            r / f for r, f in zip(remember_runs, fsync_runs, strict=True)
        ]
        result["remember_per_s_4proc"], result["remember_4proc_runs"] = _median(
            lambda r: bench_remember_procs(root, args.events, args.procs, seed=100 * (r + 1)),
            args.reps,
        )
        result["procs"] = args.procs
        say(f"generating a log of {args.open_events:,} events")
        data = root / "big"
        log_path = data / "agents" / AGENT / "memory.jsonl"
        start = time.perf_counter()
        result["open_log"] = generate_log(log_path, args.open_events, seed=7)
        result["open_log"]["generate_s"] = round(time.perf_counter() - start, 2)
        say("timing the open")
        opens = [open_and_list(data) for _ in range(max(0, args.open_reps - 1))]
        opens.append(open_and_list(data, list_all=True))
        runs = [o["open_s"] for o in opens]
        result["list_all_after_open_s"] = opens[-1]["list_all_s"]
        result["list_all_notes"] = opens[-1]["notes"]
        # The first open also builds the caches kept next to the log (e.g. the recall
        # vector cache); later opens reuse them. Both are reported; open_1m_s is the
        # median over every run.
        result["open_1m_s"] = statistics.median(runs)
        result["open_1m_cold_s"] = runs[0]
        result["open_1m_warm_s"] = statistics.median(runs[1:]) if len(runs) > 1 else None
        result["open_runs"] = runs
        result["open_events"] = args.open_events
        result["open_breakdown"] = open_breakdown(log_path)
        if args.profile:
            result["open_profile"] = profile_open(data)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    result["loadavg_end"] = os.getloadavg()
    result["remember_vs_fsync"] = statistics.median(result["remember_vs_fsync_runs"])
    result["remember_4proc_vs_fsync"] = result["remember_per_s_4proc"] / result["fsync_per_s"]
    result["targets"] = {
        "remember_per_s >= fsync_per_s / 2": result["remember_vs_fsync"] >= 0.5,
        "open_1m_s < 5": result["open_1m_s"] < 5.0,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result))
    else:
        print(render(result))
    return 0


def render(r: dict[str, Any]) -> str:
    fs = r["fsync_per_s"]
    log = r["open_log"]
    bd = r["open_breakdown"]
    rows = [
        ("raw os.write+fsync, ~200 B lines", f"{fs:,.0f} /s", "1.00", "baseline"),
        (
            "Memory.remember, 1 process",
            f"{r['remember_per_s']:,.0f} /s",
            f"{r['remember_vs_fsync']:.2f}",
            "target ≥ 0.50: "
            + ("met" if r["targets"]["remember_per_s >= fsync_per_s / 2"] else "NOT met"),
        ),
        (
            f"Memory.remember, {r['procs']} processes (aggregate)",
            f"{r['remember_per_s_4proc']:,.0f} /s",
            f"{r['remember_4proc_vs_fsync']:.2f}",
            "",
        ),
        (
            f"open + first list, {r['open_events']:,} events (median)",
            f"{r['open_1m_s']:.2f} s",
            "",
            "target < 5 s: " + ("met" if r["targets"]["open_1m_s < 5"] else "NOT met"),
        ),
        ("  first open (builds caches)", f"{r['open_1m_cold_s']:.2f} s", "", ""),
    ]
    if r["open_1m_warm_s"] is not None:
        rows.append(("  later opens (median)", f"{r['open_1m_warm_s']:.2f} s", "", ""))
    rows += [
        (
            f"  then list all {r['list_all_notes']:,} notes",
            f"{r['list_all_after_open_s']:.2f} s",
            "",
            "(last run: every scope materialized)",
        ),
        ("floor: scan + check every line", f"{bd['scan_s']:.2f} s", "", "(EventLog.scan_new)"),
        ("floor: decode every event", f"{bd['decode_s']:.2f} s", "", "(EventLog.read_new)"),
    ]
    head = ("measure", "result", "÷ fsync", "")
    w = [max(len(row[i]) for row in [head, *rows]) for i in range(4)]
    lines = [
        f"write benchmark — {r['dir']} ({r['filesystem']}), Python {r['python']}, "
        f"{r['cpus']} CPUs; embeddings: {r['embeddings']}; "
        f"rates: median of {r['reps']} × {r['events']} writes",
        "  ".join(h.ljust(w[i]) for i, h in enumerate(head)).rstrip(),
        "  ".join("-" * w[i] for i in range(4)),
    ]
    lines += ["  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    lines.append(
        f"big log: {log['remember']:,} remembers over {log['users']:,} user scopes, "
        f"{log['correct']:,} corrections, {log['forget']:,} forgets, "
        f"{log['bytes'] / 1e6:.0f} MB (generated in {log['generate_s']} s); "
        f"open runs: {', '.join(f'{t:.2f}' for t in r['open_runs'])} s"
    )
    lines.append(
        "load average at start / end: "
        + " / ".join(", ".join(f"{x:.1f}" for x in r[k]) for k in ("loadavg_start", "loadavg_end"))
        + f" (on {r['cpus']} CPUs; other processes skew every figure)"
    )
    if "open_profile" in r:
        lines += ["", "cProfile of the open (top by own time):", r["open_profile"]]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

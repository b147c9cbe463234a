"""PostgreSQL beside the embedded JSONL store, on the same machine in the same run.

    python benchmarks/postgres.py [--json] [--writes N] [--notes N] [--open-notes N]

For each backend (a fresh JSONL directory under /tmp; a fresh database on the
PostgreSQL of :mod:`remem.testing.postgres_server`: the one at 127.0.0.1:5432, else one
started for the run):

- ``remember_per_s_1`` / ``remember_per_s_8``: durable ``Memory.remember`` calls per
  second from 1 and from 8 threads of one process on one agent (group commit shares a
  commit between waiting writers; every call is durable before it returns);
- ``recall_p50_ms`` / ``recall_p99_ms``: ``Memory.recall`` latency over ``--notes`` notes
  (lexical recall, no embedder), 200 queries of two words;
- ``open_cold_s``: ``Memory.open`` + the first ``list`` (every scope) of an agent whose
  log holds ``--open-notes`` notes over 2,000 user scopes (appended straight through the
  event store in batches of 5,000): the whole log is folded, and the catalog snapshot
  written; ``open_warm_s``: the same again (median of 2), resuming from the snapshot
  and reading each scope's events as the listing reaches it; ``open_one_scope_s``: open
  + the list of one user's notes (what a host serving one conversation pays).

``--json`` prints one object instead of the table. Ranking runs in Python on both.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from remem import Memory, RunContext
from remem.core.events import Remembered
from remem.core.ids import new_id
from remem.core.model import Basis, Kind, Scope, Source, Status
from remem.store.open import open_backend
from remem.testing import postgres_server

NOW = datetime(2026, 1, 1, tzinfo=UTC)
_WORDS = [
    "tea",
    "coffee",
    "jazz",
    "rust",
    "python",
    "hiking",
    "chess",
    "sushi",
    "trains",
    "rain",
    "autumn",
    "piano",
    "sql",
    "maps",
    "cats",
    "dogs",
    "poetry",
    "tennis",
    "garlic",
    "ramen",
    "bikes",
    "vinyl",
    "salsa",
    "yoga",
    "opera",
    "kayak",
    "mango",
]


def _text(rng: random.Random, i: int) -> str:
    return f"Prefers {' '.join(rng.choice(_WORDS) for _ in range(rng.randint(4, 10)))} ({i})."


def remember_rate(location: str, writes: int, threads: int) -> float:
    """Durable remembers per second from ``threads`` threads on one agent."""
    rng = random.Random(threads)
    texts = [_text(rng, i) for i in range(writes)]
    with Memory.open(location, embedder=False) as mem:
        agent = f"writer{threads}"
        mem.remember(RunContext.owner(agent), "Warm-up.", scope="agent")
        per = writes // threads

        def run(k: int) -> None:
            ctx = RunContext.dm(agent, f"discord:dm{k}", f"discord:{k}")
            for text in texts[k * per : (k + 1) * per]:
                mem.remember(ctx, text, scope="user")

        workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return per * threads / (time.perf_counter() - start)


def recall_latency(location: str, notes: int) -> tuple[float, float]:
    """p50 and p99 of ``recall`` in ms over ``notes`` agent-wide notes."""
    rng = random.Random(7)
    ctx = RunContext.owner("reader")
    with Memory.open(location, embedder=False) as mem:
        for i in range(notes):
            mem.remember(ctx, _text(rng, i), scope="agent")
        mem.recall(ctx, "tea jazz")  # warm: the indexes are built on the first read
        times = []
        for _ in range(200):
            query = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}"
            start = time.perf_counter()
            mem.recall(ctx, query)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def fill(location: str, agent: str, notes: int) -> None:
    """``notes`` user-scope remembers appended straight through the event store."""
    rng = random.Random(11)
    backend = open_backend(location)
    try:
        log = backend.event_log(agent)
        for first in range(0, notes, 5000):
            batch = []
            for i in range(first, min(notes, first + 5000)):
                user = f"discord:{i % 2000}"
                batch.append(
                    Remembered(
                        note_id=new_id("note"),
                        scope=Scope.USER,
                        scope_id=user,
                        kind=Kind.PREFERENCE,
                        text=_text(rng, i),
                        basis=Basis.EXPLICIT,
                        status=Status.ACTIVE,
                        source=Source(channel_id=f"discord:dm{user}", author_id=user),
                        eid=new_id("ev"),
                        ts=NOW,
                        actor=user,
                        role="member",
                    )
                )
            with log.transaction() as txn:
                txn.append(batch)
    finally:
        backend.close()


def open_time(location: str, agent: str, scope_id: str | None = None) -> float:
    """``Memory.open`` + the first ``list``: of every scope, or of one user's notes."""
    start = time.perf_counter()
    with Memory.open(location, embedder=False) as mem:
        if scope_id is None:
            mem.list(RunContext.owner(agent))
        else:
            mem.list(RunContext.owner(agent), scope="user", scope_id=scope_id)
        return time.perf_counter() - start


def measure(location: Callable[[], str], args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["remember_per_s_1"] = round(remember_rate(location(), args.writes, 1), 1)
    out["remember_per_s_8"] = round(remember_rate(location(), args.writes, 8), 1)
    p50, p99 = recall_latency(location(), args.notes)
    out["recall_p50_ms"], out["recall_p99_ms"] = round(p50, 2), round(p99, 2)
    big = location()
    fill(big, "big", args.open_notes)
    # The first open folds the whole log and writes the catalog snapshot; later opens
    # (another host's start) resume from it and read each scope when it is listed.
    times = [open_time(big, "big") for _ in range(3)]
    out["open_cold_s"] = round(times[0], 2)
    out["open_warm_s"] = round(statistics.median(times[1:]), 2)
    out["open_one_scope_s"] = round(open_time(big, "big", scope_id="discord:7"), 3)
    return out


@contextmanager
def jsonl_locations() -> Iterator[Callable[[], str]]:
    top = Path(tempfile.mkdtemp(prefix="remem-bench-"))
    count = iter(range(1_000_000))
    try:
        yield lambda: str(top / f"data{next(count)}")
    finally:
        shutil.rmtree(top, ignore_errors=True)


@contextmanager
def pg_locations(server: str) -> Iterator[Callable[[], str]]:
    with postgres_server.fresh_database(server) as url:
        count = iter(range(1_000_000))

        # One database, agents apart: a location per measurement would need as many
        # databases; the agent names differ per measurement instead (see measure()).
        def location() -> str:
            next(count)
            return url

        yield location


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--writes", type=int, default=800)
    parser.add_argument("--notes", type=int, default=2000)
    parser.add_argument("--open-notes", type=int, default=100_000)
    args = parser.parse_args()
    result: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "writes": args.writes,
        "notes": args.notes,
        "open_notes": args.open_notes,
    }
    with jsonl_locations() as loc:
        result["jsonl"] = measure(loc, args)
    reason = postgres_server.unavailable()
    if reason is not None:
        sys.exit(f"benchmarks/postgres.py: {reason}")
    with postgres_server.postgres_server() as server, pg_locations(server) as loc:
        result["postgres"] = measure(loc, args)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['machine']}; {args.writes} writes, {args.notes} notes for recall, "
        f"{args.open_notes} notes to open"
    )
    keys = list(result["jsonl"])
    print(f"{'':<18}{'jsonl':>12}{'postgres':>12}")
    for key in keys:
        print(f"{key:<18}{result['jsonl'][key]:>12}{result['postgres'][key]:>12}")


if __name__ == "__main__":
    main()

"""HTTP service benchmark: remember and recall over ``remem serve`` beside in-process.

    python benchmarks/http_service.py [--json] [--seconds S] [--gc-seconds S] [--reps R]

Starts its own ``remem serve`` on 127.0.0.1 (a free port, a temporary data directory,
an owner token) and measures, in one run:

- ``remember`` and ``recall`` over HTTP at 1, 8 and 32 concurrent clients (threads,
  each with its own ``Memory.open(url, token=...)`` client): requests/s, p50, p99;
- the same operations on an in-process ``Memory.open(dir)`` at the same concurrency;
- the raw single-writer ``write`` + ``fsync`` rate of ~200-byte lines;
- group commit in-process, 32 writer threads on one agent, on against off
  (``benchmarks/group_commit.py``'s functions).

The load generator runs on the same machine as the server and shares its cores
(2 vCPUs on the reference VM): the 8- and 32-client HTTP figures measure the pair.
Targets (issue 13): group commit on ≥ 2 × off and on ≥ raw write + fsync; recall over
HTTP at 1 client p50 ≤ in-process p50 + 1.5 ms. About 2 minutes with the defaults.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from remem import Memory, RunContext
from remem.cli.serving import stop, wait_healthy

AGENT = "bench"
CLIENTS = (1, 8, 32)
CLI = [sys.executable, "-m", "remem.cli"]
SEED_NOTES = 300
WORDS = ["deploy", "staging", "billing", "invoice", "oncall"]
WORDS += ["rotation", "pager", "alert", "dashboard", "rollout"]


def group_commit_module() -> ModuleType:
    """``benchmarks/group_commit.py``, loaded by path (the benchmarks are no package)."""
    spec = importlib.util.spec_from_file_location(
        "group_commit", Path(__file__).with_name("group_commit.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def owner_token(data: Path) -> str:
    out = subprocess.run(
        [*CLI, "--data", str(data), "tokens", "create", "--name", "bench", "--owner", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return str(json.loads(out.stdout)["token"])


@contextmanager
def served(data: Path) -> Iterator[str]:
    """A ``remem serve`` on a free loopback port over ``data``; yields its URL."""
    port = free_port()
    env = {**os.environ, "REMEM_EMBEDDINGS": "0"}
    cmd = [*CLI, "serve", "--data", str(data), "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        if not wait_healthy(url, proc, timeout=90):
            raise RuntimeError("remem serve did not start")
        yield url
    finally:
        stop(proc, timeout=30)


def seed(data: Path) -> None:
    """Agent-wide notes for recall to rank (the same in the served and in-process dirs)."""
    owner = RunContext.owner(AGENT)
    with Memory.open(data, embedder=None) as mem:
        for i in range(SEED_NOTES):
            a, b = WORDS[i % len(WORDS)], WORDS[(i * 7 + 3) % len(WORDS)]
            mem.remember(owner, f"team note {i}: the {a} runbook mentions {b}", scope="agent")


def operation(name: str) -> Callable[[Any, RunContext, int], object]:
    if name == "remember":
        return lambda mem, ctx, n: mem.remember(ctx, f"{ctx.actor} note {n} about the rollout")
    return lambda mem, ctx, n: mem.recall(ctx, f"{WORDS[n % len(WORDS)]} runbook")


def run_clients(
    open_client: Callable[[], Any], op: str, clients: int, seconds: float, *, own: bool = True
) -> dict[str, float]:
    """``clients`` threads, each with its own client (``own``: closed after; else one shared
    in-process ``Memory``), doing ``op`` for ``seconds``."""
    action = operation(op)
    lat: list[list[float]] = [[] for _ in range(clients)]
    stop = threading.Event()
    barrier = threading.Barrier(clients + 1)

    def work(i: int) -> None:
        mem = open_client()
        # A fresh member every 5,000 notes: no user scope reaches its note limit.
        # A DM channel has one member: each client of each cell speaks in its own.
        ctx = RunContext.dm(AGENT, f"dm:{op}{clients}c{i}", f"user:{op}{clients}c{i}")
        try:
            action(mem, ctx, -1)  # warm: connection, caches
            barrier.wait()
            n, mine = 0, lat[i]
            while not stop.is_set():
                if n % 5000 == 4999:
                    user = f"user:{op}{clients}c{i}s{n}"
                    ctx = RunContext.dm(AGENT, f"dm:{op}{clients}c{i}s{n}", user)
                t0 = time.perf_counter()
                action(mem, ctx, n)
                mine.append(time.perf_counter() - t0)
                n += 1
        except BaseException as exc:
            failures.append(exc)
            barrier.abort()
        finally:
            if own:
                mem.close()

    failures: list[BaseException] = []
    pool = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    for t in pool:
        t.start()
    barrier.wait()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - began
    if failures:
        raise RuntimeError(f"{op} at {clients} clients failed: {failures[0]!r}")
    return summarize([x for xs in lat for x in xs], elapsed)


def summarize(latencies: list[float], elapsed: float) -> dict[str, float]:
    latencies.sort()
    count = len(latencies)

    def at(q: float) -> float:
        return latencies[min(count - 1, int(q * count))] * 1000 if count else float("nan")

    return {"per_s": count / elapsed, "p50_ms": at(0.50), "p99_ms": at(0.99), "requests": count}


def measure_paths(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Remember and recall at each concurrency, over HTTP and in-process."""
    served_dir, local_dir = root / "served", root / "local"
    seed(served_dir)
    seed(local_dir)
    token = owner_token(served_dir)
    out: dict[str, Any] = {"http": {}, "in_process": {}}
    with served(served_dir) as url, Memory.open(local_dir, embedder=None) as local:
        for op in ("recall", "remember"):
            for n in CLIENTS:
                key = f"{op}@{n}"
                out["http"][key] = run_clients(
                    lambda: Memory.open(url, token=token), op, n, args.seconds
                )
                out["in_process"][key] = run_clients(lambda: local, op, n, args.seconds, own=False)
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    gc = group_commit_module()
    root = Path(tempfile.mkdtemp(dir=args.dir))
    try:
        result = measure_paths(root, args)
        raw, on, off, sizes = [], [], [], []
        for _ in range(args.reps):
            raw.append(gc.raw_rate(root, args.gc_seconds))
            got = gc.writers_rate(root, 32, args.gc_seconds, True)
            on.append(got["per_s"])
            sizes.append(got["writes_per_fsync"])
            off.append(gc.writers_rate(root, 32, args.gc_seconds, False)["per_s"])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = statistics.median
    result["raw_fsync_per_s"] = med(raw)
    result["group_commit"] = {"threads": 32, "on_per_s": med(on), "off_per_s": med(off)}
    result["group_commit"]["writes_per_fsync"] = med(sizes)
    result["group_commit"]["runs"] = {"raw": raw, "on": on, "off": off}
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}"
    result["load_generator"] = "same machine: the client threads share the server's cores"
    return add_targets(result)


def add_targets(result: dict[str, Any]) -> dict[str, Any]:
    gc = result["group_commit"]
    http_p50 = result["http"]["recall@1"]["p50_ms"]
    local_p50 = result["in_process"]["recall@1"]["p50_ms"]
    result["targets"] = {
        "group_commit_on_vs_off": {"value": gc["on_per_s"] / gc["off_per_s"], "target": 2.0},
        "group_commit_on_vs_raw": {
            "value": gc["on_per_s"] / result["raw_fsync_per_s"],
            "target": 1.0,
        },
        "recall_http_p50_minus_in_process_ms": {"value": http_p50 - local_p50, "target": 1.5},
    }
    for name, t in result["targets"].items():
        over = name.endswith("_ms")
        t["met"] = t["value"] <= t["target"] if over else t["value"] >= t["target"]
    return result


def print_table(result: dict[str, Any]) -> None:
    print(f"{'operation':<16}{'path':<12}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
    for key in result["http"]:
        for path in ("http", "in_process"):
            r = result[path][key]
            print(
                f"{key:<16}{path:<12}{r['per_s']:>10,.0f}{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}"
            )
    gc = result["group_commit"]
    print(f"raw write+fsync, 1 writer: {result['raw_fsync_per_s']:,.0f}/s")
    print(
        f"group commit, 32 threads: on {gc['on_per_s']:,.0f}/s, off {gc['off_per_s']:,.0f}/s,"
        f" {gc['writes_per_fsync']:.1f} writes per fsync"
    )
    for name, t in result["targets"].items():
        verdict = "met" if t["met"] else "NOT met"
        print(f"target {name}: {t['value']:.2f} (target {t['target']}) {verdict}")
    print(f"machine: {result['machine']}; load generator: {result['load_generator']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seconds", type=float, default=4.0, help="per HTTP/in-process cell")
    parser.add_argument("--gc-seconds", type=float, default=3.0, help="per group commit run")
    parser.add_argument("--reps", type=int, default=2, help="raw/on/off runs (median)")
    parser.add_argument("--dir", default=None, help="where to measure (default: /tmp)")
    args = parser.parse_args()
    result = measure(args)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        print_table(result)


if __name__ == "__main__":
    main()

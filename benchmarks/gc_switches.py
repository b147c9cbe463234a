"""Would global GC switches in the embedded store pay? An A/B in one run.

Until 2026-12-02 ``remem.agentlog`` (now ``remem.app.agent_state``) paused the cyclic
collector while it scanned a
log and, after a scan of at least 100,000 events, moved what survived into the
permanent generation (``gc.freeze``); they were removed because they did not pay
(figures in README.md). This builds one log of ``--events`` events (the
generator of ``benchmarks/write.py``), then, in fresh processes alternating
``on`` (both switches put back around ``AgentLog.sync``) and ``off`` (the code as
it is), times a cold
open (no catalog cache), a warm open, recalls in 30 users' DMs (p50, p99,
max) and one full ``gc.collect()`` after the open (the pause a full collection
costs a process holding the state)::

    python benchmarks/gc_switches.py [--events 1000000] [--rounds 2] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

AGENT = "bench"


def measure(data: Path, variant: str, recalls: int, users: int) -> dict[str, Any]:
    """One process: open cold, then warm, recall, collect (``variant`` off: no switches)."""
    from remem import Memory, RunContext
    from remem.app import agent_state as agentlog

    if variant == "on":
        sync = agentlog.AgentLog.sync

        def switched(self: agentlog.AgentLog) -> Any:
            was_enabled = gc.isenabled()
            before = self.state.events
            gc.disable()
            try:
                return sync(self)
            finally:
                if was_enabled:
                    gc.enable()
                if self.state.events - before >= 100_000:  # a big scan: freeze its survivors
                    gc.freeze()

        agentlog.AgentLog.sync = switched  # type: ignore[method-assign]
    out: dict[str, Any] = {"variant": variant}
    (data / "agents" / AGENT / "catalog.cache").unlink(missing_ok=True)
    for label in ("cold_open_s", "warm_open_s"):
        start = time.perf_counter()
        mem = Memory.open(data)
        mem.list(RunContext.owner(AGENT), scope="agent")
        out[label] = time.perf_counter() - start
        if label == "cold_open_s":
            mem.close()
    rng = random.Random(11)
    times = []
    for _ in range(recalls):
        user = f"discord:{rng.randrange(min(users, 30))}"  # mostly warm scopes
        ctx = RunContext.dm(AGENT, f"discord:dm{user}", user)
        start = time.perf_counter()
        mem.recall(ctx, "what does the user prefer")
        times.append(time.perf_counter() - start)
    times.sort()
    out["recall_p50_ms"] = 1000 * times[len(times) // 2]
    out["recall_p99_ms"] = 1000 * times[int(len(times) * 0.99)]
    out["recall_max_ms"] = 1000 * times[-1]
    start = time.perf_counter()
    gc.collect()
    out["full_collect_s"] = time.perf_counter() - start
    mem.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2, help="on/off pairs (alternating)")
    ap.add_argument("--recalls", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--measure", nargs=3, help=argparse.SUPPRESS)  # data variant users
    args = ap.parse_args(argv)
    if args.measure:
        data, variant, users = args.measure
        print(json.dumps(measure(Path(data), variant, args.recalls, int(users))))
        return 0
    from write import generate_log

    root = Path(tempfile.mkdtemp(prefix="remem-bench-gc-"))
    try:
        data = root / "data"
        counts = generate_log(data / "agents" / AGENT / "memory.jsonl", args.events, seed=7)
        runs: list[dict[str, Any]] = []
        for _ in range(args.rounds):
            for variant in ("on", "off"):
                cmd = [sys.executable, __file__, "--recalls", str(args.recalls), "--measure"]
                cmd += [str(data), variant, str(counts["users"])]
                done = subprocess.run(cmd, check=True, capture_output=True, text=True)
                runs.append(json.loads(done.stdout))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
        summary = {
            v: {
                k: round(statistics.median(r[k] for r in runs if r["variant"] == v), 3)
                for k in runs[0]
                if k != "variant"
            }
            for v in ("on", "off")
        }
        print(json.dumps({"events": args.events, "median": summary, "runs": runs}, indent=1))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

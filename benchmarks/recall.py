"""Recall at scale: latency and memory of ``Memory.recall`` on a store of a million notes.

    python benchmarks/recall.py [--notes N] [--recalls R] [--json] [--data DIR] [--profile]

Builds an agent log (``<data>/agents/bench/memory.jsonl``) holding N notes
(default 1,000,000), written directly as sealed lines with
:func:`remem.core.events.encode` of ``Remembered`` events, shaped like a real
log (envelope, run ids, sources with message ids, a few tags and pins, times
spread over a year, in time order). The notes are spread over 5,000 people
(user scopes, each written in that person's DM), 200 shared channels and the
agent scope, such that the measured DM has exactly 600 eligible notes: 200
agent-wide, 200 in that DM channel, 200 about that person. Texts are short
English statements generated from templates and a vocabulary.

Then, in a fresh process (so the figures are not polluted by the build):

- ``open_s``: cold ``Memory.open`` + the first read of the agent (which reads
  and folds the whole log);
- ``bytes_per_note``: resident memory growth over that open (RSS after minus
  RSS before, after ``gc.collect()``), divided by N; ``peak_rss_mb`` is the
  process's peak (``getrusage``);
- ``p50_ms``/``p95_ms``/``p99_ms``: latency of ``Memory.recall`` for that DM
  over R ≥ 1000 varied queries (10% empty), the full path including the trace
  append; the first recall (which builds the three scope indexes) is reported
  separately as ``first_recall_ms``.

``--json`` prints one JSON object (keys ``notes``, ``p50_ms``, ``p95_ms``,
``p99_ms``, ``bytes_per_note``, ``open_s`` and more). ``--data DIR`` keeps the
built store there and reuses it on the next run with the same ``--notes``;
``traces.jsonl`` is always removed before measuring, derived caches (the
vector cache) only with ``--no-caches`` (a first-ever open).
``--profile`` adds a cProfile of the recalls and a tracemalloc breakdown of
the open (slow: tracemalloc roughly triples the open time).

Targets (issue): p50 < 1 ms, p99 < 5 ms, < 2 KB per note; later p50 ≤ 0.5 ms,
p99 ≤ 2 ms, ≤ 1.5 KB per note, open ≤ 3 s.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

AGENT = "bench"
USERS = 5_000
CHANNELS = 200
PER_MEASURED_SCOPE = 200
ME = "discord:u00000"
MY_DM = "discord:dm-u00000"
T0 = datetime(2025, 7, 1, tzinfo=UTC)
SPAN = timedelta(days=365)
NOW = T0 + SPAN + timedelta(days=1)

TARGETS = {"p50_ms": 1.0, "p99_ms": 5.0, "bytes_per_note": 2048.0}
LATER = {"p50_ms": 0.5, "p99_ms": 2.0, "bytes_per_note": 1536.0, "open_s": 3.0}

# -- realistic note texts ---------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return text.split()


NAMES = _words(
    "Alice Bruno Chen Dana Emeka Farah Goran Hana Ivan Jia Kofi Lena Mateo Nadia Omar Priya "
    "Quinn Rosa Sven Tariq Uma Viktor Wen Ximena Yusuf Zoe"
)
TOPICS = _words(
    "budgets invoices releases onboarding hiring travel dashboards reports migrations "
    "deployments pricing contracts roadmaps incidents security audits marketing support "
    "analytics payroll training events partnerships research"
)
FORMATS = [
    "short summaries",
    "bullet points",
    "detailed write-ups",
    "tables",
    "charts",
    "a single paragraph",
    "voice notes",
    "numbered steps",
    "plain text",
    "slides",
]
PROJECTS = _words(
    "Atlas Beacon Cobalt Delta Ember Falcon Granite Harbor Iris Juniper Kestrel Lumen "
    "Meridian Nimbus Orion Pioneer Quartz Redwood Summit Tundra"
)
CITIES = _words(
    "Lisbon Berlin Tokyo Nairobi Toronto Austin Madrid Seoul Lagos Oslo Lima Dublin Pune "
    "Warsaw Cairo Denver"
)
DAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
TIMES = ["early in the morning", "around noon", "after lunch", "late in the afternoon", "evenings"]
FOODS = _words("sushi tacos ramen salads curry pasta dumplings falafel pizza soup oatmeal pastries")
DRINKS = ["black coffee", "green tea", "oat lattes", "sparkling water", "chai", "espresso"]
LANGUAGES = _words("English Portuguese Spanish Japanese German French Swahili Polish Korean")
TOOLS = _words("Jira Notion Figma Slack Grafana Excel Tableau GitHub Linear Asana Looker")
EVENTS = [
    "quarterly review",
    "board meeting",
    "team offsite",
    "product launch",
    "sprint demo",
    "budget freeze",
    "all-hands",
    "customer workshop",
]
DECISIONS = [
    "freeze the scope",
    "move the launch",
    "hire a contractor",
    "switch vendors",
    "cut the beta",
    "double the test coverage",
    "pause new features",
]
TEMPLATES = [
    "{name} prefers {format} for {topic}.",
    "{name} works on the {project} project from {city}.",
    "{name} is usually available {time} on {day}s.",
    "{name} likes {food} and drinks {drink}.",
    "{name} writes in {language} but reads {language2} too.",
    "{name} asked for a reminder before the {event}.",
    "{name} owns the {topic} dashboard in {tool}.",
    "{name} wants {topic} updates every {day}.",
    "The team decided to {decision} before the {event}.",
    "The {project} deadline moved to {day} after the {event}.",
    "Use {tool} for {topic} questions in this channel.",
    "Weekly {topic} reports go to {name} on {day}s.",
    "The {event} for {project} happens in {city}.",
    "{topic} reviews need sign-off from {name}.",
    "Keep {topic} threads in {format}.",
    "{name} travels to {city} for the {event}.",
    "{name} dislikes long meetings about {topic}.",
    "The {project} team meets {time} on {day}s.",
]
QUERY_TEMPLATES = [
    "what does {name} prefer for {topic}?",
    "when is the {event}?",
    "{project} deadline",
    "who owns {topic} in {tool}",
    "remind me about the {event} in {city}",
    "how should I format the {topic} update",
    "is {name} available on {day}?",
    "{name} {food} {drink}",
    "what did we decide about {project}",
    "{topic} reports",
    "which language does {name} use",
    "travel plans for {city}",
]
TAGS = ["work", "personal", "schedule", "format", "project", "food", "travel"]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        name=rng.choice(NAMES),
        topic=rng.choice(TOPICS),
        format=rng.choice(FORMATS),
        project=rng.choice(PROJECTS),
        city=rng.choice(CITIES),
        time=rng.choice(TIMES),
        day=rng.choice(DAYS),
        food=rng.choice(FOODS),
        drink=rng.choice(DRINKS),
        language=rng.choice(LANGUAGES),
        language2=rng.choice(LANGUAGES),
        tool=rng.choice(TOOLS),
        event=rng.choice(EVENTS),
        decision=rng.choice(DECISIONS),
    )


def note_text(rng: random.Random) -> str:
    text = _fill(rng.choice(TEMPLATES), rng)
    return text[0].upper() + text[1:]


def queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        out.append("" if i % 10 == 9 else _fill(rng.choice(QUERY_TEMPLATES), rng))
    return out


# -- building the store ----------------------------------------------------------------------


def _user(i: int) -> str:
    return f"discord:u{i:05d}"


def _dm(i: int) -> str:
    return f"discord:dm-u{i:05d}"


def build(data: Path, notes: int, seed: int) -> dict[str, Any]:
    """Write the log; returns facts about it (also saved as ``bench-meta.json``)."""
    from remem.core.events import Remembered, encode
    from remem.core.ids import new_id
    from remem.core.model import Basis, Kind, Scope, Source, Status

    measured = 3 * PER_MEASURED_SCOPE
    if notes < measured + USERS:
        raise SystemExit(f"--notes must be at least {measured + USERS}")
    rng = random.Random(seed)
    # What each log position holds: 0 agent, 1 my DM channel, 2 me, 3 another person,
    # 4 a shared channel. Measured notes are spread through the whole log.
    rest = notes - measured
    others_users = rest * 4 // 5
    slots = bytearray([0]) * PER_MEASURED_SCOPE + bytearray([1]) * PER_MEASURED_SCOPE
    slots += bytearray([2]) * PER_MEASURED_SCOPE
    slots += bytearray([3]) * others_users + bytearray([4]) * (rest - others_users)
    order = list(slots)
    rng.shuffle(order)

    path = data / "agents" / AGENT / "memory.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    step = SPAN / notes
    kinds = [Kind.PREFERENCE, Kind.FACT, Kind.FACT, Kind.DECISION, Kind.INTERACTION]
    seen_measured: set[str] = set()
    start = time.perf_counter()
    buf: list[bytes] = []
    with open(path, "wb") as fh:
        for i, what in enumerate(order):
            ts = T0 + step * i
            ms = int(ts.timestamp() * 1000)
            text = note_text(rng)
            if what <= 2:
                while text in seen_measured:  # measured notes are all distinct
                    text = note_text(rng)
                seen_measured.add(text)
            if what == 0:
                scope, scope_id, channel = Scope.AGENT, None, None
                actor, role = "local:owner", "owner"
                kind = Kind.PROCEDURE if rng.random() < 0.2 else Kind.FACT
            elif what == 1:
                scope, scope_id, actor, role, channel = Scope.CHANNEL, MY_DM, ME, "member", MY_DM
                kind = rng.choice(kinds)
            elif what == 2:
                scope, scope_id, actor, role, channel = Scope.USER, ME, ME, "member", MY_DM
                kind = rng.choice(kinds[:3])
            elif what == 3:
                u = rng.randrange(1, USERS)
                scope, scope_id, actor, role = Scope.USER, _user(u), _user(u), "member"
                channel = _dm(u)
                kind = rng.choice(kinds[:3])
            else:
                c = f"discord:ch-{rng.randrange(CHANNELS):03d}"
                actor = _user(rng.randrange(1, USERS))
                scope, scope_id, role, channel = Scope.CHANNEL, c, "member", c
                kind = rng.choice(kinds)
            run_id = new_id("run", now_ms=ms)
            event = Remembered(
                note_id=new_id("note", now_ms=ms),
                eid=new_id("ev", now_ms=ms),
                ts=ts,
                actor=actor,
                role=role,
                run_id=run_id,
                channel=channel,
                scope=scope,
                scope_id=scope_id,
                kind=kind,
                text=text,
                basis=Basis.INFERRED if rng.random() < 0.1 else Basis.EXPLICIT,
                status=Status.ACTIVE,
                tags=tuple(sorted(rng.sample(TAGS, rng.choice((0, 0, 0, 1, 1, 2))))),
                pinned=rng.random() < 0.002,
                source=Source(
                    channel_id=channel,
                    message_id=f"discord:m{rng.getrandbits(60)}" if channel else None,
                    author_id=actor,
                    run_id=run_id,
                ),
            )
            buf.append(encode(event))
            if len(buf) >= 20_000:
                fh.write(b"".join(buf))
                buf.clear()
        fh.write(b"".join(buf))
        fh.flush()
        os.fsync(fh.fileno())
    meta = {
        "notes": notes,
        "seed": seed,
        "build_s": round(time.perf_counter() - start, 2),
        "log_bytes": path.stat().st_size,
        "users": USERS,
        "channels": CHANNELS,
    }
    (data / "bench-meta.json").write_text(json.dumps(meta))
    return meta


# -- measuring (in a fresh process) ------------------------------------------------------------


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def measure(data: Path, notes: int, recalls: int, seed: int, profile: bool) -> dict[str, Any]:
    from remem import Memory, RunContext

    qs = queries(recalls, seed + 1)
    ctx0 = RunContext.dm(AGENT, MY_DM, ME)
    derived = {p.name: p.stat().st_size for p in (data / "agents" / AGENT).glob("*.cache")}
    gc.collect()
    rss_before = _rss()
    if profile:
        import tracemalloc

        tracemalloc.start(1)
    start = time.perf_counter()
    mem = Memory.open(data, clock=lambda: NOW)
    state = mem._agent(ctx0).sync()  # the first read: reads and folds the whole log
    open_s = time.perf_counter() - start
    snapshot = None
    if profile:
        import tracemalloc

        snapshot = tracemalloc.take_snapshot()
        tracemalloc.stop()
    gc.collect()
    rss_after_open = _rss()
    assert len(state.notes) == notes, (len(state.notes), notes)

    start = time.perf_counter()
    first = mem.recall(RunContext.dm(AGENT, MY_DM, ME), qs[0])
    first_ms = (time.perf_counter() - start) * 1000
    trace = mem.explain(RunContext.owner(AGENT), first.run_id)
    eligible = len(trace.candidates) - sum(
        1 for _, r in trace.excluded if r not in ("over_note_limit", "over_char_budget")
    )
    for q in qs[:50]:  # warm-up
        mem.recall(RunContext.dm(AGENT, MY_DM, ME), q)

    trace_path = data / "agents" / AGENT / "traces.jsonl"
    trace_bytes = trace_path.stat().st_size
    prof = cProfile.Profile() if profile else None
    times = []
    for q in qs:
        ctx = RunContext.dm(AGENT, MY_DM, ME)
        if prof is not None:
            prof.enable()
        t = time.perf_counter()
        mem.recall(ctx, q)
        times.append((time.perf_counter() - t) * 1000)
        if prof is not None:
            prof.disable()
    rss_end = _rss()
    trace_bytes = (trace_path.stat().st_size - trace_bytes) / len(times)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result: dict[str, Any] = {
        "notes": notes,
        "retrieval": first.retrieval,
        "caches_at_open": derived,
        "eligible": eligible,
        "candidates": len(trace.candidates),
        "recalls": len(times),
        "p50_ms": round(_pct(times, 50), 3),
        "p95_ms": round(_pct(times, 95), 3),
        "p99_ms": round(_pct(times, 99), 3),
        "mean_ms": round(statistics.fmean(times), 3),
        "max_ms": round(max(times), 3),
        "first_recall_ms": round(first_ms, 3),
        "bytes_per_note": round((rss_after_open - rss_before) / notes, 1),
        "open_s": round(open_s, 3),
        "rss_before_mb": round(rss_before / 2**20, 1),
        "rss_after_open_mb": round(rss_after_open / 2**20, 1),
        "rss_after_recalls_mb": round(rss_end / 2**20, 1),
        "peak_rss_mb": round(peak / 2**20, 1),
        "trace_bytes_per_recall": round(trace_bytes),
    }
    if prof is not None:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
        result["profile_recall"] = out.getvalue()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
        result["profile_recall_cumulative"] = out.getvalue()
    if snapshot is not None:
        stats = snapshot.statistics("lineno")
        total = sum(s.size for s in stats)
        result["tracemalloc_total_mb"] = round(total / 2**20, 1)
        result["tracemalloc_top"] = [
            f"{s.size / notes:8.1f} B/note  {s.count / notes:6.2f} obj/note  {s.traceback}"
            for s in stats[:20]
        ]
    mem.close()
    return result


# -- driver ---------------------------------------------------------------------------------------


def _status(key: str, value: float) -> str:
    marks = []
    if key in TARGETS:
        marks.append("ok" if value < TARGETS[key] else f"MISS (< {TARGETS[key]:g})")
    if key in LATER:
        marks.append("ok" if value <= LATER[key] else f"miss later (≤ {LATER[key]:g})")
    return ", ".join(marks)


def render(r: dict[str, Any]) -> str:
    rows = [
        ("notes", f"{r['notes']:,}", ""),
        ("eligible in the DM", str(r["eligible"]), "600 expected"),
        ("retrieval mode", r["retrieval"], f"caches at open: {r['caches_at_open'] or 'none'}"),
        ("log size", f"{r['log_bytes'] / 2**20:,.0f} MB", ""),
        ("build (direct writes)", f"{r['build_s']:.1f} s", "reused" if r.get("reused") else ""),
        ("open_s (open + first read)", f"{r['open_s']:.2f} s", _status("open_s", r["open_s"])),
        ("first recall (builds indexes)", f"{r['first_recall_ms']:.2f} ms", ""),
        ("recall p50", f"{r['p50_ms']:.3f} ms", _status("p50_ms", r["p50_ms"])),
        ("recall p95", f"{r['p95_ms']:.3f} ms", ""),
        ("recall p99", f"{r['p99_ms']:.3f} ms", _status("p99_ms", r["p99_ms"])),
        ("recall mean / max", f"{r['mean_ms']:.3f} / {r['max_ms']:.1f} ms", ""),
        (
            "bytes_per_note (RSS growth / N)",
            f"{r['bytes_per_note']:,.0f} B",
            _status("bytes_per_note", r["bytes_per_note"]),
        ),
        (
            "RSS before / after open / after recalls",
            f"{r['rss_before_mb']:,.0f} / {r['rss_after_open_mb']:,.0f} / "
            f"{r['rss_after_recalls_mb']:,.0f} MB",
            "",
        ),
        ("peak RSS (getrusage)", f"{r['peak_rss_mb']:,.0f} MB", ""),
        ("traces.jsonl growth per recall", f"{r['trace_bytes_per_recall']:,} B", ""),
    ]
    width = max(len(k) for k, _, _ in rows)
    vwidth = max(len(v) for _, v, _ in rows)
    lines = [f"recall benchmark: {r['recalls']} recalls, python {r['python']}, {r['machine']}"]
    lines += [f"  {k:<{width}}  {v:>{vwidth}}  {s}".rstrip() for k, v, s in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--recalls", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--data", type=Path, help="keep (and reuse) the built store here")
    parser.add_argument("--out", type=Path, help="also write the JSON result to this file")
    parser.add_argument("--profile", action="store_true", help="cProfile + tracemalloc")
    parser.add_argument(
        "--no-caches", action="store_true", help="delete derived caches (vectors) before opening"
    )
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.recalls < 1000 and not args.measure:
        print("note: fewer than 1000 recalls; percentiles are less stable", file=sys.stderr)

    if args.measure is not None:  # the child: measure and print JSON
        result = measure(args.measure, args.notes, args.recalls, args.seed, args.profile)
        print(json.dumps(result))
        return 0

    tmp = None
    data = args.data
    if data is None:
        tmp = Path(tempfile.mkdtemp(prefix="remem-recall-bench-"))
        data = tmp / "data"
    try:
        meta_path = data / "bench-meta.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else None
        reused = bool(meta and meta["notes"] == args.notes and meta["seed"] == args.seed)
        if not reused:
            if data.exists():
                shutil.rmtree(data)
            meta = build(data, args.notes, args.seed)
        assert meta is not None
        agent_dir = data / "agents" / AGENT
        (agent_dir / "traces.jsonl").unlink(missing_ok=True)
        if args.no_caches:
            for cache in agent_dir.glob("*.cache"):
                cache.unlink()
        cmd = [sys.executable, __file__, "--measure", str(data), "--notes", str(args.notes)]
        cmd += ["--recalls", str(args.recalls), "--seed", str(args.seed)]
        if args.profile:
            cmd.append("--profile")
        child = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if child.returncode != 0:
            sys.stderr.write(child.stderr)
            return child.returncode
        result = json.loads(child.stdout.strip().splitlines()[-1])
        result.update(
            build_s=meta["build_s"],
            log_bytes=meta["log_bytes"],
            reused=reused,
            python=platform.python_version(),
            machine=f"{platform.machine()}, {os.cpu_count()} cpus",
        )
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    if args.json:
        hidden = ("profile_recall", "profile_recall_cumulative", "tracemalloc_top")
        print(json.dumps({k: v for k, v in result.items() if k not in hidden}))
    else:
        print(render(result))
        if args.profile:
            print("\n-- recall profile (own time) --\n" + result["profile_recall"])
            print("-- recall profile (cumulative) --\n" + result["profile_recall_cumulative"])
            print(f"-- open: tracemalloc total {result['tracemalloc_total_mb']} MB; top lines --")
            print("\n".join(result["tracemalloc_top"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

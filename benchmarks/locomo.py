"""LoCoMo retrieval benchmark: recall@k of evidence turns through ``Memory.recall``.

Usage::

    python benchmarks/locomo.py --data ../shared/data/locomo/locomo-dev.json [--json]

Every dialog turn of a conversation is stored as a note through the public
API (one user scope per conversation, ``said_at`` = the session's date), then
every question of categories 1-4 is asked through ``Memory.recall`` and the
returned notes (the real recall path's order, top 20) are scored: recall@k is
the share of a question's evidence turns among the top k, averaged over
questions. Latency is the wall time of the whole ``Memory.recall`` call.

In the same run and on the same notes, two baselines go through the same
scoring: plain BM25 (k1=1.2, b=0.75, lower-cased alphanumeric tokens, no
stemming or stopwords) and embeddings alone (wordllama cosine). Their latency
is the time to score one query against the conversation's notes (query
embedding included).

The data is evaluation data: it is read from where it lives and never copied.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from remem import Memory, Rejected, RunContext
from remem.policy.config import DEFAULT_LIMITS

KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    session: int
    said_at: datetime
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]
    skipped_questions: int = 0


def parse_date(value: str) -> datetime:
    """LoCoMo session dates look like ``1:56 pm on 8 May, 2023``."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares: {caption}]"
    return text


def load(path: Path) -> list[Conversation]:
    """Conversations with their turns and the scorable questions (categories 1-4)."""
    out = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)) and conv[k])
        turns = []
        for n in sessions:
            said_at = parse_date(conv[f"session_{n}_date_time"])
            for turn in conv[f"session_{n}"]:
                turns.append(Turn(turn["dia_id"], n, said_at, turn_text(turn)))
        known = {t.dia_id for t in turns}
        questions, skipped = [], 0
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            ids = []
            for ev in qa.get("evidence", []):
                for a, b in _EVIDENCE.findall(str(ev)):
                    dia = f"D{int(a)}:{int(b)}"
                    if dia in known and dia not in ids:
                        ids.append(dia)
            if not ids:
                skipped += 1
                continue
            questions.append(Question(str(qa["question"]), int(qa["category"]), tuple(ids)))
        out.append(
            Conversation(
                str(sample["sample_id"]),
                (conv["speaker_a"], conv["speaker_b"]),
                turns,
                questions,
                skipped,
            )
        )
    return out


def write_policy(data_dir: Path, max_note_chars: int) -> None:
    """The benchmark's limits, set the way an admin would (``remem.toml``): a top-20 recall
    budget that no character limit cuts short, and whole turns as notes."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "remem.toml").write_text(
        "[memory]\n"
        f"max_note_chars = {max_note_chars}\n"
        f"recall_max_notes = {max(KS)}\n"
        "recall_max_chars = 1000000\n",
        encoding="utf-8",
    )


# -- baselines -------------------------------------------------------------------------

_PLAIN = re.compile(r"[a-z0-9]+")


def plain_tokens(text: str) -> list[str]:
    return _PLAIN.findall(text.lower())


class PlainBM25:
    """Textbook BM25 (k1=1.2, b=0.75) over one conversation's notes."""

    def __init__(self, docs: Sequence[tuple[str, str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.ids = [d for d, _ in docs]
        self.k1, self.b = k1, b
        self.tfs = [Counter(plain_tokens(t)) for _, t in docs]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lens) / max(len(self.lens), 1)
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def top(self, query: str, k: int) -> list[str]:
        terms = plain_tokens(query)
        scores = []
        for i, tf in enumerate(self.tfs):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.lens[i] / self.avg)
            for t in terms:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores.append((-s, self.ids[i]))
        scores.sort()
        return [i for _, i in scores[:k]]


class EmbeddingRanker:
    """Cosine similarity of wordllama embeddings (the bundled static model)."""

    def __init__(self, model: Any, docs: Sequence[tuple[str, str]]) -> None:
        self.model = model
        self.ids = [d for d, _ in docs]
        self.matrix = model.embed([t for _, t in docs], norm=True)

    def top(self, query: str, k: int) -> list[str]:
        import numpy as np

        q = self.model.embed([query], norm=True)[0]
        sims = self.matrix @ q
        order = np.lexsort((np.arange(len(sims)), -sims))[:k]
        return [self.ids[i] for i in order]


def load_wordllama() -> Any | None:
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        return None
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


# -- scoring ---------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """Per-question hits for one system."""

    hits: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    cats: dict[int, dict[int, list[float]]] = field(default_factory=dict)
    times_ms: list[float] = field(default_factory=list)

    def add(
        self, q: Question, evidence: Sequence[str | None], top: Sequence[str], ms: float
    ) -> None:
        per_cat = self.cats.setdefault(q.category, {k: [] for k in KS})
        for k in KS:
            got = set(top[:k])
            share = sum(1 for n in evidence if n is not None and n in got) / len(evidence)
            self.hits[k].append(share)
            per_cat[k].append(share)
        self.times_ms.append(ms)

    def summary(self) -> dict[str, Any]:
        def mean(xs: list[float]) -> float:
            return round(sum(xs) / len(xs), 4) if xs else 0.0

        times = sorted(self.times_ms)
        return {
            "questions": len(self.hits[KS[0]]),
            **{f"recall@{k}": mean(self.hits[k]) for k in KS},
            "p50_ms": round(_percentile(times, 50), 4),
            "p95_ms": round(_percentile(times, 95), 4),
            "by_category": {
                f"{c}-{CATEGORIES[c]}": {
                    "questions": len(v[KS[0]]),
                    **{f"recall@{k}": mean(v[k]) for k in KS},
                }
                for c, v in sorted(self.cats.items())
            },
        }


def _percentile(sorted_xs: list[float], pct: float) -> float:
    if not sorted_xs:
        return 0.0
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    return float(statistics.quantiles(sorted_xs, n=100, method="inclusive")[int(pct) - 1])


def run(path: Path, *, warmup: int = 20) -> dict[str, Any]:
    conversations = load(path)
    model = load_wordllama()
    remem_t, bm25_t, emb_t = Tally(), Tally(), Tally()
    rejected: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    stored = turns_total = reinforced = over_default = missing_evidence = skipped = 0
    with tempfile.TemporaryDirectory(prefix="remem-locomo-") as tmp:
        clock_now = [datetime(2000, 1, 1, tzinfo=UTC)]
        longest = max((len(t.text) for c in conversations for t in c.turns), default=0)
        # Turns are stored whole; the limit is raised only if a turn needs it (reported).
        write_policy(Path(tmp), max(DEFAULT_LIMITS.max_note_chars, longest))
        mem = Memory.open(Path(tmp), clock=lambda: clock_now[0])
        try:
            for conv in conversations:
                skipped += conv.skipped_questions
                # "Now" is the day after the last session, as for an agent answering later.
                clock_now[0] = max(t.said_at for t in conv.turns) + timedelta(days=1)
                ctx = RunContext.dm(
                    agent="locomo", channel=f"dm:{conv.sample_id}", user=f"user:{conv.sample_id}"
                )
                note_of: dict[str, str] = {}
                seen_notes: set[str] = set()
                docs: list[tuple[str, str]] = []
                for turn in conv.turns:
                    turns_total += 1
                    over_default += len(turn.text) > DEFAULT_LIMITS.max_note_chars
                    try:
                        note = mem.remember(ctx, turn.text, kind="fact", said_at=turn.said_at)
                    except Rejected as exc:
                        rejected[exc.reason or "rejected"] += 1
                        continue
                    note_of[turn.dia_id] = note.id
                    if note.id in seen_notes:
                        reinforced += 1
                    else:
                        seen_notes.add(note.id)
                        docs.append((note.id, note.text))
                stored += len(docs)
                bm25 = PlainBM25(docs)
                emb: EmbeddingRanker | None = None
                if model is not None:
                    emb = EmbeddingRanker(model, docs)
                for q in conv.questions[:warmup]:  # warm caches; not scored
                    mem.recall(ctx, q.text)
                k = max(KS)
                for q in conv.questions:
                    evidence = [note_of.get(d) for d in q.evidence]
                    missing_evidence += sum(1 for e in evidence if e is None)
                    t0 = time.perf_counter_ns()
                    result = mem.recall(ctx, q.text)
                    ms = (time.perf_counter_ns() - t0) / 1e6
                    modes[result.retrieval] += 1
                    remem_t.add(q, evidence, [n.id for n in result.notes][:k], ms)
                    for ranker, tally in ((bm25, bm25_t), (emb, emb_t)):
                        if ranker is not None:
                            t0 = time.perf_counter_ns()
                            top = ranker.top(q.text, k)
                            tally.add(q, evidence, top, (time.perf_counter_ns() - t0) / 1e6)
        finally:
            mem.close()
    out = remem_t.summary()
    out["retrieval"] = dict(modes)
    out["baselines"] = {
        "bm25": bm25_t.summary(),
        "embeddings": emb_t.summary() if model is not None else None,
    }
    out["data"] = {
        "file": path.name,
        "conversations": len(conversations),
        "turns": turns_total,
        "notes": stored,
        "reinforced_duplicates": reinforced,
        "rejected": dict(rejected),
        "turns_over_default_limit": over_default,
        "evidence_turns_not_stored": missing_evidence,
        "questions_without_evidence": skipped,
    }
    out["machine"] = {"cpu": _cpu(), "python": platform.python_version()}
    return out


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _table(result: dict[str, Any]) -> str:
    rows = [("remem", result)]
    for name, base in result["baselines"].items():
        if base is not None:
            rows.append((name, base))
    head = f"{'system':<12}{'n':>5}" + "".join(f"{'R@' + str(k):>8}" for k in KS)
    head += f"{'p50 ms':>9}{'p95 ms':>9}"
    lines = [head]
    for name, r in rows:
        line = f"{name:<12}{r['questions']:>5}" + "".join(f"{r[f'recall@{k}']:>8.3f}" for k in KS)
        lines.append(line + f"{r['p50_ms']:>9.3f}{r['p95_ms']:>9.3f}")
    lines.append("")
    lines.append("by category (recall@10): " + " / ".join(name for name, _ in rows))
    for cat in result["by_category"]:
        vals = []
        for _, r in rows:
            vals.append(f"{r['by_category'].get(cat, {}).get('recall@10', 0.0):.3f}")
        n = result["by_category"][cat]["questions"]
        lines.append(f"  {cat:<16}{n:>5}  " + "  ".join(vals))
    lines.append("")
    lines.append(f"retrieval mode: {result['retrieval']}")
    lines.append(f"data: {json.dumps(result['data'])}")
    lines.append(f"machine: {result['machine']['cpu']}, Python {result['machine']['python']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"{args.data} is not a file")
    result = run(args.data)
    print(json.dumps(result, indent=2) if args.json else _table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

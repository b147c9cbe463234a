"""Ranking: a pure, deterministic function of notes, relevance scores and the clock.

Pinned notes come first. Then a score in which relevance to the query
dominates (normalized to [0, 1]); explicit basis, the run's own channel or
speaker, recency and repeated evidence add small weights, so that between
notes of similar relevance explicit beats inferred and newer beats older,
while a clearly relevant inferred note still beats an unrelated explicit one.
With no query the order is explicit → current scope → newer. Ties by id.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from remem.core.model import Basis, Note, Scope
from remem.core.projection import ScopeKey, scope_key

#: Weights added to relevance (which lies in [0, 1]) when there is a query.
W_EXPLICIT = 0.06
W_CURRENT = 0.03
W_RECENCY = 0.02
W_EVIDENCE = 0.01
RECENCY_DAYS = 90.0


@dataclass(frozen=True, slots=True)
class Ranked:
    note: Note
    score: float
    relevance: float


def recency(note: Note, now: datetime) -> float:
    """1.0 for a note said now, decaying with a 90-day time constant."""
    age_days = max((now - note.said_at).total_seconds() / 86400.0, 0.0)
    return math.exp(-age_days / RECENCY_DAYS)


def score(
    note: Note, relevance: float, *, current: frozenset[ScopeKey], now: datetime, has_query: bool
) -> float:
    explicit = 1.0 if note.basis is Basis.EXPLICIT else 0.0
    here = 1.0 if scope_key(note.scope, note.scope_id) in current else 0.0
    fresh = recency(note, now)
    if not has_query:
        return 4.0 * explicit + 2.0 * here + fresh
    evidence = min(note.evidence - 1, 3) / 3.0
    return (
        relevance
        + W_EXPLICIT * explicit
        + W_CURRENT * here
        + W_RECENCY * fresh
        + W_EVIDENCE * evidence
    )


def rank(
    notes: Sequence[Note],
    relevance: Mapping[str, float],
    *,
    current: frozenset[ScopeKey],
    now: datetime,
    has_query: bool,
) -> list[Ranked]:
    """Order ``notes`` best first. ``relevance`` maps note id → raw relevance (any scale)."""
    top = max(relevance.values(), default=0.0)
    scale = 1.0 / top if top > 0 else 0.0
    ranked = []
    for note in notes:
        rel = relevance.get(note.id, 0.0) * scale
        ranked.append(
            Ranked(note, score(note, rel, current=current, now=now, has_query=has_query), rel)
        )
    ranked.sort(key=lambda r: (not r.note.pinned, -r.score, r.note.id))
    return ranked


def preference_key(note: Note, current: frozenset[ScopeKey]) -> tuple[int, int, float, str]:
    """Which of two notes on one subject (or with the same text) wins: lower is better.

    Explicit beats inferred; the run's own channel or speaker beats a broader
    default; a newer statement beats an older one; then the id.
    """
    specific = scope_key(note.scope, note.scope_id) in current or note.scope is not Scope.AGENT
    return (
        0 if note.basis is Basis.EXPLICIT else 1,
        0 if specific else 1,
        -note.said_at.timestamp(),
        note.id,
    )

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
from datetime import UTC, datetime
from typing import Any, NamedTuple

from remem.core.model import Basis, Note, Scope
from remem.core.projection import ScopeKey

#: Weights added to relevance (which lies in [0, 1]) when there is a query.
W_EXPLICIT = 0.06
W_CURRENT = 0.03
W_RECENCY = 0.02
W_EVIDENCE = 0.01
RECENCY_DAYS = 90.0

_EXPLICIT = Basis.EXPLICIT
_AGENT = Scope.AGENT
#: Builds a Ranked without NamedTuple's Python-level __new__ (this runs per candidate).
_new = tuple.__new__


class Ranked(NamedTuple):
    """A note with its final score and its normalized relevance (in [0, 1]).

    The tuple itself is the sort key (pinned first, higher score, then id), so
    ranking sorts plain tuples; read it through ``note``, ``score`` and
    ``relevance``.
    """

    unpinned: bool
    neg_score: float
    note_id: str
    note: Note
    relevance: float

    @property
    def score(self) -> float:
        return -self.neg_score


def recency(note: Note, now: datetime) -> float:
    """1.0 for a note said now, decaying with a 90-day time constant."""
    age_days = max((now - note.said_at).total_seconds() / 86400.0, 0.0)
    return math.exp(-age_days / RECENCY_DAYS)


def _here(note: Note, current: frozenset[ScopeKey]) -> bool:
    return (note.scope, None if note.scope is _AGENT else note.scope_id) in current


def score(
    note: Note, relevance: float, *, current: frozenset[ScopeKey], now: datetime, has_query: bool
) -> float:
    explicit = 1.0 if note.basis is _EXPLICIT else 0.0
    here = 1.0 if _here(note, current) else 0.0
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
    get = relevance.get
    exp = math.exp
    new = _new
    explicit_basis = _EXPLICIT
    # "Is this note in the run's own channel or speaker scope", as id sets per scope.
    here_ids: dict[Scope, set[str | None]] = {}
    for scope, scope_id in current:
        if scope is not _AGENT:
            here_ids.setdefault(scope, set()).add(scope_id)
    nowhere: set[str | None] = set()
    ranked: list[Ranked] = []
    # score() inlined, same arithmetic: this loop runs per candidate on every recall.
    for note in notes:
        rel = get(note.id, 0.0) * scale
        explicit = 1.0 if note.basis is explicit_basis else 0.0
        here = 1.0 if note.scope_id in here_ids.get(note.scope, nowhere) else 0.0
        age_days = (now - note.said_at).total_seconds() / 86400.0
        fresh = exp(-(age_days if age_days > 0.0 else 0.0) / RECENCY_DAYS)
        if has_query:
            extra = note.evidence - 1
            s = (
                rel
                + W_EXPLICIT * explicit
                + W_CURRENT * here
                + W_RECENCY * fresh
                + W_EVIDENCE * ((3 if extra > 3 else extra) / 3.0)
            )
        else:
            s = 4.0 * explicit + 2.0 * here + fresh
        ranked.append(new(Ranked, (not note.pinned, -s, note.id, note, rel)))
    # Ids are unique, so the comparison never reaches the Note.
    ranked.sort()
    return ranked


def preference_key(note: Note, current: frozenset[ScopeKey]) -> tuple[int, int, float, str]:
    """Which of two notes on one subject (or with the same text) wins: lower is better.

    Explicit beats inferred; the run's own channel or speaker beats a broader
    default; a newer statement beats an older one; then the id.
    """
    specific = note.scope is not _AGENT or _here(note, current)
    return (
        0 if note.basis is _EXPLICIT else 1,
        0 if specific else 1,
        -note.said_at.timestamp(),
        note.id,
    )


class Columns:
    """The query-independent parts of :func:`rank`'s score for a fixed list of notes, as
    numpy arrays, so ranking a few hundred candidates is a handful of vector operations
    rather than a Python loop. Same arithmetic in the same order as :func:`rank` (exact
    microsecond ages), equal to it up to the last bit of ``exp``; used when numpy is
    available.
    """

    __slots__ = (
        "_gather",
        "evidence",
        "explicit",
        "here",
        "ids",
        "order_of_id",
        "pinned",
        "said_us",
    )

    def __init__(self, notes: Sequence[Note], current: frozenset[ScopeKey]) -> None:
        import numpy as np

        self.ids = [n.id for n in notes]
        self.explicit = np.array([n.basis is _EXPLICIT for n in notes], dtype=np.float64)
        self.here = np.array([_here(n, current) for n in notes], dtype=np.float64)
        self.evidence = np.array([min(n.evidence - 1, 3) / 3.0 for n in notes], dtype=np.float64)
        self.said_us = np.array([_micros(n.said_at) for n in notes], dtype=np.int64)
        self.pinned = np.array([n.pinned for n in notes], dtype=bool)
        ranks = np.empty(len(notes), dtype=np.int64)
        ranks[np.argsort(np.array(self.ids, dtype=object), kind="stable")] = np.arange(len(notes))
        self.order_of_id = ranks
        #: (the row sources it was built for, each note's row in them, which notes have one)
        self._gather: tuple[list[tuple[Any, int]], Any, Any] | None = None

    def rank(
        self, relevance: Mapping[str, float], now: datetime, has_query: bool
    ) -> tuple[list[int], list[float], list[float]]:
        """Positions of the notes best first, with each position's score and relevance."""
        import numpy as np

        n = len(self.ids)
        if not n:
            return [], [], []
        get = relevance.get
        top = max(relevance.values(), default=0.0)
        scale = 1.0 / top if top > 0 else 0.0
        rel = np.fromiter((get(i, 0.0) for i in self.ids), dtype=np.float64, count=n) * scale
        return self._ranked(rel, now, has_query)

    def gather(self, rows: Sequence[tuple[Any, Any]]) -> Any:
        """Relevance per note (scaled as :meth:`rank` scales it) from row arrays:
        ``(source, scores)`` pairs where ``source.ids`` names each row's note and
        ``source.version`` changes with them (a scope's lexical index). Each note's row
        is looked up once per version of the sources, not per call; call it while the
        sources cannot change."""
        import numpy as np

        n = len(self.ids)
        if not n or not rows:
            return np.zeros(n)
        pooled = rows[0][1] if len(rows) == 1 else np.concatenate([r for _, r in rows])
        if not len(pooled):
            return np.zeros(n)
        at, known = self._rows_of(rows)
        top = float(pooled.max())
        scale = 1.0 / top if top > 0 else 0.0
        return np.where(known, pooled[at], 0.0) * scale

    def rank_gathered(
        self, rel: Any, now: datetime, has_query: bool
    ) -> tuple[list[int], list[float], list[float]]:
        """:meth:`rank` for relevance from :meth:`gather` (the same result)."""
        if not len(self.ids):
            return [], [], []
        return self._ranked(rel, now, has_query)

    def _rows_of(self, rows: Sequence[tuple[Any, Any]]) -> tuple[Any, Any]:
        import numpy as np

        sources = [(source, source.version) for source, _ in rows]
        cached = self._gather
        if (
            cached is not None
            and len(cached[0]) == len(sources)
            and all(a is b and v == w for (a, v), (b, w) in zip(cached[0], sources, strict=True))
        ):
            return cached[1], cached[2]
        position: dict[str, int] = {}
        offset = 0
        for source, _ in rows:
            position.update(zip(source.ids, range(offset, offset + len(source.ids)), strict=True))
            offset += len(source.ids)
        found = np.fromiter(
            (position.get(i, -1) for i in self.ids), dtype=np.int64, count=len(self.ids)
        )
        known = found >= 0
        at = np.where(known, found, 0)
        self._gather = (sources, at, known)
        return at, known

    def _ranked(
        self, rel: Any, now: datetime, has_query: bool
    ) -> tuple[list[int], list[float], list[float]]:
        import numpy as np

        age = (_micros(now) - self.said_us) / 1_000_000 / 86400.0
        fresh = np.exp(-np.maximum(age, 0.0) / RECENCY_DAYS)
        if has_query:
            scores = (
                rel
                + W_EXPLICIT * self.explicit
                + W_CURRENT * self.here
                + W_RECENCY * fresh
                + W_EVIDENCE * self.evidence
            )
        else:
            scores = 4.0 * self.explicit + 2.0 * self.here + fresh
        order = np.lexsort((self.order_of_id, -scores, ~self.pinned))
        return order.tolist(), scores[order].tolist(), rel[order].tolist()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    """Exact microseconds since the epoch (so ages match timedelta arithmetic)."""
    delta = moment - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds

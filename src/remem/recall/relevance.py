"""Relevance of the eligible scopes' notes to a query (DESIGN §6, step 4).

Two modes; :class:`~remem.recall.engine.Recall` reports which one ran as
``retrieval``:

``lexical``
    BM25 over the eligible scopes (:mod:`remem.recall.index`), normalized so
    the best note scores 1. Needs nothing optional: without numpy it runs in
    pure Python, with the same results.
``hybrid``
    The same BM25, with embedding similarity as a minority signal: the
    cosine of each note's vector with the query's, centred on the scopes'
    mean similarity, clipped at zero and divided by the largest such value
    (at least ``SPREAD``), scaled to at most ``W_EMBED``. A note's score is
    the larger of the two signals, so similarity lifts notes that share no
    word with the query but never reorders notes that match it equally
    well (between those, explicit basis and recency decide, as in lexical
    mode). Runs when the agent has a vector index (numpy and an embedder)
    and the query could be embedded; otherwise recall runs ``lexical`` and
    says so.

In both modes the score is then *smoothed over neighbours*: notes said one
after the other in the same scope (adjacent in note-id order, ``said_at``
within ``NEIGHBOUR_WINDOW`` seconds) share context, so a note gains
``NEIGHBOURS[d-1]`` times the better of its two neighbours' scores at
distance ``d``. An answer rarely repeats the words of the question it
answers; the question's relevance carries over to it.

The result is a pure function of the indexed notes (text, id order,
``said_at``), the query and its embedding; ranking (:mod:`remem.recall.rank`)
breaks remaining ties by id. With numpy the arithmetic runs vectorized, in
the same order as the pure-Python path, so lexical scores are the same
floats either way; the similarity term is rounded to ``DECIMALS`` places so
that float noise in a matrix product cannot reorder notes. Only the eligible
scopes' rows are read.
"""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from remem.core.projection import ScopeKey, State
from remem.providers.embed import numpy_available
from remem.recall.index import LexicalIndex, ScopeIndex
from remem.recall.tokens import tokens

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from remem.recall.vectors import VectorIndex

T = TypeVar("T")
LEXICAL = "lexical"
HYBRID = "hybrid"

#: Weight of the embedding signal (BM25 is normalized to 1): a minority voice.
W_EMBED = 0.3
#: Cosine above the mean that earns the full ``W_EMBED`` when no note does better: keeps
#: a small spread of similarities (few notes) from being blown up to full weight.
SPREAD = 0.3
#: Share of a neighbour's score a note gains, by distance (1, 2, ...).
NEIGHBOURS = (0.6, 0.3)
#: Notes further apart in time than this are not neighbours (seconds).
NEIGHBOUR_WINDOW = 3600.0
#: The similarity term is rounded to this many decimals (determinism).
DECIMALS = 9

log = logging.getLogger("remem.recall")


def relevance(
    index: LexicalIndex,
    state: State,
    keys: Sequence[ScopeKey],
    query: str,
    *,
    accelerate: bool = True,
) -> tuple[dict[str, float], str]:
    """Scores (note id → relevance ≥ 0, any scale; absent means 0) and the mode that ran.

    An empty query scores nothing (``lexical``): ranking then follows
    explicit → current scope → newer. ``accelerate=False`` forces the
    pure-Python lexical path (tests compare the two).
    """
    if not query.strip():
        return {}, LEXICAL
    if accelerate and numpy_available():
        return relevance_rows(index, state, keys, query, _as_dict)
    terms = tokens(query, index.stems)
    with index.lock:
        return _sparse(index, index.ensure(state, keys), terms), LEXICAL


#: Per scope with rows: its index and the relevance of each of its rows (numpy).
Rows = list[tuple[ScopeIndex, "NDArray[np.float64]"]]


def relevance_rows(
    index: LexicalIndex,
    state: State,
    keys: Sequence[ScopeKey],
    query: str,
    collect: Callable[[Rows], T],
) -> tuple[T, str]:
    """:func:`relevance` as row arrays per scope index (needs numpy; the query must not be
    blank), handed to ``collect`` while the indexes cannot change (``collect`` may read
    each index's ids and version); returns what ``collect`` returned and the mode."""
    terms = tokens(query, index.stems)
    vectors = index.vectors
    qv = None
    if vectors is not None:
        try:  # before taking any lock: a remote embedder may be slow
            qv = vectors.embed_query(query)
        except Exception as exc:  # a remote embedder may be down: rank lexically, say so
            log.warning("query embedding failed, recall runs lexically: %s", exc)
        else:
            vectors.ensure(state, keys)  # notes of these scopes not embedded yet
    with index.lock:
        lexes = index.ensure(state, keys)
        if vectors is not None and qv is not None:
            return collect(_dense(index, lexes, terms, vectors, keys, qv)), HYBRID
        return collect(_dense(index, lexes, terms, None, keys, None)), LEXICAL


def _as_dict(rows: Rows) -> dict[str, float]:
    import numpy as np

    out: dict[str, float] = {}
    for ix, smoothed in rows:
        hit = np.flatnonzero(smoothed)
        if 2 * len(hit) > len(ix):  # most rows score: a plain zip is cheaper; zeros are harmless
            out.update(zip(ix.ids, smoothed.tolist(), strict=True))
        else:
            ids = ix.ids
            out.update(zip([ids[r] for r in hit.tolist()], smoothed[hit].tolist(), strict=True))
    return out


def _sparse(
    index: LexicalIndex, lexes: Sequence[ScopeIndex], terms: Sequence[str]
) -> dict[str, float]:
    """Lexical relevance in pure Python (no numpy needed)."""
    rows = index.bm25_rows(lexes, terms)
    top = max((max(found.values(), default=0.0) for found in rows), default=0.0)
    if top <= 0:
        return {}
    out: dict[str, float] = {}
    for ix, found in zip(lexes, rows, strict=True):
        base = {r: s / top for r, s in found.items()}
        ids = ix.ids
        for r, v in smooth_sparse(base, ix.said).items():
            out[ids[r]] = v
    return out


def smooth_sparse(base: Mapping[int, float], said: array[float]) -> dict[int, float]:
    """Neighbour smoothing (module docstring) of sparse row scores; pure Python."""
    n = len(said)
    best: list[dict[int, float]] = [{} for _ in NEIGHBOURS]
    for r, v in base.items():
        if v <= 0:
            continue
        t = said[r]
        for d, slot in enumerate(best, 1):
            for nb in (r - d, r + d):
                if 0 <= nb < n and abs(said[nb] - t) <= NEIGHBOUR_WINDOW and v > slot.get(nb, 0.0):
                    slot[nb] = v
    out: dict[int, float] = {}
    for i in sorted(set(base).union(*best)):
        v = base.get(i, 0.0)
        for lam, slot in zip(NEIGHBOURS, best, strict=True):
            v += lam * slot.get(i, 0.0)
        if v > 0:
            out[i] = v
    return out


def smooth_dense(scores: NDArray[np.float64], said: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`smooth_sparse` for a dense row vector (same arithmetic, same order)."""
    import numpy as np

    n = len(scores)
    out = scores.copy()
    for d, lam in enumerate(NEIGHBOURS, 1):
        if n <= d:
            break
        near = np.abs(said[d:] - said[:-d]) <= NEIGHBOUR_WINDOW  # pair (i, i + d)
        best = np.zeros(n)
        best[d:] = np.where(near, scores[:-d], 0.0)  # for row i: row i - d
        best[:-d] = np.maximum(best[:-d], np.where(near, scores[d:], 0.0))  # row i + d
        out += lam * best
    return out


def _dense(
    index: LexicalIndex,
    lexes: Sequence[ScopeIndex],
    terms: Sequence[str],
    vectors: VectorIndex | None,
    keys: Sequence[ScopeKey],
    qv: NDArray[np.float32] | None,
) -> Rows:
    """Lexical (and, given a query vector, hybrid) relevance with numpy, per scope."""
    import numpy as np

    # Empty scopes (often the agent's or the channel's) add nothing but per-call overhead.
    pairs = [(ix, key) for ix, key in zip(lexes, keys, strict=True) if len(ix)]
    if not pairs:
        return []
    lexes = [ix for ix, _ in pairs]
    lexical = index.bm25_dense(lexes, terms)
    top = max(float(a.max()) for a in lexical)
    fused = [a / top for a in lexical] if top > 0 else lexical
    if vectors is not None and qv is not None:
        with vectors.lock:
            sims = [_aligned(vectors, key, ix, qv) for ix, key in pairs]
        known = [s if m is None else s[m] for s, m in sims]
        pooled = np.concatenate(known) if len(known) > 1 else known[0]
        if len(pooled):
            centre = float(pooled.mean())
            scale = max(float(pooled.max()) - centre, SPREAD)
            for f, (sim, mask) in zip(fused, sims, strict=True):
                semantic = (sim - centre).clip(min=0.0) / scale
                if mask is not None:
                    semantic[~mask] = 0.0
                np.maximum(f, (W_EMBED * semantic).round(DECIMALS), out=f)
    return [
        (ix, smooth_dense(f, np.array(ix.said, dtype=np.float64)))
        for ix, f in zip(lexes, fused, strict=True)
    ]


def _aligned(
    vectors: VectorIndex, key: ScopeKey, ix: ScopeIndex, qv: NDArray[np.float32]
) -> tuple[NDArray[np.float64], NDArray[np.bool_] | None]:
    """Cosine similarity per row of ``ix``, and which rows have a vector (None: all)."""
    import numpy as np

    block = vectors.block(key)
    n = len(ix)
    if block is None or not len(block):
        return np.zeros(n), np.zeros(n, dtype=bool)
    sims = block.similarities(qv).astype(np.float64)
    if block.ids == ix.ids:  # the usual case: same notes, same (id) order
        return sims, None
    pos = {note_id: r for r, note_id in enumerate(block.ids)}
    at = np.fromiter((pos.get(i, -1) for i in ix.ids), dtype=np.int64, count=n)
    mask = at >= 0
    return np.where(mask, sims[at], 0.0), mask

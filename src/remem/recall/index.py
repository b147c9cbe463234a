"""Per-scope lexical indexes, updated incrementally on every write (a rebuildable cache).

Recall touches only the indexes of the eligible scopes, so its cost does not
grow with the total size of the store.

Layout. A scope's index keeps its notes as *rows in note-id order* (ids are
time-ordered, so this is creation order: neighbouring rows are notes said one
after the other). Per row it holds the note id, ``said_at`` (epoch seconds)
and the token count; the row's distinct terms live in one flat byte string of
4-byte term hashes with a parallel byte string of term frequencies, sliced by
``starts``. There is no per-note or per-term Python object: about 100-150
bytes per indexed note. Looking a term up is a C-speed substring search of
the flat hash string, which for the few hundred notes of a scope is cheaper
than maintaining posting lists.

Terms are identified by CRC-32 of their text (stable across processes and
runs); a rare collision only merges two terms' postings.
"""

from __future__ import annotations

import bisect
import math
import threading
import zlib
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from remem.core.events import Event
from remem.core.model import Note
from remem.core.projection import ScopeKey, State, scope_key
from remem.recall.indexed import (
    changed_notes,
    indexable,
    materialized,
)
from remem.recall.tokens import tokens

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from remem.recall.vectors import VectorIndex

#: BM25 parameters; b is low because chat notes are short and similar in length.
K1 = 1.2
B = 0.4
#: How many scopes keep a numpy copy of their index for fast scoring (recently queried).
DENSE_SCOPES = 256


def term_hash(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


def _pack(terms: Sequence[str]) -> tuple[bytes, bytes, int]:
    """(hashes, tfs, length) of one note's terms: distinct hashes, tf capped at 255."""
    counts = Counter(term_hash(t) for t in terms)
    hashes = array("I", counts.keys())
    if hashes.itemsize != 4:  # pragma: no cover - every supported platform has 4-byte "I"
        raise RuntimeError("array('I') is not 4 bytes wide here")
    return hashes.tobytes(), bytes(min(c, 255) for c in counts.values()), len(terms)


class ScopeIndex:
    """One scope's rows (ascending note id) and their terms; see the module docstring."""

    __slots__ = ("ids", "lens", "said", "starts", "terms", "tfs", "total_len", "version")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.said = array("d")
        self.lens = array("I")
        self.starts = array("I", [0])  # row r's entries are [starts[r], starts[r + 1])
        self.terms = bytearray()
        self.tfs = bytearray()
        self.total_len = 0
        self.version = 0

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, note_id: str) -> int:
        """The row of ``note_id``, or -1."""
        r = bisect.bisect_left(self.ids, note_id)
        return r if r < len(self.ids) and self.ids[r] == note_id else -1

    def insert(self, note_id: str, said: float, hashes: bytes, tfs: bytes, length: int) -> None:
        r = bisect.bisect_left(self.ids, note_id)
        at = self.starts[r]
        k = len(tfs)
        self.terms[at * 4 : at * 4] = hashes
        self.tfs[at:at] = tfs
        self.ids.insert(r, note_id)
        self.said.insert(r, said)
        self.lens.insert(r, length)
        self.starts.insert(r + 1, at + k)
        # Rows after an out-of-order insert shift (appends, the usual case, shift nothing).
        for i in range(r + 2, len(self.starts)):
            self.starts[i] += k
        self.total_len += length
        self.version += 1

    def delete(self, r: int) -> None:
        a, b = self.starts[r], self.starts[r + 1]
        k = b - a
        del self.terms[a * 4 : b * 4]
        del self.tfs[a:b]
        self.total_len -= self.lens[r]
        del self.ids[r]
        del self.said[r]
        del self.lens[r]
        del self.starts[r + 1]
        for i in range(r + 1, len(self.starts)):
            self.starts[i] -= k
        self.version += 1

    def entry(self, r: int) -> tuple[bytes, bytes, int]:
        """Row ``r`` as packed by :func:`_pack`."""
        a, b = self.starts[r], self.starts[r + 1]
        return bytes(self.terms[a * 4 : b * 4]), bytes(self.tfs[a:b]), self.lens[r]

    def matches(self, h: int) -> list[tuple[int, int]]:
        """``(row, tf)`` of every row holding the term with hash ``h``."""
        needle = h.to_bytes(4, "little")
        terms, starts, tfs = self.terms, self.starts, self.tfs
        out = []
        i = terms.find(needle)
        while i != -1:
            if i & 3:  # a match straddling two hashes: not a term
                i = terms.find(needle, i + 1)
                continue
            e = i >> 2
            out.append((bisect.bisect_right(starts, e) - 1, tfs[e]))
            i = terms.find(needle, i + 4)
        return out


class _Decoded:
    """numpy arrays of one :class:`ScopeIndex` version: entry → term hash, tf, row."""

    __slots__ = ("lens", "rows", "source", "terms", "tfs", "version")

    def __init__(self, ix: ScopeIndex) -> None:
        import numpy as np

        self.source = ix
        self.version = ix.version
        self.terms = np.frombuffer(bytes(ix.terms), dtype="<u4")
        self.tfs = np.frombuffer(bytes(ix.tfs), dtype=np.uint8)
        starts = np.array(ix.starts, dtype=np.int64)
        self.rows = np.repeat(np.arange(len(ix), dtype=np.int64), np.diff(starts))
        self.lens = np.array(ix.lens, dtype=np.float64)


class LexicalIndex:
    """Scope indexes of one agent, kept in step with the projection.

    A scope's index is built the first time a recall needs it and then updated
    incrementally on every event; at most ``max_scopes`` stay built (least
    recently used are dropped and rebuilt on demand), so memory follows the
    active scopes, not the size of the store.

    ``vectors`` is the agent's vector index when embeddings are available (set
    by :class:`~remem.app.agent_state.AgentLog`); relevance uses it for hybrid scoring.
    """

    def __init__(self, max_scopes: int = 4096, stems: dict[str, str] | None = None) -> None:
        self.scopes: OrderedDict[ScopeKey, ScopeIndex] = OrderedDict()
        #: The agent's memo of stems (remem.recall.memos), used for notes and queries.
        self.stems = stems
        self.max_scopes = max_scopes
        self.vectors: VectorIndex | None = None
        self._dense: OrderedDict[int, _Decoded] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def lock(self) -> threading.RLock:
        """Held while scoring, so a concurrent write cannot change rows mid-way."""
        return self._lock

    def reset(self) -> None:
        with self._lock:
            self.scopes.clear()
            self._dense.clear()

    def evict(self, key: ScopeKey) -> None:
        """Forget one scope's index (its notes left memory); rebuilt when next needed."""
        with self._lock:
            index = self.scopes.pop(key, None)
            if index is not None:
                self._dense.pop(id(index), None)

    def ensure(self, state: State, keys: Iterable[ScopeKey]) -> list[ScopeIndex]:
        """Build the indexes of ``keys`` that are not built yet; mark them recently used.

        Returns the indexes of ``keys``, in order.
        """
        out = []
        with self._lock:
            for key in keys:
                index = self.scopes.get(key)
                if index is not None:
                    self.scopes.move_to_end(key)
                    out.append(index)
                    continue
                index = self.scopes[key] = ScopeIndex()
                for note in sorted(state.in_scope(key[0], key[1]), key=lambda n: n.id):
                    if indexable(note):
                        index.insert(
                            note.id, note.said_at.timestamp(), *_pack(tokens(note.text, self.stems))
                        )
                out.append(index)
                while len(self.scopes) > self.max_scopes:
                    _, evicted = self.scopes.popitem(last=False)
                    self._dense.pop(id(evicted), None)
        return out

    def update(self, state: State, events: Iterable[Event]) -> None:
        """Apply the effect of ``events`` (already folded into ``state``)."""
        touched, moved = changed_notes(events)
        with self._lock:
            for note_id in touched:
                note = materialized(state, note_id)
                key = scope_key(note.scope, note.scope_id) if note is not None else None
                if note_id in moved:  # it may sit in any scope's index: look everywhere else
                    for other, index in self.scopes.items():
                        if other != key and (r := index.row(note_id)) >= 0:
                            index.delete(r)
                if key is not None:
                    self._put(note_id, note, key)

    def _put(self, note_id: str, note: Note | None, key: ScopeKey) -> None:
        index = self.scopes.get(key)
        if index is None:
            return
        r = index.row(note_id)
        if note is None or not indexable(note):
            if r >= 0:
                index.delete(r)
            return
        packed = _pack(tokens(note.text, self.stems))
        said = note.said_at.timestamp()
        if r >= 0:
            if index.said[r] == said and index.entry(r) == packed:
                return  # pin, reinforce...: nothing the index holds changed
            index.delete(r)
        index.insert(note_id, said, *packed)

    def bm25_rows(
        self, indexes: Sequence[ScopeIndex], query_terms: Sequence[str]
    ) -> list[dict[int, float]]:
        """BM25 of ``query_terms`` per row of each index (IDF over all of ``indexes``).

        Returns, for each index, ``{row: score}`` of the rows that match.
        """
        out: list[dict[int, float]] = [{} for _ in indexes]
        with self._lock:
            n_docs = sum(len(ix) for ix in indexes)
            if not n_docs or not query_terms:
                return out
            avg_len = max(sum(ix.total_len for ix in indexes) / n_docs, 1.0)
            for term, qtf in Counter(query_terms).items():
                h = term_hash(term)
                hits = [ix.matches(h) for ix in indexes]
                df = sum(len(m) for m in hits)
                if not df:
                    continue
                idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
                for ix, found, scores in zip(indexes, hits, out, strict=True):
                    lens = ix.lens
                    for r, tf in found:
                        norm = K1 * (1.0 - B + B * lens[r] / avg_len)
                        scores[r] = scores.get(r, 0.0) + qtf * idf * tf * (K1 + 1) / (tf + norm)
        return out

    def bm25_dense(
        self, indexes: Sequence[ScopeIndex], query_terms: Sequence[str]
    ) -> list[NDArray[np.float64]]:
        """:meth:`bm25_rows` as one dense array per index, computed with numpy.

        Same formula, same operation order, hence the same floats as the pure
        Python path (non-matching rows are 0). Needs numpy.
        """
        import numpy as np

        with self._lock:
            out = [np.zeros(len(ix)) for ix in indexes]
            n_docs = sum(len(ix) for ix in indexes)
            if not n_docs or not query_terms:
                return out
            avg_len = max(sum(ix.total_len for ix in indexes) / n_docs, 1.0)
            decoded = [self._decoded(ix) for ix in indexes]
            for term, qtf in Counter(query_terms).items():
                h = term_hash(term)
                hits = [(d.terms == h).nonzero()[0] for d in decoded]
                df = sum(len(e) for e in hits)
                if not df:
                    continue
                idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
                for d, entries, scores in zip(decoded, hits, out, strict=True):
                    if not len(entries):
                        continue
                    rows = d.rows[entries]
                    tf = d.tfs[entries].astype(np.float64)
                    norm = K1 * (1.0 - B + B * d.lens[rows] / avg_len)
                    scores[rows] += qtf * idf * tf * (K1 + 1) / (tf + norm)
            return out

    def _decoded(self, ix: ScopeIndex) -> _Decoded:
        """The numpy form of ``ix`` (cached for recently queried scopes, by version)."""
        hit = self._dense.get(id(ix))
        if hit is not None and hit.source is ix and hit.version == ix.version:
            self._dense.move_to_end(id(ix))
            return hit
        decoded = _Decoded(ix)
        self._dense[id(ix)] = decoded
        while len(self._dense) > DENSE_SCOPES:
            self._dense.popitem(last=False)
        return decoded

    def bm25(self, keys: Sequence[ScopeKey], query_terms: Sequence[str]) -> dict[str, float]:
        """BM25 scores by note id of the notes in ``keys`` (built scopes only)."""
        with self._lock:
            indexes = [self.scopes[k] for k in keys if k in self.scopes]
            rows = self.bm25_rows(indexes, query_terms)
            return {
                ix.ids[r]: s
                for ix, found in zip(indexes, rows, strict=True)
                for r, s in found.items()
            }

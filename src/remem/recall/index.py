"""Per-scope lexical indexes, updated incrementally on every write (a rebuildable cache).

Recall touches only the indexes of the eligible scopes, so its cost does not
grow with the total size of the store.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence

from remem.core.events import Erased, Event, NoteEvent
from remem.core.model import Note, Status
from remem.core.projection import ScopeKey, State, scope_key
from remem.recall.tokens import tokens

#: BM25 parameters; b is low because chat notes are short and similar in length.
K1 = 1.2
B = 0.4

_INDEXED = frozenset(
    {
        Status.ACTIVE,
        Status.PENDING,
        Status.UNVERIFIED,
        Status.DISABLED,
        Status.SUPERSEDED,
    }
)


class ScopeIndex:
    """Postings of one scope: term → {note id: term frequency}, and document lengths."""

    __slots__ = ("lengths", "postings", "total_len")

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = {}
        self.total_len = 0

    def add(self, note_id: str, terms: Sequence[str]) -> None:
        for term, tf in Counter(terms).items():
            self.postings.setdefault(term, {})[note_id] = tf
        self.lengths[note_id] = len(terms)
        self.total_len += len(terms)


class LexicalIndex:
    """Scope indexes of one agent, kept in step with the projection.

    A scope's index is built the first time a recall needs it and then updated
    incrementally on every event; at most ``max_scopes`` stay built (least
    recently used are dropped and rebuilt on demand), so memory follows the
    active scopes, not the size of the store.
    """

    def __init__(self, max_scopes: int = 4096) -> None:
        self.scopes: OrderedDict[ScopeKey, ScopeIndex] = OrderedDict()
        self.max_scopes = max_scopes
        self._home: dict[str, ScopeKey] = {}
        self._terms: dict[str, tuple[str, ...]] = {}

    def reset(self) -> None:
        self.scopes.clear()
        self._home.clear()
        self._terms.clear()

    def ensure(self, state: State, keys: Iterable[ScopeKey]) -> None:
        """Build the indexes of ``keys`` that are not built yet; mark them recently used."""
        for key in keys:
            if key in self.scopes:
                self.scopes.move_to_end(key)
                continue
            self.scopes[key] = ScopeIndex()
            for note in state.in_scope(key[0], key[1]):
                self._put(note)
            while len(self.scopes) > self.max_scopes:
                self._evict()

    def _evict(self) -> None:
        _, index = self.scopes.popitem(last=False)
        for note_id in index.lengths:
            self._home.pop(note_id, None)
            self._terms.pop(note_id, None)

    def update(self, state: State, events: Iterable[Event]) -> None:
        """Apply the effect of ``events`` (already folded into ``state``)."""
        seen = set()
        for ev in events:
            if isinstance(ev, NoteEvent) and ev.note_id not in seen:
                seen.add(ev.note_id)
                note = state.notes.get(ev.note_id)
                if note is None or isinstance(ev, Erased):
                    self._drop(ev.note_id)
                else:
                    self._put(note)

    def _put(self, note: Note) -> None:
        key = scope_key(note.scope, note.scope_id)
        if note.status not in _INDEXED or not note.text or key not in self.scopes:
            self._drop(note.id)
            return
        terms = tuple(tokens(note.text))
        if self._home.get(note.id) == key and self._terms.get(note.id) == terms:
            return
        self._drop(note.id)
        self.scopes.setdefault(key, ScopeIndex()).add(note.id, terms)
        self._home[note.id] = key
        self._terms[note.id] = terms

    def _drop(self, note_id: str) -> None:
        key = self._home.pop(note_id, None)
        terms = self._terms.pop(note_id, ())
        if key is None:
            return
        index = self.scopes.get(key)
        if index is None:
            return
        length = index.lengths.pop(note_id, None)
        if length is not None:
            index.total_len -= length
        for term in set(terms):
            docs = index.postings.get(term)
            if docs is not None:
                docs.pop(note_id, None)
                if not docs:
                    del index.postings[term]

    def bm25(self, keys: Sequence[ScopeKey], query_terms: Sequence[str]) -> dict[str, float]:
        """BM25 scores of the notes in ``keys`` for ``query_terms`` (IDF over those scopes)."""
        indexes = [self.scopes[k] for k in keys if k in self.scopes]
        n_docs = sum(len(ix.lengths) for ix in indexes)
        if not n_docs or not query_terms:
            return {}
        avg_len = max(sum(ix.total_len for ix in indexes) / n_docs, 1.0)
        scores: dict[str, float] = {}
        for term, qtf in Counter(query_terms).items():
            postings = [ix for ix in indexes if term in ix.postings]
            df = sum(len(ix.postings[term]) for ix in postings)
            if not df:
                continue
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            for ix in postings:
                for note_id, tf in ix.postings[term].items():
                    norm = K1 * (1.0 - B + B * ix.lengths[note_id] / avg_len)
                    scores[note_id] = scores.get(note_id, 0.0) + qtf * idf * tf * (K1 + 1) / (
                        tf + norm
                    )
        return scores

    def terms_of(self, note_id: str) -> tuple[str, ...]:
        return self._terms.get(note_id, ())

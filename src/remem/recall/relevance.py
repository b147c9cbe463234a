"""Relevance of candidate notes to a query: lexical BM25 over the eligible scopes.

Returns raw scores (any scale; ranking normalizes) and the name of the mode
that ran, which :class:`~remem.recall.engine.Recall` reports as ``retrieval``.
"""

from __future__ import annotations

from collections.abc import Sequence

from remem.core.projection import ScopeKey, State
from remem.recall.index import LexicalIndex
from remem.recall.tokens import tokens

LEXICAL = "lexical"


def relevance(
    index: LexicalIndex, state: State, keys: Sequence[ScopeKey], query: str
) -> tuple[dict[str, float], str]:
    """BM25 scores of notes in ``keys`` for ``query``; empty for an empty query."""
    terms = tokens(query)
    if not terms:
        return {}, LEXICAL
    index.ensure(state, keys)
    return index.bm25(keys, terms), LEXICAL

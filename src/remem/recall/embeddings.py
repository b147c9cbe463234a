"""Wiring an agent's vector index: which embedder, and where its cache lives.

Importing this module never imports numpy; :func:`make_vector_index` returns
``None`` (recall runs ``lexical``) when numpy or an embedder is unavailable.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remem.providers.embed import Embedder, EmbeddingError, default_embedder

if TYPE_CHECKING:
    from remem.recall.vectors import VectorIndex
    from remem.store.base import Backend

log = logging.getLogger("remem.embeddings")

#: The cache's name (``<data>/agents/<agent>/vectors.cache`` in a JSONL store).
CACHE_NAME = "vectors"


def make_vector_index(
    backend: Backend,
    agent: str,
    embedder: Embedder | bool | None = True,
    words: dict[str, list[int]] | None = None,
) -> VectorIndex | None:
    """The vector index of ``agent``, or ``None`` when embeddings are unavailable.

    ``embedder``: ``True`` for :func:`~remem.providers.embed.default_embedder`,
    ``False``/``None`` for none, or an :class:`Embedder` to use. ``words``: the agent's
    memo of words (:mod:`remem.recall.memos`); an embedder that can keep words' token
    ids (``with_word_memo``) keeps them there, and nowhere else.
    """
    chosen = default_embedder() if embedder is True else embedder or None
    if chosen is None:
        return None
    bind = getattr(chosen, "with_word_memo", None)
    if bind is not None and words is not None:
        chosen = bind(words)
    try:
        from remem.recall.vectors import VectorIndex
    except ImportError:  # numpy vanished between the embedder's check and now
        return None
    try:
        return VectorIndex(chosen, backend.cache(agent, CACHE_NAME))
    except EmbeddingError as exc:  # e.g. an HTTP embedder that cannot tell its dimension
        log.warning("recall runs lexically for agent %s: %s", agent, exc)
        return None

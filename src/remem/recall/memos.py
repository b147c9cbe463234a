"""One agent's memos of text derived from its notes (DESIGN §3: caches belong to one
agent's state and are dropped in one call; no module-level state holds note text).

Recall renders, normalizes and tokenizes the same notes on every turn, so the results
are memoized; the memos hold words and text of notes (and of queries), so they live
here, owned by one :class:`~remem.agentlog.AgentLog`, and :meth:`TextMemos.clear` drops
them all at once: compaction calls it (through ``AgentLog.forget_texts``) so that no
erased text outlives it in memory. Functions that take a memo accept ``None`` and then
memoize nothing.
"""

from __future__ import annotations

#: Entries one memo keeps at most; past this it starts over (bounded memory).
MEMO_LIMIT = 200_000


class TextMemos:
    """The memos of one agent; each maps an input to what was derived from it."""

    __slots__ = ("bodies", "norms", "stems", "words")

    def __init__(self) -> None:
        #: (note id, version) → rendered ``[meta] "quoted text"`` (remem.recall.render).
        self.bodies: dict[tuple[str, int], str] = {}
        #: note text → ``normalize_text`` of it (dedupe in remem.recall.engine).
        self.norms: dict[str, str] = {}
        #: word → its stem (remem.recall.tokens).
        self.stems: dict[str, str] = {}
        #: word → token ids (the embedder's, see remem.providers.embed.StaticEmbedder).
        self.words: dict[str, list[int]] = {}

    def clear(self) -> None:
        """Drop every memo (each starts over empty; the dicts stay the same objects, so
        whoever holds one, like the agent's embedder, sees it emptied)."""
        self.bodies.clear()
        self.norms.clear()
        self.stems.clear()
        self.words.clear()

    def __len__(self) -> int:
        return len(self.bodies) + len(self.norms) + len(self.stems) + len(self.words)

"""One agent's memos: everything derived from its state that is kept between calls
(DESIGN §3: caches belong to one agent's state, are keyed by its version and are dropped
in one call; no module-level state holds note text). Internal: not part of the public API.

Recall renders, normalizes and tokenizes the same notes on every turn, so the results
are memoized; writes and recalls of one run ask the same authorization and policy
questions, so the answers are memoized too. The memos hold words and text of notes (and
of queries), so they live here, owned by one :class:`~remem.app.agent_state.AgentLog`, and
:meth:`AgentMemos.clear` drops them all at once: compaction calls it (through
``AgentLog.forget_texts``) so that no erased text outlives it in memory. Functions that
take a text memo accept ``None`` and then memoize nothing.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")

#: Entries one memo keeps at most; past this it starts over (bounded memory).
MEMO_LIMIT = 200_000
#: Decisions one versioned memo keeps at most (one version's worth; a bound all the same).
DECISIONS_KEPT = 1024


class VersionedMemo(Generic[V]):
    """Answers derived from one version of the agent's state (and of the policy): a
    lookup under another version misses, and storing under a new version drops the
    old entries, so a stale answer is never returned and memory follows one version.

    Thread-safe without a lock: the version is part of every entry's key, so a store
    racing with a version change can only leave an entry nobody will ask for."""

    __slots__ = ("_entries", "_version")

    def __init__(self) -> None:
        self._version: Hashable = None
        self._entries: dict[tuple[Hashable, Hashable], V] = {}

    def get(self, version: Hashable, key: Hashable) -> V | None:
        return self._entries.get((version, key))

    def put(self, version: Hashable, key: Hashable, value: V) -> None:
        if version != self._version or len(self._entries) >= DECISIONS_KEPT:
            self._entries = {}
            self._version = version
        self._entries[(version, key)] = value

    def clear(self) -> None:
        self._entries = {}
        self._version = None

    def __len__(self) -> int:
        return len(self._entries)


class AgentMemos:
    """The memos of one agent; each maps an input to what was derived from it."""

    __slots__ = ("bodies", "grants", "norms", "recall_policies", "stems", "words")

    def __init__(self) -> None:
        #: (note id, version) → rendered ``[meta] "quoted text"`` (remem.recall.render).
        self.bodies: dict[tuple[str, int], str] = {}
        #: note text → ``normalize_text`` of it (dedupe in remem.recall.engine).
        self.norms: dict[str, str] = {}
        #: word → its stem (remem.recall.tokens).
        self.stems: dict[str, str] = {}
        #: word → token ids (the embedder's, see remem.providers.embed.StaticEmbedder).
        self.words: dict[str, list[int]] = {}
        #: Authorized creations (remem.app.remember): (envelope, scope, scope id) →
        #: (scope id, limits, the envelope's plain source), per state and policy version.
        self.grants: VersionedMemo[tuple[Any, ...]] = VersionedMemo()
        #: Recall policies (remem.app.settings): limits → policy, per state and
        #: preferences version.
        self.recall_policies: VersionedMemo[Any] = VersionedMemo()

    def clear(self) -> None:
        """Drop every memo (each starts over empty; the dicts stay the same objects, so
        whoever holds one, like the agent's embedder, sees it emptied)."""
        self.bodies.clear()
        self.norms.clear()
        self.stems.clear()
        self.words.clear()
        self.grants.clear()
        self.recall_policies.clear()

    def __len__(self) -> int:
        texts = len(self.bodies) + len(self.norms) + len(self.stems) + len(self.words)
        return texts + len(self.grants) + len(self.recall_policies)

"""Per-scope note vectors: a derived, erasable, rebuildable index (needs numpy).

Every note the recall indexes hold (see :func:`remem.recall.index.indexable`)
gets a vector from the agent's :class:`~remem.providers.embed.Embedder` once a
recall has read its scope: the first recall of a scope embeds the notes that
have no vector yet (in one batch), and from then on the change listener keeps
that scope's vectors in step as its notes change. A scope nobody recalls costs
no embedding, however much is written to it. Vectors are stored per scope as ``int8``
rows with one ``float32`` scale and a text fingerprint each (about 270 bytes
per note at 256 dimensions), in note-id order, so a recall reads only its
eligible scopes' rows and a million notes fit in memory.

Forgetting or erasing a note removes its row at once. The rows are also
persisted as a cache next to the log (:class:`~remem.recall.vectorfile.VectorFile`): an append-only
file of fixed-size, checksummed records, each naming a note and a
fingerprint of the exact text it embeds. The log stays the only source of
truth: a cached row waits in a per-scope stash until its note is seen, and
is used only if the note is still indexed, in that scope, with that same
text (and the embedder's name matches); every other note is embedded again.
A missing, stale, foreign or damaged file therefore costs time, never
correctness. Compaction removes the file (it may hold vectors of erased
notes) and writes it again from memory, where erased notes have no row.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from remem.core.events import Event
from remem.core.model import Note
from remem.core.projection import ScopeKey, State, scope_key
from remem.providers.embed import Embedder
from remem.recall.indexed import changed_notes, homes, indexable, materialized
from remem.recall.vectorfile import ID_BYTES, VectorFile

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from remem.store.base import Cache

log = logging.getLogger("remem.embeddings")

#: Notes embedded per call when many need vectors (a rebuild): bounds the memory it takes.
EMBED_CHUNK = 1024
#: After an embedding failure, notes waiting for a vector are retried this much later.
RETRY_SECONDS = 60.0
_GROW = 1.25
_MIN_CAP = 8


def fingerprint(text: str) -> int:
    """64-bit fingerprint of the exact text a vector embeds (CRC-32 and Adler-32).

    Not cryptographic, and need not be: it only tells a cached vector from a stale
    one, and it is computed for every note when an agent is opened.
    """
    raw = text.encode("utf-8")
    return zlib.crc32(raw) << 32 | zlib.adler32(raw)


def quantize(vectors: NDArray[np.float32]) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """Rows → (int8 rows, scale per row) with ``row ≈ q * scale``; zero rows get scale 0.

    One row (a write) takes a shorter path with the same float32 arithmetic."""
    if len(vectors) == 1:
        one = np.float32(np.abs(vectors[0]).max()) / np.float32(127.0)
        divisor = one if one > 0 else np.float32(1.0)
        row = np.rint(vectors / divisor).clip(-127, 127).astype(np.int8)
        return row, np.array([one], dtype=np.float32)
    peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
    scale = (peak / np.float32(127.0)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1.0))
    q = np.rint(vectors / safe[:, None]).clip(-127, 127).astype(np.int8)
    return q, scale


class VectorBlock:
    """One scope's vectors: rows in ascending note-id order, capacity grown in steps."""

    __slots__ = ("fps", "ids", "mat", "scale", "version")

    def __init__(self, dim: int) -> None:
        self.ids: list[str] = []
        self.mat = np.zeros((_MIN_CAP, dim), dtype=np.int8)
        self.scale = np.zeros(_MIN_CAP, dtype=np.float32)
        self.fps = np.zeros(_MIN_CAP, dtype=np.uint64)
        self.version = 0

    def __len__(self) -> int:
        return len(self.ids)

    def row(self, note_id: str) -> int:
        import bisect

        r = bisect.bisect_left(self.ids, note_id)
        return r if r < len(self.ids) and self.ids[r] == note_id else -1

    def _resize(self, cap: int) -> None:
        n = len(self.ids)
        for name in ("mat", "scale", "fps"):
            old = getattr(self, name)
            new = np.zeros((cap, *old.shape[1:]), dtype=old.dtype)
            new[:n] = old[:n]
            setattr(self, name, new)

    def insert(self, note_id: str, q: NDArray[np.int8], scale: float, fp: int) -> None:
        import bisect

        n = len(self.ids)
        if n == len(self.scale):
            self._resize(max(_MIN_CAP, int(n * _GROW) + 1))
        r = bisect.bisect_left(self.ids, note_id)
        if r < n:  # out of id order (a moved note): shift the tail down one row
            self.mat[r + 1 : n + 1] = self.mat[r:n].copy()
            self.scale[r + 1 : n + 1] = self.scale[r:n].copy()
            self.fps[r + 1 : n + 1] = self.fps[r:n].copy()
        self.ids.insert(r, note_id)
        self.mat[r] = q
        self.scale[r] = scale
        self.fps[r] = fp
        self.version += 1

    def delete(self, r: int) -> None:
        n = len(self.ids)
        self.mat[r : n - 1] = self.mat[r + 1 : n].copy()
        self.scale[r : n - 1] = self.scale[r + 1 : n].copy()
        self.fps[r : n - 1] = self.fps[r + 1 : n].copy()
        del self.ids[r]
        self.mat[n - 1] = 0
        self.scale[n - 1] = 0
        self.fps[n - 1] = 0
        self.version += 1
        if len(self.scale) > _MIN_CAP and len(self.ids) * 2 < len(self.scale):
            self._resize(max(_MIN_CAP, int(len(self.ids) * _GROW) + 1))

    def similarities(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        """Cosine similarity of every row with the unit vector ``query``."""
        n = len(self.ids)
        sims: NDArray[np.float32] = (self.mat[:n] @ query) * self.scale[:n]
        return sims


class _Stash:
    """Rows of one scope not yet checked against their notes (ids ascending).

    They come from the cache file, or are kept over a reset; a row is *taken*
    (and checked by fingerprint) when its note is seen, and written back to the
    file with every snapshot until then.
    """

    __slots__ = ("fps", "ids", "left", "scales", "taken", "vecs")

    def __init__(
        self,
        ids: NDArray[np.bytes_],
        fps: NDArray[np.uint64],
        scales: NDArray[np.float32],
        vecs: NDArray[np.int8],
    ) -> None:
        order = np.argsort(ids, kind="stable")
        self.ids = ids[order]
        self.fps = fps[order]
        self.scales = scales[order]
        self.vecs = vecs[order]
        self.taken = np.zeros(len(order), dtype=bool)
        self.left = len(order)

    def take(self, note_id: str) -> tuple[int, float, NDArray[np.int8]] | None:
        """The row of ``note_id`` (fingerprint, scale, int8 vector), removed from the stash."""
        raw = note_id.encode("utf-8")
        i = int(np.searchsorted(self.ids, raw))
        if i >= len(self.ids) or self.ids[i] != raw or self.taken[i]:
            return None
        self.taken[i] = True
        self.left -= 1
        return int(self.fps[i]), float(self.scales[i]), self.vecs[i]

    def rows(self) -> Iterator[tuple[str, int, float, NDArray[np.int8]]]:
        for i in np.flatnonzero(~self.taken).tolist():
            yield self.ids[i].decode("utf-8"), int(self.fps[i]), float(self.scales[i]), self.vecs[i]


class VectorIndex:
    """The vectors of one agent's notes, kept in step with the projection.

    Rows are checked against their note (by text fingerprint) when the note is
    seen: on the change listener for every write, and when a lazily loaded
    projection folds a scope. Until then, rows read from the cache file (or
    kept over a reset) wait in a per-scope stash, so opening a large store
    neither embeds nor materializes anything. A note that needs embedding waits
    too (in ``_missing``) until a recall asks for its scope (:meth:`ensure`).
    Thread-safe. ``cache`` is where rows persist (``None``: memory only). Embedding
    failures are logged and retried later; the notes involved rank lexically
    meanwhile.
    """

    def __init__(self, embedder: Embedder, cache: Cache | None = None) -> None:
        self.embedder = embedder
        self.dim = int(embedder.dim)
        self.blocks: dict[ScopeKey, VectorBlock] = {}
        self._stash: dict[ScopeKey, _Stash] = {}
        self._pending: set[str] = set()
        #: Scopes a recall has read: their notes are embedded as soon as they are seen.
        self._wanted: set[ScopeKey] = set()
        #: Per scope not read yet, notes seen that need embedding (done by ensure()).
        self._missing: dict[ScopeKey, set[str]] = {}
        self._retry_at = 0.0
        self._lock = threading.RLock()
        self.file = VectorFile(cache, embedder.name, self.dim) if cache is not None else None
        self._loaded = False

    # -- queries --------------------------------------------------------------------------

    def block(self, key: ScopeKey) -> VectorBlock | None:
        return self.blocks.get(key)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The query's unit vector; raises what the embedder raises."""
        vector: NDArray[np.float32] = self.embedder.embed([text])[0]
        return vector

    def __contains__(self, note_id: object) -> bool:
        """Whether ``note_id`` has a checked vector (looks in every scope: tests and tools)."""
        return isinstance(note_id, str) and any(b.row(note_id) >= 0 for b in self.blocks.values())

    def __len__(self) -> int:
        """Rows held: checked ones and those still waiting in the stash."""
        return sum(len(b) for b in self.blocks.values()) + sum(s.left for s in self._stash.values())

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    # -- upkeep ---------------------------------------------------------------------------

    def ensure(self, state: State, keys: Iterable[ScopeKey]) -> None:
        """A recall is about to read ``keys``: embed their notes that have no vector yet
        (one batch), and keep these scopes complete from now on."""
        with self._lock:
            first = self._load_once(state)
            waiting: list[str] = []
            for key in keys:
                self._wanted.add(key)
                missing = self._missing.pop(key, None)
                if missing:
                    waiting += sorted(missing)
            if waiting:
                self._sync(state, waiting, set())
            if first:
                self._after_load()

    def forget_texts(self) -> None:
        """Drop what the embedder keeps of texts it has seen (after compaction), if it
        keeps anything (``forget_words``, as the bundled static embedder has)."""
        forget = getattr(self.embedder, "forget_words", None)
        if forget is not None:
            forget()

    def resnapshot(self) -> None:
        """Write the cache file again with every row held (after it was removed)."""
        if self.file is None:
            return
        with self._lock:
            if self._loaded and len(self):
                self.file.snapshot(self._all_records())

    def close(self) -> None:
        """Write queued cache records and release open files (the index stays usable)."""
        if self.file is not None:
            with self._lock:
                self.file.flush(self._all_records)
            self.file.close()

    def update(self, state: State, events: Iterable[Event]) -> None:
        """Apply ``events`` (already folded into ``state``): embed new text, drop the dead."""
        touched, moved = changed_notes(events)
        with self._lock:
            first = self._load_once(state)
            ids = list(touched)
            if self._pending and time.monotonic() >= self._retry_at:
                ids.extend(i for i in sorted(self._pending) if i not in touched)
            self._sync(state, ids, moved)
            if first:
                self._after_load()

    def evict(self, key: ScopeKey) -> None:
        """One scope's notes left memory: its checked rows go back to the stash (kept, and
        written with snapshots), to be taken again when the scope is folded again."""
        with self._lock:
            self._wanted.discard(key)
            self._missing.pop(key, None)  # seen again when the scope is folded again
            block = self.blocks.pop(key, None)
            if block is None or not len(block):
                return
            n = len(block)
            ids = np.array([i.encode("utf-8") for i in block.ids], dtype=np.bytes_)
            fps, scales, vecs = block.fps[:n], block.scale[:n], block.mat[:n]
            old = self._stash.get(key)
            if old is not None:
                keep = ~old.taken
                ids = np.concatenate([old.ids[keep], ids])
                fps = np.concatenate([old.fps[keep], fps])
                scales = np.concatenate([old.scales[keep], scales])
                vecs = np.concatenate([old.vecs[keep], vecs])
            self._stash[key] = _Stash(ids, fps, scales, vecs)

    def reset(self, state: State, events: Iterable[Event] = ()) -> None:
        """The log was replaced (compaction, another process): start over from ``state``.

        Every row goes back to the stash under its note's new scope; rows of
        notes the new log does not hold (erased) leave memory and the file now.
        Then ``events`` (what the new state folded) are applied as in :meth:`update`.
        """
        with self._lock:
            if self.file is not None:
                self.file.discard_queue()  # it may hold rows of notes the new log erased
            self._missing.clear()  # the new state's notes are seen again below or on folding
            first = self._load_once(state)
            if not first and self._restash(state) and self.file is not None:
                self.file.snapshot(self._all_records())
            touched, _ = changed_notes(events)
            self._sync(state, list(touched), set())
            if first:
                self._after_load()

    def _load_once(self, state: State) -> bool:
        """On the first change: stash the cached rows of the notes ``state`` knows."""
        if self._loaded:
            return False
        self._loaded = True
        table = self.file.load() if self.file is not None else None
        if table is not None:
            self._stash_rows(state, *table)
        return True

    def _stash_rows(
        self,
        state: State,
        ids: NDArray[np.bytes_],
        fps: NDArray[np.uint64],
        scales: NDArray[np.float32],
        vecs: NDArray[np.int8],
    ) -> int:
        """Group rows by their note's current scope into the stash; returns rows dropped."""
        home = homes(state)
        groups: dict[ScopeKey, list[int]] = {}
        dropped = 0
        for i, raw in enumerate(ids.tolist()):
            key = home.get(raw.decode("utf-8", errors="replace"))
            if key is None:
                dropped += 1
            else:
                groups.setdefault(key, []).append(i)
        for key, rows in groups.items():
            self._stash[key] = _Stash(ids[rows], fps[rows], scales[rows], vecs[rows])
        return dropped

    def _restash(self, state: State) -> bool:
        """Move every row (checked or not) back to the stash; True if some were dropped."""
        rows = list(self._all_rows())
        self.blocks.clear()
        self._stash.clear()
        self._pending.clear()
        if not rows:
            return False
        ids = np.array([r[0].encode("utf-8") for r in rows], dtype=f"S{ID_BYTES}")
        fps = np.array([r[1] for r in rows], dtype=np.uint64)
        scales = np.array([r[2] for r in rows], dtype=np.float32)
        vecs = np.stack([r[3] for r in rows]).astype(np.int8, copy=False)
        return self._stash_rows(state, ids, fps, scales, vecs) > 0

    def _after_load(self) -> None:
        if self.file is not None and self.file.needs_snapshot(len(self)):
            self.file.snapshot(self._all_records())

    def _sync(self, state: State, note_ids: Sequence[str], moved: set[str]) -> None:
        """Bring the rows of ``note_ids`` in line with ``state``.

        Notes in ``moved`` may have rows in any scope; the others only in their
        own. A note the projection does not hold (a lazily loaded scope not
        folded yet) is left alone: it is seen when its scope is folded.
        """
        todo: list[tuple[Note, ScopeKey, int]] = []
        records: list[bytes] = []
        for note_id in note_ids:
            note = materialized(state, note_id)
            key = scope_key(note.scope, note.scope_id) if note is not None else None
            if note_id in moved:
                for other in [k for k in self.blocks if k != key]:
                    if self._delete(other, note_id):
                        records.append(self._record_drop(note_id))
                for other, waiting in self._missing.items():
                    if other != key:
                        waiting.discard(note_id)
            if note is None or key is None:
                continue
            stash = self._stash.get(key)
            if not indexable(note):
                self._pending.discard(note_id)
                if (missing := self._missing.get(key)) is not None:
                    missing.discard(note_id)
                if stash is not None:
                    self._take(key, stash, note_id)
                if self._delete(key, note_id):
                    records.append(self._record_drop(note_id))
                continue
            fp = fingerprint(note.text)
            block = self.blocks.get(key)
            r = block.row(note_id) if block is not None else -1
            if r >= 0 and block is not None and int(block.fps[r]) == fp:
                self._pending.discard(note_id)
                continue
            cached = self._take(key, stash, note_id) if stash is not None else None
            if cached is not None and cached[0] == fp:
                self._place(note.id, key, cached[2], cached[1], fp)
                self._pending.discard(note_id)
                continue
            if key not in self._wanted:  # embedded when a recall first reads the scope
                if r >= 0 and self._delete(key, note_id):  # a stale row must never rank
                    records.append(self._record_drop(note_id))
                self._missing.setdefault(key, set()).add(note_id)
                continue
            todo.append((note, key, fp))
        if records and self.file is not None:
            self.file.append(records, self._all_records)
        # In chunks: a rebuild of a large store must not hold every vector at once.
        for start in range(0, len(todo), EMBED_CHUNK):
            embedded = self._embed(todo[start : start + EMBED_CHUNK])
            if embedded is None:  # the embedder is failing: the rest waits for the retry
                self._pending.update(note.id for note, _, _ in todo[start:])
                break
            if embedded and self.file is not None:
                self.file.append(embedded, self._all_records)

    def _take(
        self, key: ScopeKey, stash: _Stash, note_id: str
    ) -> tuple[int, float, NDArray[np.int8]] | None:
        row = stash.take(note_id)
        if not stash.left:
            del self._stash[key]
        return row

    def _embed(self, todo: list[tuple[Note, ScopeKey, int]]) -> list[bytes] | None:
        """Embed and place ``todo``; the file records to append, or ``None`` on failure."""
        texts = list(dict.fromkeys(note.text for note, _, _ in todo))
        try:
            fresh = self._quantized(texts)
        except Exception as exc:  # a remote embedder may fail in many ways; retry later
            self._pending.update(note.id for note, _, _ in todo)
            # Do not retry the backlog on every write while the embedder is down.
            self._retry_at = time.monotonic() + RETRY_SECONDS
            log.warning("could not embed %d note(s), will retry: %s", len(texts), exc)
            return None
        records = []
        for note, key, fp in todo:
            row, row_scale = fresh[note.text]
            self._place(note.id, key, row, row_scale, fp)
            self._pending.discard(note.id)
            if self.file is not None:
                records.append(self.file.record(note.id, fp, row_scale, row.tobytes()))
        return records

    def _quantized(self, texts: Sequence[str]) -> dict[str, tuple[NDArray[np.int8], float]]:
        """Each text's int8 vector and scale; raises what the embedder raises, or
        ``ValueError`` for a result of the wrong shape."""
        vectors = self.embedder.embed(list(texts))
        if vectors.shape != (len(texts), self.dim):
            raise ValueError(f"embedder returned shape {vectors.shape}")
        q, scale = quantize(np.asarray(vectors, dtype=np.float32))
        return {text: (q[i], float(scale[i])) for i, text in enumerate(texts)}

    def _place(
        self, note_id: str, key: ScopeKey, q: NDArray[np.int8], scale: float, fp: int
    ) -> None:
        block = self.blocks.get(key)
        if block is None:
            block = self.blocks[key] = VectorBlock(self.dim)
        elif (r := block.row(note_id)) >= 0:
            block.delete(r)
        block.insert(note_id, q, scale, fp)

    def _delete(self, key: ScopeKey, note_id: str) -> bool:
        block = self.blocks.get(key)
        if block is None or (r := block.row(note_id)) < 0:
            return False
        block.delete(r)
        if not len(block):
            del self.blocks[key]
        return True

    def _record_drop(self, note_id: str) -> bytes:
        return self.file.record(note_id, 0, 0.0, None) if self.file is not None else b""

    def _all_rows(self) -> Iterator[tuple[str, int, float, NDArray[np.int8]]]:
        """Every row held: (note id, fingerprint, scale, int8 vector)."""
        for block in self.blocks.values():
            for r, note_id in enumerate(block.ids):
                yield note_id, int(block.fps[r]), float(block.scale[r]), block.mat[r]
        for stash in self._stash.values():
            yield from stash.rows()

    def _all_records(self) -> list[bytes]:
        assert self.file is not None
        record = self.file.record
        return [record(i, fp, scale, vec.tobytes()) for i, fp, scale, vec in self._all_rows()]

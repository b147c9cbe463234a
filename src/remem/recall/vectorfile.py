"""The on-disk cache of an agent's note vectors (``vectors.cache``), see
:mod:`remem.recall.vectors`: derived, checked against the log when read, erasable."""

from __future__ import annotations

import json
import logging
import mmap
import time
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from remem.store.base import Cache

log = logging.getLogger("remem.embeddings")

#: What a cache file yields: note ids (bytes), fingerprints, scales and int8 rows.
CacheTable = tuple[
    "NDArray[np.bytes_]", "NDArray[np.uint64]", "NDArray[np.float32]", "NDArray[np.int8]"
]

#: Longest note id a record holds (longer ids are embedded again on each open).
ID_BYTES = 40
#: Records are written once this many are queued, or this much later (and on close).
FLUSH_RECORDS = 64
FLUSH_SECONDS = 1.0


class VectorFile:
    """The on-disk cache of an agent's vectors (see the module docstring).

    Layout: ``MAGIC``, a 4-byte header length, a JSON header naming the
    embedder and dimension, then fixed-size records::

        crc32 u32 | op u8 (1 put, 0 drop) | id length u8 | id 40s | fingerprint u64
        | scale f32 | vector int8[dim]

    The CRC covers the record after itself. A torn tail (a partial record) is
    ignored. Appends are queued and written in batches (``FLUSH_RECORDS`` records
    or ``FLUSH_SECONDS`` later, and on close), one ``write`` each, without fsync:
    this is a cache, checked against the log when it is read.
    """

    MAGIC = b"REMEMVEC"

    def __init__(self, cache: Cache, embedder: str, dim: int) -> None:
        self.cache = cache
        self.path = cache.label  # names the cache in messages
        self.dim = dim
        header = json.dumps({"v": 2, "embedder": embedder, "dim": dim}, sort_keys=True).encode()
        self.header = self.MAGIC + len(header).to_bytes(4, "little") + header
        self.size = 4 + 1 + 1 + ID_BYTES + 8 + 4 + dim
        self.dtype = np.dtype(
            [
                ("crc", "<u4"),
                ("op", "u1"),
                ("idlen", "u1"),
                ("id", f"S{ID_BYTES}"),
                ("fp", "<u8"),
                ("scale", "<f4"),
                ("vec", "i1", (dim,)),
            ]
        )
        assert self.dtype.itemsize == self.size
        self.records = 0
        #: Records appended but not written yet, and since when.
        self._queue: list[bytes] = []
        self._queued_at = 0.0

    def record(self, note_id: str, fp: int, scale: float, vector: bytes | None) -> bytes:
        raw = note_id.encode("utf-8")
        if len(raw) > ID_BYTES:
            return b""  # not cacheable: embedded again on the next open
        body = (
            (b"\x01" if vector is not None else b"\x00")
            + bytes([len(raw)])
            + raw.ljust(ID_BYTES, b"\x00")
            + fp.to_bytes(8, "little")
            + np.float32(scale).tobytes()
            + (vector if vector is not None else bytes(self.dim))
        )
        return zlib.crc32(body).to_bytes(4, "little") + body

    def load(self) -> CacheTable | None:
        """The valid puts in the file, the last record per note winning; ``None``: nothing.

        Returns ``(ids, fingerprints, scales, int8 rows)``: arrays copied out of a
        read-only map of the file, so a large cache is never duplicated in memory.
        """
        try:
            with self.cache.mapped() as mapped:
                if mapped is None:
                    return None
                size = len(mapped)
                if size < len(self.header):
                    self.records = -1
                    return None
                return self._parse(mapped, size)
        except (OSError, ValueError, BufferError) as exc:
            log.warning("ignoring unreadable vector cache %s: %s", self.path, exc)
            self.records = -1
            return None

    def _parse(self, mapped: mmap.mmap | bytes, size: int) -> CacheTable | None:
        start = len(self.header)
        if mapped[:start] != self.header:
            log.info("vector cache %s is for another embedder or version; rebuilding", self.path)
            self.records = -1
            return None
        count = (size - start) // self.size
        view = memoryview(mapped)
        records = None
        try:
            records = np.frombuffer(mapped, dtype=self.dtype, count=count, offset=start)
            crcs = records["crc"].tolist()
            at = start + 4
            valid = np.fromiter(
                (
                    zlib.crc32(view[at + i * self.size : start + (i + 1) * self.size]) == crc
                    for i, crc in enumerate(crcs)
                ),
                dtype=bool,
                count=count,
            )
            good = np.flatnonzero(valid)
            self.records = count if len(good) == count and size == start + count * self.size else -1
            if not len(good):
                return None
            # The last valid record of each note decides (a put, or a drop).
            keys = records["id"][good][::-1]
            _, first = np.unique(keys, return_index=True)
            last = good[::-1][first]
            last = np.sort(last[records["op"][last] == 1])
            table = records[last]  # a copy: nothing below refers to the map
        finally:
            del records
            view.release()
        return (
            np.ascontiguousarray(table["id"]),
            table["fp"].astype(np.uint64),
            table["scale"].astype(np.float32),
            np.ascontiguousarray(table["vec"], dtype=np.int8),
        )

    def needs_snapshot(self, live: int) -> bool:
        """True when the file is missing, damaged or mostly superseded records."""
        return self.records < 0 or self.records > 2 * live + 1024 or self.cache.size() is None

    def snapshot(self, records: Sequence[bytes]) -> None:
        """Atomically replace the file with ``records`` (the current rows)."""
        self._queue = []  # the rows written now include what was queued
        try:
            self.cache.replace([self.header, b"".join(records)])
            self.records = len(records)
        except OSError as exc:
            log.warning("could not write vector cache %s: %s", self.path, exc.strerror)

    def append(self, records: Sequence[bytes], everything: Any) -> None:
        """Queue ``records`` for the file; written in batches (see :meth:`flush`).

        ``everything`` is a callable returning every current row's record (written
        instead when the file went away, e.g. after compaction). A batch not yet
        written when the process dies costs only re-embedding those notes on the
        next open: the cache is checked against the log, never trusted.
        """
        if not self._queue:
            self._queued_at = time.monotonic()
        self._queue.extend(records)
        if len(self._queue) >= FLUSH_RECORDS or time.monotonic() - self._queued_at >= FLUSH_SECONDS:
            self.flush(everything)

    def discard_queue(self) -> None:
        """Drop queued records unwritten (the rows they describe are gone)."""
        self._queue = []

    def flush(self, everything: Any) -> None:
        """Write the queued records (one ``write``); see :meth:`append`."""
        records, self._queue = self._queue, []
        if not records:
            return
        try:
            size = self.cache.size()
            fits = size is not None and size >= len(self.header)
            if fits and self.cache.append(b"".join(records)):
                self.records += len(records)
                return
        except OSError as exc:
            log.warning("could not append to vector cache %s: %s", self.path, exc.strerror)
            return
        self.snapshot(everything())  # no cache (compaction scrubbed it), or a damaged one

    def close(self) -> None:
        """Release what the cache holds open (reopened on the next append)."""
        self.cache.close()

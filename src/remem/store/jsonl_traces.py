"""One agent's ``traces.jsonl`` in a JSONL data directory (the trace store's adapter)."""

from __future__ import annotations

import collections
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from remem.core.events import seal
from remem.errors import StoreError
from remem.store import syscalls
from remem.store.sealed import SealedFile

__all__ = ["JsonlTraceLog"]


def _parse_trace(data: dict[str, Any], where: str) -> dict[str, Any]:
    return data


class JsonlTraceLog:
    """One agent's ``traces.jsonl``: sealed lines, appended without per-record fsync.

    Traces are derived data written on every recall, so appending never reads the
    file: it takes the lock, isolates a torn tail by starting a new line, and
    writes one line. Reads scan the file for the run wanted (a damaged trace line
    is skipped, not fatal: the event log is the source of truth), after looking at
    the traces this process wrote recently.
    """

    RECENT = 512
    SHARED_KEPT = 256

    def __init__(self, path: Path) -> None:
        self._file: SealedFile[dict[str, Any]] = SealedFile(path, _parse_trace, durable=False)
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=self.RECENT)
        #: Shared parts by ref (most recent last), and which ones the file open now holds
        #: (by the file's generation).
        self._shared: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()
        self._written: tuple[int, set[str]] = (-1, set())

    def append(self, record: dict[str, Any], shared: dict[str, Any] | None = None) -> None:
        line = seal(orjson.dumps(record))
        try:
            with self._file.locked_blind() as fd:
                st = os.fstat(fd)
                if self._file.generation != self._written[0]:
                    self._written = (self._file.generation, set())
                if shared is not None and shared["ref"] not in self._written[1]:
                    line = seal(orjson.dumps({**shared, "type": "shared"})) + line
                if st.st_size and syscalls.pread(fd, 1, st.st_size - 1) != b"\n":
                    line = b"\n" + line  # a torn trace stays a line of its own
                syscalls.write(fd, line)
        except OSError as exc:
            raise StoreError(f"cannot write traces {self._file.path}: {exc.strerror}") from None
        if shared is not None:
            ref = str(shared["ref"])
            self._written[1].add(ref)
            self._keep_shared(ref, shared)
        self._recent.append(record)

    def _keep_shared(self, ref: str, shared: dict[str, Any]) -> None:
        self._shared[ref] = shared
        self._shared.move_to_end(ref)
        while len(self._shared) > self.SHARED_KEPT:
            self._shared.popitem(last=False)

    def shared(self, ref: str) -> dict[str, Any] | None:
        found = self._shared.get(ref)
        if found is not None:
            return found
        needle = orjson.dumps(ref)
        for rec in self._file.scan(lambda b: needle in b):
            if rec.get("type") == "shared" and rec.get("ref") == ref:
                rec = {k: v for k, v in rec.items() if k != "type"}
                self._keep_shared(ref, rec)
                return rec
        return None

    def find(self, run_id: str) -> list[dict[str, Any]]:
        recent = [r for r in self._recent if r.get("run_id") == run_id]
        if recent:
            return recent
        needle = orjson.dumps(run_id)
        return [r for r in self._file.scan(lambda b: needle in b) if r.get("run_id") == run_id]

    def latest(self, actor: str, channel: str | None) -> dict[str, Any] | None:
        def ours(rec: dict[str, Any]) -> bool:
            return bool(rec.get("actor") == actor and rec.get("channel") == channel)

        recent = [r for r in self._recent if ours(r)]
        if recent:
            return recent[-1]
        needle = orjson.dumps(actor)
        stored = [r for r in self._file.scan(lambda b: needle in b) if ours(r)]
        return stored[-1] if stored else None

    def all(self) -> list[dict[str, Any]]:
        return self._file.scan(lambda b: True)

    def rewrite(self, records: Sequence[dict[str, Any]]) -> None:
        with self._file.locked():
            self._file.rewrite([seal(orjson.dumps(r)) for r in records])
            self._recent.clear()
            self._written = (-1, set())

    def close(self) -> None:
        self._file.close()

"""Reading a file of sealed JSON lines: the reading half of :class:`~remem.store.sealed.SealedFile`
(see that module for the format and the durability rules)."""

from __future__ import annotations

import bisect
import os
import zlib
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from remem.core.events import try_unseal, unseal
from remem.errors import CorruptLog, StoreError
from remem.store import private, syscalls
from remem.store.base import TornTail
from remem.store.durable import complete_lines, reason
from remem.store.lockfile import LockFile

T = TypeVar("T")
Visitor = Callable[[dict[str, Any], int], None]
_CHUNK = 16 * 1024 * 1024


class SealedReader(Generic[T]):
    """The reading half of a :class:`~remem.store.sealed.SealedFile` (which holds its
    state, including what writing needs); ``parse`` turns a checked dict into a ``T``."""

    def __init__(
        self,
        path: Path,
        parse: Callable[[dict[str, object], str], T],
        *,
        durable: bool = True,
        repair_hint: str = "",
        dirs: tuple[Path, ...] = (),
        number_key: str | None = None,
    ) -> None:
        self.path = path
        #: A key that a record lacking it gets with its 1-based line number as value
        #: (the event log's ``seq``: lines written before seq existed are numbered so).
        self._number_key = number_key
        #: Where each line starts, by file generation (built when first needed).
        self._line_starts: tuple[int, array[int]] | None = None
        self.lock_path = path.with_name(path.name + ".lock")
        self._parse = parse
        self._durable = durable
        #: The file, read with ``pread``; opened read-write in append mode when allowed,
        #: so that appends under the lock reuse it (``_fd_writes``).
        self._fd: int | None = None
        self._fd_writes = False
        self._ino: int | None = None
        #: Size seen by the last ``read_new`` (under the lock: the size writers left).
        self._size = 0
        self._offset = 0
        self._lineno = 0
        self._failed: str | None = None
        #: How to repair a damaged line (said by the error that refuses the file).
        self._repair_hint = repair_hint
        #: Directories made durable before the first append of this handle (the file's
        #: own, then its ancestors): a directory whose creation could not be made durable
        #: in an earlier run is made so before anything is acknowledged in it.
        self._dirs = dirs or (path.parent,)
        self._dirs_synced = False
        #: Whether the current holder of the lock appended or rewrote (see _Held).
        self._wrote = False
        self.repairs: list[TornTail] = []
        self._lock = LockFile(self.lock_path)
        #: Counts the files opened at ``path``: a change means "not the file you wrote to"
        #: (an inode number alone can be reused once the old file is closed).
        self.generation = 0
        #: Called before a visiting read delivers a whole new file (it was replaced).
        self.on_reset: Callable[[], None] | None = None

    # -- reading ---------------------------------------------------------------

    def read_new(self, visit: Visitor | None = None) -> tuple[list[T], bool]:
        """Complete, valid records appended since the last call; ``True`` when reset.

        With ``visit``, each checked record is handed to ``visit(data, offset)`` as a
        plain dict instead (nothing is returned): a cheap scan that parses no further.
        """
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            reset = self._ino is not None
            self._close_fd()
            self._ino, self._offset, self._lineno = None, 0, 0
            if reset and visit is not None and self.on_reset is not None:
                self.on_reset()  # the file is gone: what the caller folded is gone with it
            return [], reset
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {reason(exc)}") from None
        reset = False
        if st.st_ino != self._ino or st.st_size < self._offset:
            reset = self._ino is not None
            self._reopen()
        if reset and visit is not None and self.on_reset is not None:
            self.on_reset()
        self._size = st.st_size
        if st.st_size == self._offset:
            return [], reset
        return self._read_from(st.st_size, visit), reset

    def _reopen(self, *, create: bool = False) -> None:
        self._close_fd()
        flags = os.O_RDWR | os.O_APPEND
        opener = private.open_file if create else syscalls.open_fd
        try:
            try:
                self._fd, self._fd_writes = opener(self.path, flags), True
            except PermissionError:
                if create:
                    raise
                # A reader may lack write access.
                self._fd = syscalls.open_fd(self.path, os.O_RDONLY)
            self._ino = os.fstat(self._fd).st_ino
        except OSError as exc:
            raise StoreError(f"cannot open {self.path}: {reason(exc)}") from None
        self._offset, self._lineno = 0, 0
        self.generation += 1

    def _read_from(self, size: int, visit: Visitor | None = None) -> list[T]:
        assert self._fd is not None
        records: list[T] = []
        pending = b""
        pos = self._offset
        start = (self._lineno, self._offset)
        bad: tuple[int, str] | None = None
        try:
            while pos < size:
                chunk = self._pread(min(_CHUNK, size - pos), pos)
                if not chunk:
                    break
                pos += len(chunk)
                data = pending + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    pending = data
                    continue
                pending = data[cut + 1 :]
                bad = self._parse_lines(data[: cut + 1], records, bad, visit)
        except BaseException:
            if visit is None:
                # The records parsed so far never reach the caller: read them again next time.
                self._lineno, self._offset = start
            raise
        return records

    def _parse_lines(
        self,
        block: bytes,
        records: list[T],
        bad: tuple[int, str] | None,
        visit: Visitor | None = None,
    ) -> tuple[int, str] | None:
        """Parse whole lines; advance the offset only past good lines.

        In a durable file a bad line is corruption: it ends in a newline, so it is no
        interrupted write. In the traces a bad line is remembered, and the file is
        corrupt only if a good line follows it.
        """
        lineno, offset = self._lineno, self._offset
        consumed = lineno  # line number of the last line delivered
        number = self._number_key
        try:
            for line in block.split(b"\n")[:-1]:
                lineno += 1
                data = try_unseal(line) if line else None
                if data is None:
                    if self._durable:
                        raise CorruptLog(self._damaged(self._why_bad(line, lineno)))
                    if bad is None:
                        bad = (lineno, self._why_bad(line, lineno))
                    continue
                if bad is not None:
                    raise CorruptLog(
                        f"{bad[1]} (a valid line follows it, so this is not an interrupted "
                        "write; restore the file from a backup or move the damaged line out)"
                    )
                # The checksum holds, so this line was written whole: if it does not parse
                # it is not a torn write and must never be cut as one. Fail closed here.
                if number is not None and number not in data:
                    data[number] = lineno
                if visit is None:
                    records.append(self._parse(data, f"{self.path} line {lineno}"))
                else:
                    visit(data, offset)
                offset += len(line) + 1
                consumed = lineno
        finally:
            # Only delivered lines count: after an error, the next read starts (and
            # numbers its lines) at the first line that was not delivered.
            self._lineno, self._offset = consumed, offset
        if bad is not None:
            # Trailing bad lines stay unconsumed; the next writer cuts them as a torn tail.
            self._lineno = bad[0] - 1
        return bad

    def _damaged(self, why: str) -> str:
        return (
            f"{why} (the line ends in a newline, so it was damaged after it was written, "
            "not cut short by a crash; nothing was changed); "
            + (self._repair_hint or "restore the file from a backup or move the line out")
        )

    def _pread(self, size: int, offset: int) -> bytes:
        assert self._fd is not None
        try:
            return syscalls.pread(self._fd, size, offset)
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {reason(exc)}") from None

    _TAIL = 4096

    def mark(self) -> dict[str, Any] | None:
        """Identity of what was read so far: inode, offset, line count and a checksum of
        the bytes just before the offset (None before anything was read)."""
        if self._fd is None or not self._offset:
            return None
        start = max(0, self._offset - self._TAIL)
        tail = self._pread(self._offset - start, start)
        return {
            "ino": self._ino,
            "offset": self._offset,
            "lineno": self._lineno,
            "tail_crc": zlib.crc32(tail),
        }

    def restart(self) -> None:
        self._close_fd()
        self._ino, self._offset, self._lineno = None, 0, 0

    def resume(self, mark: dict[str, Any]) -> bool:
        """Skip to ``mark`` when this file is the one it was taken from (same inode, the
        same bytes before the offset); else leave reading where it was and say so."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        offset = int(mark["offset"])
        if st.st_ino != mark["ino"] or st.st_size < offset or self._offset:
            return False
        self._reopen()
        assert self._fd is not None
        start = max(0, offset - self._TAIL)
        if zlib.crc32(self._pread(offset - start, start)) != mark["tail_crc"]:
            return False
        self._offset, self._lineno = offset, int(mark["lineno"])
        return True

    def _why_bad(self, line: bytes, lineno: int) -> str:
        where = f"{self.path} line {lineno}"
        if not line:
            return f"{where}: empty line; the log is damaged"
        try:
            unseal(line, where)
        except CorruptLog as exc:
            return exc.message
        return f"{where}: not a JSON object; the log is damaged"

    def read_at(self, offsets: Sequence[int]) -> list[T]:
        """The records that start at ``offsets`` (as given by a visiting read), in that order."""
        if not offsets:
            return []
        if self._fd is None:
            self._reopen()
        assert self._fd is not None
        out = []
        number = self._number_key
        for offset in offsets:
            line = self._line_at(offset)
            where = f"{self.path} at byte {offset}"
            data = unseal(line, where)
            if number is not None and number not in data:
                data[number] = self._lineno_at(offset)
            out.append(self._parse(data, where))
        return out

    def _lineno_at(self, offset: int) -> int:
        """The 1-based number of the line starting at ``offset``. Only lines written before
        their records carried a number need it (a log older than ``seq``, until its first
        compaction): the starts of every line are indexed once per file (8 bytes a line)."""
        index = self._line_starts
        if index is None or index[0] != self.generation:
            self._line_starts = index = (self.generation, self._index_line_starts())
        return bisect.bisect_right(index[1], offset)

    def _index_line_starts(self) -> array[int]:
        assert self._fd is not None
        starts = array("Q", [0])
        pos, size = 0, os.fstat(self._fd).st_size
        while pos < size:
            chunk = self._pread(min(_CHUNK, size - pos), pos)
            if not chunk:
                break
            at = chunk.find(b"\n")
            while at >= 0:
                starts.append(pos + at + 1)
                at = chunk.find(b"\n", at + 1)
            pos += len(chunk)
        return starts

    def _line_at(self, offset: int) -> bytes:
        assert self._fd is not None
        size = 4096
        while True:
            chunk = self._pread(size, offset)
            end = chunk.find(b"\n")
            if end >= 0:
                return chunk[:end]
            if len(chunk) < size:
                raise CorruptLog(f"{self.path}: no complete record at byte {offset}")
            size *= 4

    def scan(self, keep: Callable[[bytes], bool]) -> list[T]:
        """Parse, from the start of the file, only the complete lines ``keep`` accepts.

        A damaged complete line raises :class:`CorruptLog` in a durable file and is
        skipped in the traces; bytes after the last newline (a torn tail) are ignored.
        """
        out: list[T] = []
        try:
            for lineno, line in enumerate(complete_lines(self.path), 1):
                if keep(line):
                    where = f"{self.path} line {lineno}"
                    try:
                        data = unseal(line, where)
                        if self._number_key is not None and self._number_key not in data:
                            data[self._number_key] = lineno
                        out.append(self._parse(data, where))
                    except CorruptLog as exc:
                        if self._durable:
                            raise CorruptLog(self._damaged(exc.message)) from None
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {reason(exc)}") from None
        return out

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._fd_writes = False

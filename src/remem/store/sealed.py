"""A file of sealed JSON lines shared by several processes.

Writers take an exclusive ``flock`` on a sibling ``.lock`` file. Under the lock
a writer first reads every complete line other processes appended; whatever
lies past the last good line can only be the remains of a write interrupted by
a crash (writers always append whole lines under the lock), so it is cut off
and saved aside as ``<file>.torn-<time>-<pid>`` and reported. A damaged line
followed by a good one is corruption inside the log: the file is refused with
an error naming the file and line, never skipped.

Appends use ``os.write`` on a raw descriptor; durable files are ``fsync``ed
before :meth:`SealedFile.append` returns. After a failed ``fsync`` the file
refuses further writes until it is reopened, because the kernel may have
dropped the dirty pages and a later successful fsync would prove nothing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from remem.core.events import try_unseal, unseal
from remem.errors import CorruptLog, StoreError
from remem.store.base import TornTail

T = TypeVar("T")
Visitor = Callable[[dict[str, Any], int], None]
_CHUNK = 16 * 1024 * 1024


class SealedFile(Generic[T]):
    """Append-only sealed lines; ``parse`` turns a checked dict into a record ``T``."""

    def __init__(
        self,
        path: Path,
        parse: Callable[[dict[str, object], str], T],
        *,
        durable: bool = True,
    ) -> None:
        self.path = path
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
        self.repairs: list[TornTail] = []
        self._lock = _LockFile(self.lock_path)
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
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from None
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
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        try:
            try:
                self._fd, self._fd_writes = os.open(self.path, flags, 0o644), True
            except PermissionError:
                if create:
                    raise
                self._fd = os.open(self.path, os.O_RDONLY)  # a reader may lack write access
        except OSError as exc:
            raise StoreError(f"cannot open {self.path}: {exc.strerror}") from None
        self._ino = os.fstat(self._fd).st_ino
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
                chunk = os.pread(self._fd, min(_CHUNK, size - pos), pos)
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

        A bad line is remembered; if a good line follows it, the log is corrupt.
        """
        lineno, offset = self._lineno, self._offset
        consumed = lineno  # line number of the last line delivered
        try:
            for line in block.split(b"\n")[:-1]:
                lineno += 1
                data = try_unseal(line) if line else None
                if data is None:
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

    _TAIL = 4096

    def mark(self) -> dict[str, Any] | None:
        """Identity of what was read so far: inode, offset, line count and a checksum of
        the bytes just before the offset (None before anything was read)."""
        if self._fd is None or not self._offset:
            return None
        start = max(0, self._offset - self._TAIL)
        tail = os.pread(self._fd, self._offset - start, start)
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
        if zlib.crc32(os.pread(self._fd, offset - start, start)) != mark["tail_crc"]:
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
        for offset in offsets:
            line = self._line_at(offset)
            where = f"{self.path} at byte {offset}"
            out.append(self._parse(unseal(line, where), where))
        return out

    def _line_at(self, offset: int) -> bytes:
        assert self._fd is not None
        size = 4096
        while True:
            chunk = os.pread(self._fd, size, offset)
            end = chunk.find(b"\n")
            if end >= 0:
                return chunk[:end]
            if len(chunk) < size:
                raise CorruptLog(f"{self.path}: no complete record at byte {offset}")
            size *= 4

    def scan(self, keep: Callable[[bytes], bool]) -> list[T]:
        """Parse, from the start of the file, only the complete lines ``keep`` accepts."""
        out: list[T] = []
        if not self.path.exists():
            return out
        with open(self.path, "rb") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.endswith(b"\n") and keep(line):
                    where = f"{self.path} line {lineno}"
                    try:
                        out.append(self._parse(unseal(line, where), where))
                    except CorruptLog:
                        continue  # a torn tail awaiting repair; read_new reports interior damage
        return out

    # -- writing ---------------------------------------------------------------

    def locked(self, visit: Visitor | None = None) -> _Held[T]:
        """Exclusive writer lock; yields (records others appended, reset), after tail repair.

        With ``visit``, what others appended goes to the visitor (see :meth:`read_new`).
        """
        return _Held(self, visit)

    def _caught_up(self, visit: Visitor | None) -> tuple[list[T], bool]:
        """Under the lock: read what others appended, then repair a torn tail."""
        ino = self._ino
        records, reset = self.read_new(visit)
        # A log that is new, gone or replaced may mean a moved directory (an agent sent
        # to the trash) and a lock on a file nobody else uses any more: relock, reread.
        if (self._ino is None or self._ino != ino) and self._lock.check():
            more, again = self.read_new(visit)
            records, reset = records + more, reset or again
        self._repair_tail()
        return records, reset

    @contextlib.contextmanager
    def locked_blind(self) -> Iterator[int]:
        """The writer lock without reading what others appended: yields a descriptor
        for appending (the current file, created if missing). For derived files whose
        readers scan the file themselves (traces)."""
        with self._lock:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                st = None
            except OSError as exc:
                raise StoreError(f"cannot read {self.path}: {exc.strerror}") from None
            if st is None or st.st_ino != self._ino or not self._fd_writes:
                self._lock.check()
                self._reopen(create=True)
            assert self._fd is not None
            yield self._fd

    def _repair_tail(self) -> None:
        size = self._size
        if self._ino is None or size <= self._offset:
            return
        try:
            with open(self.path, "r+b") as fh:
                fh.seek(self._offset)
                torn = fh.read()
                aside = self._save_aside(torn)
                fh.truncate(self._offset)
                fh.flush()
                os.fsync(fh.fileno())
            self._size = self._offset
        except OSError as exc:
            raise StoreError(
                f"cannot repair the torn tail of {self.path}: {exc.strerror or exc}"
            ) from None
        self.repairs.append(TornTail(str(self.path), str(aside), len(torn)))

    def _save_aside(self, torn: bytes) -> Path:
        """Save the cut bytes durably in a new ``<file>.torn-<time>-<pid>[-n]``."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        base = f"{self.path.name}.torn-{stamp}-{os.getpid()}"
        for n in range(1000):
            aside = self.path.with_name(base if n == 0 else f"{base}-{n}")
            try:
                fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            try:
                _write_synced(fd, torn)
            finally:
                os.close(fd)
            _fsync_dir(self.path.parent)
            return aside
        raise StoreError(f"cannot find a free name to save the torn tail of {self.path}")

    def append(self, lines: list[bytes]) -> list[int]:
        """Append sealed lines (call inside :meth:`locked`); durable before returning.

        Returns the byte offset at which each line starts.
        """
        self._check_writable()
        data = b"".join(lines)
        offsets = _offsets(self._offset, lines)
        fd = self._writer()
        try:
            self._write_all(fd, data)  # on failure: cut back, nothing written
            if self._durable:
                self._fsync(fd)
        finally:
            if fd != self._fd:
                os.close(fd)
        # Durable only now: after a failed fsync the lines stay unread, and the next read
        # delivers them like anyone else's, since they are in the file whether durable or not.
        self._offset += len(data)
        self._size = self._offset
        self._lineno += len(lines)
        return offsets

    @property
    def end(self) -> int:
        """Byte offset up to which this handle has read or written the file."""
        return self._offset

    def _writer(self) -> int:
        """A descriptor appending to the current file (under the lock, after ``read_new``)."""
        if self._fd is not None and self._fd_writes:
            return self._fd
        if self._fd is None:  # no file yet: create it, and make its name durable
            try:
                self._reopen(create=True)
                _fsync_dir(self.path.parent)
            except OSError as exc:
                raise StoreError(f"cannot create {self.path}: {exc.strerror}") from None
            assert self._fd is not None
            return self._fd
        try:  # opened read-only: this process may still be allowed to append
            return os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise StoreError(f"cannot open {self.path} for writing: {exc.strerror}") from None

    def _check_writable(self) -> None:
        if self._failed:
            raise StoreError(
                f"{self.path} refuses writes after a failed fsync ({self._failed}); "
                "reopen the store to continue"
            )

    def _write_all(self, fd: int, data: bytes) -> None:
        try:
            written = os.write(fd, data)
            if written < len(data):  # rare (a signal, a full disk): write the rest
                view = memoryview(data)
                while written < len(data):
                    written += os.write(fd, view[written:])
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, self._offset)
            raise StoreError(f"cannot write {self.path}: {exc.strerror}") from None

    def _fsync(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as exc:
            self._failed = exc.strerror or errno.errorcode.get(exc.errno or 0, "EIO")
            raise StoreError(
                f"fsync of {self.path} failed ({self._failed}); the last write may not be "
                "durable and the log takes no more writes until reopened"
            ) from None

    def rewrite(self, lines: list[bytes]) -> list[int]:
        """Atomically replace the file (call inside :meth:`locked`); returns line offsets."""
        self._check_writable()
        tmp = self.path.with_name(self.path.name + ".compact")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                _write_synced(fd, b"".join(lines))
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            _fsync_dir(self.path.parent)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StoreError(f"cannot rewrite {self.path}: {exc.strerror or exc}") from None
        self._reopen()
        self._offset = os.fstat(self._fd).st_size if self._fd is not None else 0
        self._lineno = len(lines)
        return _offsets(0, lines)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._fd_writes = False

    def close(self) -> None:
        self._close_fd()
        self._lock.close()


class _Held(Generic[T]):
    """``with file.locked(visit) as (records, reset):`` (a class, not a generator: it is
    entered on every write)."""

    __slots__ = ("_file", "_visit")

    def __init__(self, file: SealedFile[T], visit: Visitor | None) -> None:
        self._file = file
        self._visit = visit

    def __enter__(self) -> tuple[list[T], bool]:
        lock = self._file._lock
        lock.__enter__()
        try:
            return self._file._caught_up(self._visit)
        except BaseException:
            lock.__exit__()
            raise

    def __exit__(self, *exc: object) -> None:
        self._file._lock.__exit__()


class _LockFile:
    """The sibling ``.lock`` file, held open between writes and locked with ``flock``.

    ``flock`` belongs to an open file description, so one descriptor serves every
    write of this process (threads take turns on a mutex first), and a forked child,
    which inherits the description, opens its own. :meth:`check` reopens it when the
    file at ``path`` is no longer the one held (its directory was moved away).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._forks = 0  # forks seen when the descriptor was opened (see _count_fork)
        self._mutex = threading.RLock()
        self._depth = 0

    def __enter__(self) -> None:
        """``with lock:`` holds it (re-entrant within a thread)."""
        if self._fd is not None and self._forks != _forks[0]:
            # A forked child: the inherited descriptor shares the parent's lock, and the
            # mutex and depth copied from the parent say nothing about this process.
            os.close(self._fd)
            self._fd = None
            self._mutex = threading.RLock()
            self._depth = 0
        self._mutex.acquire()
        self._depth += 1
        if self._depth == 1:
            try:
                fcntl.flock(self._handle(), fcntl.LOCK_EX)
            except BaseException:
                self._depth -= 1
                self._mutex.release()
                raise

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._mutex.release()

    def check(self) -> bool:
        """While held: make sure the lock is on the file now at ``path``; True
        when it was not and the lock was taken again on the right file."""
        try:
            current = os.stat(self.path).st_ino
        except OSError:
            current = None
        if self._fd is not None and current == os.fstat(self._fd).st_ino:
            return False
        self.close()
        fcntl.flock(self._handle(), fcntl.LOCK_EX)
        return True

    def _handle(self) -> int:
        if self._fd is not None:
            return self._fd
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot lock {self.path}: {exc.strerror or exc}") from None
        self._forks = _forks[0]
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


#: Forks into this process's line so far: a descriptor opened before the last one was
#: inherited from a parent (checked on every write: cheaper than asking for the pid).
_forks = [0]


def _count_fork() -> None:
    _forks[0] += 1


os.register_at_fork(after_in_child=_count_fork)


def _fsync_dir(path: Path) -> None:
    """Make a directory's entries (a new or renamed file) durable."""
    dir_fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _write_synced(fd: int, data: bytes) -> None:
    """Write all of ``data`` (``os.write`` may write less) and ``fsync``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _offsets(start: int, lines: list[bytes]) -> list[int]:
    """Where each of ``lines`` starts when written one after another from ``start``."""
    offsets = []
    for line in lines:
        offsets.append(start)
        start += len(line)
    return offsets

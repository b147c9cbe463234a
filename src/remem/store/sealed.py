"""A file of sealed JSON lines shared by several processes.

Writers take an exclusive ``flock`` on a sibling ``.lock`` file. Under the lock
a writer first reads every complete line other processes appended; bytes after
the last newline can only be the remains of a write interrupted by a crash
(writers always append whole lines under the lock), so they are cut off, saved
aside as ``<file>.torn-<time>-<pid>`` and reported (kept until the owner
removes them). A line that *ends in a newline* but fails its checksum or does
not parse was damaged after it was written, wherever it is (the last line too):
a durable file is refused with an error naming the file and line and the repair
command, never skipped or cut. (A non-durable file, the traces, keeps the
lenient rule: trailing bad lines are cut like a torn tail.)

Appends use ``os.write`` on a raw descriptor; durable files are ``fsync``ed
before :meth:`SealedFile.append` returns. After any failed ``fsync`` of the file
or of its directory (creating it, repairing a torn tail, appending, rewriting),
and after a failed write that could not be cut back, the file refuses further
writes until it is reopened: the kernel may have dropped the dirty pages and a
later successful fsync would prove nothing.

Every system call goes through :mod:`remem.store.syscalls`; every ``OSError`` is
raised as a :class:`~remem.errors.StoreError` whose ``applied`` says whether
the change was made.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from remem.core.events import try_unseal, unseal
from remem.errors import CorruptLog, StoreError
from remem.store import syscalls
from remem.store.base import TornTail
from remem.store.durable import fsync_dir, fsync_dirs, reason, write_synced
from remem.store.lockfile import LockFile

T = TypeVar("T")
Visitor = Callable[[dict[str, Any], int], None]
_CHUNK = 16 * 1024 * 1024
_log = logging.getLogger("remem.store")
_SCAN_CHUNK = 1024 * 1024


class SealedFile(Generic[T]):
    """Append-only sealed lines; ``parse`` turns a checked dict into a record ``T``."""

    def __init__(
        self,
        path: Path,
        parse: Callable[[dict[str, object], str], T],
        *,
        durable: bool = True,
        repair_hint: str = "",
        dirs: tuple[Path, ...] = (),
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
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        try:
            try:
                self._fd, self._fd_writes = syscalls.open_fd(self.path, flags, 0o644), True
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
        for offset in offsets:
            line = self._line_at(offset)
            where = f"{self.path} at byte {offset}"
            out.append(self._parse(unseal(line, where), where))
        return out

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
        for lineno, line in enumerate(self._complete_lines(), 1):
            if keep(line):
                where = f"{self.path} line {lineno}"
                try:
                    out.append(self._parse(unseal(line, where), where))
                except CorruptLog as exc:
                    if self._durable:
                        raise CorruptLog(self._damaged(exc.message)) from None
        return out

    def _complete_lines(self) -> Iterator[bytes]:
        """Every line of the file that ends in a newline (without it), read in chunks."""
        try:
            fd = syscalls.open_fd(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {reason(exc)}") from None
        try:
            pending = b""
            while True:
                try:
                    chunk = syscalls.read(fd, _SCAN_CHUNK)
                except OSError as exc:
                    raise StoreError(f"cannot read {self.path}: {reason(exc)}") from None
                if not chunk:
                    return
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                yield from lines
        finally:
            os.close(fd)

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
                raise StoreError(f"cannot read {self.path}: {reason(exc)}") from None
            if st is None or st.st_ino != self._ino or not self._fd_writes:
                self._lock.check()
                self._reopen(create=True)
            assert self._fd is not None
            yield self._fd

    def _repair_tail(self) -> None:
        """Cut the bytes after the last complete line, saved aside first (under the lock).

        Nothing is cut unless the saved copy is durable; a failed fsync of the cut log
        (or of the copy's directory) stops writes like a failed append."""
        size = self._size
        if self._ino is None or size <= self._offset or self._fd is None:
            return
        if self._durable:
            self._check_writable()
        torn = self._pread(size - self._offset, self._offset)
        aside = self._save_aside(torn)
        try:
            fd = self._fd if self._fd_writes else syscalls.open_fd(self.path, os.O_WRONLY)
        except OSError as exc:
            raise StoreError(
                f"cannot open {self.path} to cut its torn tail: {reason(exc)} (nothing was "
                f"changed; the tail is saved in {aside})"
            ) from None
        try:
            try:
                syscalls.ftruncate(fd, self._offset)
            except OSError as exc:
                raise StoreError(
                    f"cannot cut the torn tail of {self.path}: {reason(exc)} (nothing was "
                    f"changed; the tail is saved in {aside})"
                ) from None
            self._size = self._offset
            self._sync_or_stop(fd, "cutting its torn tail")
        finally:
            if fd != self._fd:
                os.close(fd)
        self.repairs.append(TornTail(str(self.path), str(aside), len(torn)))
        _log.warning(
            "cut a torn tail of %d bytes from %s; saved in %s", len(torn), self.path, aside
        )

    def _save_aside(self, torn: bytes) -> Path:
        """Save the cut bytes durably in a new ``<file>.torn-<time>-<pid>[-n]``."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        base = f"{self.path.name}.torn-{stamp}-{os.getpid()}"
        for n in range(1000):
            aside = self.path.with_name(base if n == 0 else f"{base}-{n}")
            try:
                fd = syscalls.open_fd(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            except OSError as exc:
                raise StoreError(
                    f"cannot save the torn tail of {self.path} aside: {reason(exc)} "
                    "(nothing was changed)"
                ) from None
            try:
                write_synced(fd, torn)
            except OSError as exc:
                raise StoreError(
                    f"cannot save the torn tail of {self.path} aside in {aside}: "
                    f"{reason(exc)} (nothing was cut)"
                ) from None
            finally:
                os.close(fd)
            try:
                fsync_dir(self.path.parent)
            except OSError as exc:
                self._stop(exc)
                raise StoreError(
                    f"fsync of {self.path.parent} failed ({reason(exc)}) while saving the "
                    f"torn tail of {self.path} in {aside}; nothing was cut, and the log "
                    "takes no more writes until the store is reopened"
                ) from None
            return aside
        raise StoreError(f"cannot find a free name to save the torn tail of {self.path}")

    def append(self, lines: list[bytes]) -> list[int]:
        """Append sealed lines (call inside :meth:`locked`); durable before returning.

        Returns the byte offset at which each line starts. A :class:`StoreError` says
        whether the lines are in the file (``applied``): ``False``, they were cut back;
        ``None``, they may be (the file then refuses writes until reopened).
        """
        self._check_writable()
        data = b"".join(lines)
        offsets = _offsets(self._offset, lines)
        fd = self._writer()
        try:
            self._write_all(fd, data)  # on failure: cut back, nothing written
            self._wrote = True
            if self._durable:
                self._fsync(fd)
        finally:
            if fd != self._fd:
                os.close(fd)
        # Durable only now: after a failed fsync the lines stay unread, and the next read
        # delivers them like anyone else's, since they are in the file whether durable or not
        # (the event log withholds them from this process: see JsonlEventLog._append).
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
            fd = self._fd
        elif self._fd is None:  # no file yet: create it (its name is made durable below)
            self._reopen(create=True)
            assert self._fd is not None
            fd = self._fd
            self._dirs_synced = False
        else:
            try:  # opened read-only: this process may still be allowed to append
                fd = syscalls.open_fd(self.path, os.O_WRONLY | os.O_APPEND)
            except OSError as exc:
                raise StoreError(
                    f"cannot open {self.path} for writing: {reason(exc)} (nothing was written)"
                ) from None
        if self._durable and not self._dirs_synced:
            # Once per handle (not per write): the file's name, and its directories' names,
            # durable before the first acknowledged write in them.
            try:
                fsync_dirs(self._dirs)
            except OSError as exc:
                if fd != self._fd:
                    os.close(fd)
                self._stop(exc)
                raise StoreError(
                    f"fsync of the directories of {self.path} failed ({reason(exc)}); "
                    "nothing was written, and the log takes no more writes until the store "
                    "is reopened"
                ) from None
            self._dirs_synced = True
        return fd

    def _stop(self, exc: OSError) -> None:
        """Refuse writes from now on (until this file is opened again)."""
        self._failed = self._failed or reason(exc)

    def _check_writable(self) -> None:
        if self._lock.not_durable and not self._failed:
            self._failed = "a directory of the log could not be made durable"
        if self._failed:
            raise StoreError(
                f"{self.path} refuses writes after a failed fsync or write ({self._failed}); "
                "nothing was written; reopen the store to continue"
            )

    def _write_all(self, fd: int, data: bytes) -> None:
        try:
            written = syscalls.write(fd, data)
            if written < len(data):  # rare (a signal, a full disk): write the rest
                view = memoryview(data)
                while written < len(data):
                    written += syscalls.write(fd, view[written:])
        except OSError as exc:
            try:
                syscalls.ftruncate(fd, self._offset)
            except OSError:
                self._stop(exc)
                raise StoreError(
                    f"cannot write {self.path}: {reason(exc)}, and cannot cut the partial "
                    "write back; it may or may not be in the log (this process will not "
                    "show it), and the log takes no more writes until the store is reopened",
                    applied=None,
                ) from None
            raise StoreError(
                f"cannot write {self.path}: {reason(exc)} (nothing was written)"
            ) from None

    def _fsync(self, fd: int) -> None:
        try:
            syscalls.fsync(fd)
        except OSError as exc:
            self._stop(exc)
            raise StoreError(
                f"fsync of {self.path} failed ({reason(exc)}); the last write may or may "
                "not be durable (this process will not show it), and the log takes no more "
                "writes until reopened",
                applied=None,
            ) from None

    def _sync_or_stop(self, fd: int, doing: str) -> None:
        """fsync after a change other than an append: a failure stops writes too."""
        try:
            syscalls.fsync(fd)
        except OSError as exc:
            self._stop(exc)
            raise StoreError(
                f"fsync of {self.path} failed ({reason(exc)}) after {doing}; the change may "
                "or may not be durable, and the log takes no more writes until reopened",
                applied=None,
            ) from None

    def rewrite(self, lines: list[bytes]) -> list[int]:
        """Atomically replace the file (call inside :meth:`locked`); returns line offsets.

        A :class:`StoreError` before the rename leaves the old file (``applied=False``);
        after it, the new file is in place (``applied=None`` when its directory could not
        be fsynced: a crash might bring the old one back; ``True`` otherwise)."""
        self._check_writable()
        tmp = self.path.with_name(self.path.name + ".compact")
        try:
            fd = syscalls.open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                write_synced(fd, b"".join(lines))
            finally:
                os.close(fd)
            syscalls.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                syscalls.unlink(tmp)
            raise StoreError(
                f"cannot rewrite {self.path}: {reason(exc)} (nothing was changed)"
            ) from None
        self._wrote = True
        try:
            fsync_dir(self.path.parent)
        except OSError as exc:
            self._stop(exc)
            self._ino = None  # not the file read so far: the next read starts over
            raise StoreError(
                f"{self.path} was rewritten, but fsync of its directory failed "
                f"({reason(exc)}): a crash may bring the old file back; the log takes no "
                "more writes until the store is reopened",
                applied=None,
            ) from None
        try:
            self._reopen()
        except StoreError as exc:
            self._ino = None
            raise StoreError(f"{exc.message} (after the rewrite was applied)", True) from None
        assert self._fd is not None
        self._offset = os.fstat(self._fd).st_size
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
        file = self._file
        file._lock.__enter__()
        file._wrote = False
        try:
            return file._caught_up(self._visit)
        except BaseException:
            with contextlib.suppress(StoreError):  # the first error says more
                file._lock.release(False)
            raise

    def __exit__(self, exc_type: object, *exc: object) -> None:
        try:
            self._file._lock.release(self._file._wrote)
        except StoreError:
            if exc_type is None:
                raise  # else the error that ended the transaction says more


def _offsets(start: int, lines: list[bytes]) -> list[int]:
    """Where each of ``lines`` starts when written one after another from ``start``."""
    offsets = []
    for line in lines:
        offsets.append(start)
        start += len(line)
    return offsets

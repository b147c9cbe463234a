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
from collections.abc import Iterator
from pathlib import Path
from typing import Generic

from remem.errors import StoreError
from remem.store import private, syscalls
from remem.store.base import TornTail
from remem.store.durable import (
    fsync_dir,
    fsync_dirs,
    reason,
    write_new_file,
    write_synced,
)
from remem.store.sealed_read import SealedReader, T, Visitor

__all__ = ["SealedFile", "Visitor"]

_log = logging.getLogger("remem.store")


class SealedFile(SealedReader[T]):
    """Append-only sealed lines; ``parse`` turns a checked dict into a record ``T``."""

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
        name = f"{self.path.name}.torn-{stamp}-{os.getpid()}"
        try:
            aside = write_new_file(self.path.with_name(name), torn)
        except OSError as exc:
            raise StoreError(
                f"cannot save the torn tail of {self.path} aside: {reason(exc)} (nothing was cut)"
            ) from None
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
            fd = private.recreate_file(tmp)
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

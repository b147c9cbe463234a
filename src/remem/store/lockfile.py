"""The writer lock of a log: a sibling ``.lock`` file locked with ``flock``."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from remem.errors import NotDurable, StoreError
from remem.store import private, syscalls
from remem.store.durable import ensure_dir, reason


class LockFile:
    """The sibling ``.lock`` file, held open between writes and locked with ``flock``.

    ``flock`` belongs to an open file description, so one descriptor serves every
    write of this process (threads take turns on a mutex first), and a forked child,
    which inherits the description, opens its own. :meth:`check` reopens it when the
    file at ``path`` is no longer the one held (its directory was moved away).

    A failed ``flock`` (as on NFS) is a :class:`StoreError`: when locking, nothing was
    done (``applied=False``); when unlocking, the descriptor is closed, which releases
    the lock whatever ``flock`` said, and the error says whether the transaction had
    written (see :meth:`release`).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._forks = 0  # forks seen when the descriptor was opened (see _count_fork)
        self._mutex = threading.RLock()
        self._depth = 0
        #: Why a directory of the log could not be made durable (see NotDurable), if so.
        self.not_durable: str | None = None

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
                self._flock(self._handle())
            except BaseException:
                self._depth -= 1
                self._mutex.release()
                raise

    def __exit__(self, *exc: object) -> None:
        self.release(False)

    def release(self, wrote: bool) -> None:
        """Leave the lock; ``wrote``: the holder made a durable change (said by the error
        when unlocking fails, since that change stays made)."""
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None:
                try:
                    syscalls.flock(self._fd, fcntl.LOCK_UN)
                except OSError as exc:
                    self.close()  # closing the last descriptor releases the lock anyway
                    done = (
                        "the change was applied and is durable" if wrote else "nothing was changed"
                    )
                    raise StoreError(
                        f"cannot unlock {self.path}: {reason(exc)} ({done}; the lock was "
                        "released by closing its file)",
                        applied=wrote,
                    ) from None
        finally:
            self._mutex.release()

    def _flock(self, fd: int) -> None:
        try:
            syscalls.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            raise StoreError(
                f"cannot lock {self.path}: {reason(exc)} (nothing was changed; a data "
                "directory on a network file system must support flock)"
            ) from None

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
        self._flock(self._handle())
        return True

    def _handle(self) -> int:
        if self._fd is not None:
            return self._fd
        try:
            ensure_dir(self.path.parent)
        except NotDurable as exc:
            self.not_durable = exc.message  # the log's writes stop (SealedFile checks this)
            raise
        try:
            self._fd = private.open_file(self.path, os.O_RDWR)
        except OSError as exc:
            raise StoreError(f"cannot lock {self.path}: {reason(exc)}") from None
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

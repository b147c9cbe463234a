"""Files and directories private to the service's user: mode 0600 and 0700 from birth.

Every file the stores create (logs, traces, ``.lock`` files, saved tails, caches,
secrets, config records, rules, the PostgreSQL key file and the temporary file of
every atomic replace) and every directory they create is made here, so that no wider
mode ever exists, even for a moment: a file is created with ``O_CREAT|O_EXCL`` and
mode 0600, a directory with ``mkdir`` and mode 0700. The umask can only narrow those;
the ``fchmod`` (``chmod`` for a directory) that follows only gives back what the umask
took, never more than 0600 or 0700.

A process running as root that creates something in a directory owned by another
user (an owner running the CLI as root on the service's data directory) gives what it
created to that directory's owner and group, so the service's user can still read
and replace it.

Calls go through :mod:`remem.store.syscalls` (a fault-injection test may fail them);
every helper raises ``OSError``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from remem.store import syscalls

#: The mode of every file the stores create.
FILE_MODE = 0o600
#: The mode of every directory the stores create.
DIR_MODE = 0o700


def create_file(path: Path, flags: int = os.O_WRONLY) -> int:
    """Create ``path`` (``FileExistsError`` when it exists), mode 0600; returns a
    descriptor opened with ``flags`` (``O_CREAT|O_EXCL`` added)."""
    fd = syscalls.open_fd(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # only what the umask took: never wider than 0600
        _give_to_parent_owner(path, fd)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return fd


def open_file(path: Path, flags: int) -> int:
    """Open ``path`` with ``flags`` (no ``O_CREAT``), creating it first as
    :func:`create_file` does when it does not exist yet."""
    for _ in range(8):
        try:
            return syscalls.open_fd(path, flags)
        except FileNotFoundError:
            pass
        try:
            return create_file(path, flags)
        except FileExistsError:
            continue  # created by another process meanwhile: open that one
    raise FileExistsError(f"{path} keeps appearing and disappearing")


def recreate_file(path: Path, flags: int = os.O_WRONLY) -> int:
    """A new, empty private file at ``path`` in place of any leftover there (a fixed
    temporary name, used under the writer lock: a crash may have left one)."""
    with contextlib.suppress(FileNotFoundError):
        syscalls.unlink(path)
    return create_file(path, flags)


def temp_file(directory: Path, name: str) -> tuple[int, Path]:
    """A new private file ``<directory>/.<name>.<random>.tmp`` for writing (the pattern
    :mod:`remem.store.scrub` clears when a write was interrupted); returns its
    descriptor and path."""
    while True:
        tmp = directory / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return create_file(tmp), tmp
        except FileExistsError:
            continue


def make_dir(path: Path) -> None:
    """Create the directory ``path`` (its parent must exist), mode 0700
    (``FileExistsError`` when it exists)."""
    syscalls.mkdir(path, DIR_MODE)
    try:
        os.chmod(path, DIR_MODE)  # only what the umask took: never wider than 0700
        _give_to_parent_owner(path, None)
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(path)
        raise


def make_dirs(path: Path) -> None:
    """Create ``path`` and its missing ancestors, each as :func:`make_dir` does; one
    that exists is left as it is. Not made durable (see ``durable.ensure_dir``)."""
    if path.is_dir():
        return
    if path.parent != path:
        make_dirs(path.parent)
    with contextlib.suppress(FileExistsError):
        make_dir(path)


def _give_to_parent_owner(path: Path, fd: int | None) -> None:
    """As root, give what was just created to the owner of the directory it is in."""
    if os.geteuid() != 0:
        return
    parent = os.stat(path.parent)
    if parent.st_uid == 0:
        return
    if fd is None:
        os.chown(path, parent.st_uid, parent.st_gid, follow_symlinks=False)
    else:
        os.fchown(fd, parent.st_uid, parent.st_gid)

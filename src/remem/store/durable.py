"""Directories and files made durable: what a crash may not undo once a call returned.

A new file's name, and a new directory's, live in their parent directory: they
survive a crash only once that parent is ``fsync``ed. Every helper here goes
through :mod:`remem.store.syscalls` and raises :class:`~remem.errors.StoreError`
(never a bare ``OSError``).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from remem.errors import NotDurable, StoreError
from remem.store import private, syscalls


def reason(exc: OSError) -> str:
    """A short name for what the operating system said (``No space left on device``)."""
    return exc.strerror or errno.errorcode.get(exc.errno or 0, "") or str(exc)


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (a new or renamed file) durable. Raises ``OSError``."""
    dir_fd = syscalls.open_fd(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        syscalls.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def fsync_dirs(paths: Iterable[Path]) -> None:
    """:func:`fsync_dir` each of ``paths`` (a log's directory and its ancestors up to the
    data directory's parent); a directory this user may not open is skipped (it holds
    nothing remem can make durable). Raises ``OSError``."""
    for path in paths:
        try:
            fsync_dir(path)
        except PermissionError:
            continue


def ensure_dir(path: Path) -> None:
    """Create ``path`` and its missing ancestors (private: mode 0700, see
    :mod:`remem.store.private`), each made durable in its parent.

    Raises :class:`StoreError` (nothing was written yet: ``applied=False``).
    """
    missing: list[Path] = []
    probe = path
    while not probe.is_dir():
        if probe.exists():
            raise StoreError(f"{probe} should be a directory, but it is a file")
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for new in reversed(missing):
        try:
            private.make_dir(new)
        except FileExistsError:
            continue  # made by another process meanwhile: it made it durable
        except OSError as exc:
            raise StoreError(f"cannot create directory {new}: {reason(exc)}") from None
        try:
            fsync_dir(new.parent)
        except OSError as exc:
            raise NotDurable(
                f"created directory {new} but could not make it durable ({reason(exc)}); "
                "nothing was written; check the disk and try again"
            ) from None


def write_synced(fd: int, data: bytes) -> None:
    """Write all of ``data`` (``write`` may write less) and ``fsync``. Raises ``OSError``."""
    view = memoryview(data)
    while view:
        view = view[syscalls.write(fd, view) :]
    syscalls.fsync(fd)


def replace_file(path: Path, body: bytes) -> None:
    """Durably replace ``path`` with ``body`` (written and fsynced aside, renamed over it,
    the directory fsynced; the file is private: mode 0600). Raises ``OSError``."""
    fd, tmp = private.temp_file(path.parent, path.name)
    try:
        try:
            write_synced(fd, body)
        finally:
            os.close(fd)
        syscalls.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            syscalls.unlink(tmp)
        raise
    fsync_dir(path.parent)


def read_all(path: Path) -> bytes:
    """The whole content of ``path`` (``FileNotFoundError`` when absent). Raises ``OSError``."""
    fd = syscalls.open_fd(path, os.O_RDONLY)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = syscalls.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes) -> Path:
    """Write ``data`` into a new file ``path`` (or ``path-1``, ``path-2``... when taken),
    fsynced, private (0600); returns its path. Its directory is not fsynced. Raises
    ``OSError``."""
    for n in range(1000):
        target = path if n == 0 else path.with_name(f"{path.name}-{n}")
        try:
            fd = private.create_file(target)
        except FileExistsError:
            continue
        try:
            write_synced(fd, data)
        finally:
            os.close(fd)
        return target
    raise FileExistsError(errno.EEXIST, "no free name", str(path))


def complete_lines(path: Path, chunk_size: int = 1 << 20) -> Iterator[bytes]:
    """Every line of ``path`` that ends in a newline (without it), read in chunks; none
    when the file is absent. Raises ``OSError``."""
    try:
        fd = syscalls.open_fd(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        pending = b""
        while chunk := syscalls.read(fd, chunk_size):
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            yield from lines
    finally:
        os.close(fd)

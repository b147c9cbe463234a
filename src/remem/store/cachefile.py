"""A rebuildable cache of one agent in a JSONL data directory: ``<agent>/<name>.cache``.

The JSONL adapter's implementation of :class:`remem.store.base.Cache`. A cache is
derived data: written without fsync, replaced atomically (readers see the old
content or the new), checked by its reader against the log, removed by
:meth:`~remem.store.jsonl.JsonlBackend.scrub`. Callers never see its path.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from remem.store import private
from remem.store.atomic import replace_file


class FileCache:
    """One cache file; see the module docstring. Raises ``OSError`` on failures."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self.label = str(path)
        #: Descriptor appends go to, and the inode it was opened on.
        self._appender: tuple[int, int] | None = None

    def size(self) -> int | None:
        """Bytes in the cache; ``None`` when there is none."""
        try:
            return os.stat(self._path).st_size
        except FileNotFoundError:
            return None

    @contextlib.contextmanager
    def mapped(self) -> Iterator[mmap.mmap | bytes | None]:
        """The content as a read-only buffer (a map of the file: a large cache is never
        copied whole); ``None`` when there is no cache. Valid inside the ``with`` only."""
        try:
            fh = open(self._path, "rb")  # noqa: SIM115 - closed below, after the map
        except FileNotFoundError:
            yield None
            return
        with fh:
            if os.fstat(fh.fileno()).st_size == 0:
                yield b""
                return
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
                yield buffer

    def replace(self, chunks: Sequence[bytes]) -> None:
        """Atomically replace the content with ``chunks``."""
        private.make_dirs(self._path.parent)
        replace_file(self._path, chunks)

    def append(self, data: bytes) -> bool:
        """Append to the cache as it is now; ``False`` (nothing written) when there is none."""
        try:
            ino = os.stat(self._path).st_ino
        except FileNotFoundError:
            return False
        if self._appender is None or self._appender[1] != ino:
            self.close()  # replaced since: append to the new file
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND)
            self._appender = (fd, os.fstat(fd).st_ino)
        os.write(self._appender[0], data)
        return True

    def close(self) -> None:
        """Close the append descriptor (reopened on the next append)."""
        if self._appender is not None:
            os.close(self._appender[0])
            self._appender = None

"""Replacing a whole file at once: readers see the old file or the new one, never half.

Used for the rebuildable caches next to a log and for rules. The temporary file
gets a unique name in the same directory (two writers, threads or processes,
never write into the same one); ``scrub`` removes leftovers of interrupted
writes (``.<name>.*.tmp``) together with the caches.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from remem.store import private


def replace_file(path: Path, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to a new private file (0600) that then takes ``path``'s place
    (not fsynced).

    Raises ``OSError``; on failure the temporary file is removed and ``path`` is
    unchanged.
    """
    fd, tmp = private.temp_file(path.parent, path.name)
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

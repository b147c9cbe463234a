"""A per-agent secret kept in a file the backend owns, never in the log.

It keys hashes that must not be testable against a guess without it (see
:mod:`remem.core.veto`). The file is created on first need, readable and
writable by its owner only (0600), survives reopening and is shared by every
process using the data directory: a creator writes a complete temporary file
and links it into place, so a concurrent creator or reader never sees a
partial secret, and of two racing creators one wins for both.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from remem.errors import StoreError
from remem.store import private

#: Bytes of randomness in a secret (the HMAC-SHA256 key size).
SECRET_BYTES = 32


def load_or_create_secret(path: Path) -> bytes:
    """The secret stored at ``path``, created first if there is none.

    Raises :class:`~remem.errors.StoreError` when the file cannot be read or
    written, or holds something that is not a secret of this size (it is never
    silently replaced: hashes already in the log were made with it).
    """
    secret = _read(path)
    if secret is None:
        _create(path)
        secret = _read(path)
        if secret is None:  # pragma: no cover - only if removed again meanwhile
            raise StoreError(f"the secret file {path} vanished while it was created; retry")
    return secret


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot read the secret file {path}: {exc.strerror}") from None
    if len(data) != SECRET_BYTES:
        raise StoreError(
            f"the secret file {path} is damaged ({len(data)} bytes, expected {SECRET_BYTES}); "
            "restore it from a backup (undo vetoes recorded with it cannot be checked without it)"
        )
    return data


def _create(path: Path) -> None:
    try:
        private.make_dirs(path.parent)
        # Its name matches what ``scrub`` clears if a crash leaves it behind.
        fd, tmp = private.temp_file(path.parent, path.name)
    except OSError as exc:
        raise StoreError(f"cannot create the secret file {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(SECRET_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(tmp, path)
        _fsync_dir(path.parent)
    except OSError as exc:
        raise StoreError(f"cannot create the secret file {path}: {exc.strerror}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

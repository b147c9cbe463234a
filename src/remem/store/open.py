"""Open a backend from a location: a path, ``jsonl:///abs/path``, ``memory://`` or
``postgresql://`` (``postgres://``; the ``remem[postgres]`` extra, imported only then)."""

from __future__ import annotations

import os
from pathlib import Path

from remem.errors import InvalidInput, StoreError
from remem.store.base import Backend
from remem.store.jsonl import JsonlBackend
from remem.store.location import redact
from remem.store.memory import URL as MEMORY_URL
from remem.store.memory import MemoryBackend

#: The URL prefixes of a PostgreSQL location.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_backend(location: str | Path) -> Backend:
    """The backend for ``location``; a plain path means the embedded JSONL store.

    A location that is not a path this system can name (a NUL, text that has no
    encoding) is ``InvalidInput``; one the system refuses (too long) is ``StoreError``.
    """
    if isinstance(location, str | Path):
        try:
            os.fsencode(location)
        except UnicodeError:
            raise InvalidInput(
                "the data location is not valid text for a file name (a lone surrogate)"
            ) from None
    try:
        return _open_backend(location)
    except OSError as exc:
        where = redact(str(location))[:200]  # a PostgreSQL URL's password stays out
        raise StoreError(f"cannot use data location {where!r}: {exc}") from None


def _open_backend(location: str | Path) -> Backend:
    if isinstance(location, Path) and "\x00" not in str(location):
        return JsonlBackend(location)
    if not isinstance(location, str | Path) or not str(location).strip():
        raise InvalidInput("a data location is required: a directory path or jsonl:///abs/path")
    if "\x00" in str(location):
        raise InvalidInput("a data location may not contain a NUL character")
    assert isinstance(location, str)
    if location.startswith("jsonl://"):
        path = location[len("jsonl://") :]
        if not path.startswith("/"):
            raise InvalidInput(f"{location!r}: jsonl URLs take an absolute path, jsonl:///abs/path")
        return JsonlBackend(Path(path))
    if location == MEMORY_URL:
        return MemoryBackend()  # a new private store on every open
    if location.startswith(MEMORY_URL):
        raise InvalidInput(
            f"{location!r}: an in-memory store takes no name or path; use memory:// "
            "(every open makes a new, private store)"
        )
    if location.startswith(POSTGRES_SCHEMES):
        from remem.store.postgres.backend import PgBackend  # psycopg only when asked for

        return PgBackend(location)
    if "://" in location:
        scheme = location.split("://", 1)[0]
        raise InvalidInput(
            f"unknown storage scheme {scheme!r}: use a directory path, jsonl://, memory:// or postgresql://"
        )
    return JsonlBackend(Path(location).expanduser())

"""Named collections of small versioned records: the config store's key/value part.

What the service keeps beside the events (DESIGN §4.4): host tokens (hashed),
member links and sessions, encrypted DM slots. A record is a JSON object with a
version; :meth:`write_record` with ``if_version`` is a compare-and-set (a stale
version raises ``Conflict``, as a slot write at the version read must), and
``None`` deletes. Collections and keys are names, not paths: ``collection`` is
``[a-z0-9_]{1,64}``, ``key`` 1-128 of letters, digits and ``_.:@-``.

Two implementations: :class:`MemoryRecords` (a dict) and :class:`FileRecords`
(``<data>/config/<collection>/<key>.json``, each written durably and replaced
atomically under the collection's ``flock``, so processes sharing a data
directory see one order of writes).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from remem.errors import Conflict, InvalidInput, StoreError
from remem.store import syscalls
from remem.store.durable import ensure_dir, fsync_dir, read_all, reason, replace_file
from remem.store.lockfile import LockFile

_COLLECTION = re.compile(r"^[a-z0-9_]{1,64}$")
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    """One record: its JSON value and its version (1 for the first write)."""

    value: dict[str, Any]
    version: int


def check_names(collection: str, key: str | None = None) -> None:
    if not _COLLECTION.fullmatch(collection):
        raise InvalidInput(f"collection name {collection!r} is not allowed: use [a-z0-9_]+")
    if key is not None and (not _KEY.fullmatch(key) or key.endswith((".json", ".tmp"))):
        raise InvalidInput(
            f"record key {key!r:.60} is not allowed: use 1-128 letters, digits, '_.:@-', "
            "starting with a letter or digit"
        )


def _next_version(current: ConfigRecord | None, if_version: int | None, where: str) -> int:
    have = 0 if current is None else current.version
    if if_version is not None and if_version != have:
        raise Conflict(
            f"{where} is at version {have}, not {if_version}; read it again (nothing was written)"
        )
    return have + 1


class MemoryRecords:
    """Records in a dict (the in-memory backend's)."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], ConfigRecord] = {}
        self._lock = threading.Lock()

    def read_record(self, collection: str, key: str) -> ConfigRecord | None:
        check_names(collection, key)
        return self._records.get((collection, key))

    def write_record(
        self, collection: str, key: str, value: dict[str, Any] | None, *, if_version: int | None
    ) -> int:
        check_names(collection, key)
        with self._lock:
            current = self._records.get((collection, key))
            version = _next_version(current, if_version, f"{collection}/{key}")
            if value is None:
                self._records.pop((collection, key), None)
                return 0
            self._records[(collection, key)] = ConfigRecord(
                orjson.loads(orjson.dumps(value)), version
            )
            return version

    def record_keys(self, collection: str) -> list[str]:
        check_names(collection)
        return sorted(k for c, k in self._records if c == collection)


class FileRecords:
    """Records as files under ``<root>/config`` (the JSONL backend's)."""

    def __init__(self, root: Path) -> None:
        self._root = root / "config"
        self._locks: dict[str, LockFile] = {}
        self._guard = threading.Lock()

    def _lock(self, collection: str) -> LockFile:
        with self._guard:
            lock = self._locks.get(collection)
            if lock is None:
                ensure_dir(self._root / collection)
                lock = self._locks[collection] = LockFile(self._root / collection / ".lock")
            return lock

    def read_record(self, collection: str, key: str) -> ConfigRecord | None:
        check_names(collection, key)
        path = self._root / collection / f"{key}.json"
        try:
            data = orjson.loads(read_all(path))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            detail = reason(exc) if isinstance(exc, OSError) else str(exc)
            raise StoreError(f"cannot read {path}: {detail}") from None
        return ConfigRecord(data["value"], int(data["version"]))

    def write_record(
        self, collection: str, key: str, value: dict[str, Any] | None, *, if_version: int | None
    ) -> int:
        check_names(collection, key)
        path = self._root / collection / f"{key}.json"
        with self._lock(collection):
            version = _next_version(self.read_record(collection, key), if_version, str(path))
            try:
                if value is None:
                    path.unlink(missing_ok=True)
                    fsync_dir(path.parent)
                    return 0
                replace_file(path, orjson.dumps({"value": value, "version": version}))
            except OSError as exc:
                raise StoreError(
                    f"cannot write {path}: {reason(exc)} (the record may or may not be "
                    "changed; read it again)",
                    applied=None,
                ) from None
            return version

    def record_keys(self, collection: str) -> list[str]:
        check_names(collection)
        folder = self._root / collection
        try:
            names = syscalls.listdir(folder)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"cannot list {folder}: {reason(exc)}") from None
        return sorted(n[: -len(".json")] for n in names if n.endswith(".json") and n[0] != ".")

    def collections(self) -> list[str]:
        """Every collection that has a folder (for copying the store elsewhere), sorted."""
        try:
            names = syscalls.listdir(self._root)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"cannot list {self._root}: {reason(exc)}") from None
        return sorted(n for n in names if _COLLECTION.match(n))

    def close(self) -> None:
        for lock in self._locks.values():
            lock.close()

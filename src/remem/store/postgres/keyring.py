"""Crypto-shredding: note text sealed under per-subject data keys, wrapped under a KEK
kept outside the database (a key file the operator configures: ``$REMEM_KEY_FILE``).

A subject is ``user:<id>`` (a user's notes), ``channel:<id>`` or ``agent``; every text
of a ``remember`` or ``correct`` is sealed with AES-256-GCM under its note's subject key
(the event id as associated data), so the heap, the WAL, replicas and dumps hold only
ciphertext and wrapped keys. When a compaction removes the last text of a subject (the
member's erase-all, the owner's compaction), its data key row is deleted in the same
transaction, the subject is added to the key file's erasure ledger (agent, subject,
time: no content) and the KEK is rotated at once: every remaining data key is re-wrapped
under a fresh KEK and the old one is removed from the file, so the wrapped keys in any
older dump, replica or WAL cannot be unwrapped any more. A rotation interrupted midway
is finished at the next open (the file keeps the previous KEK until every row is
re-wrapped). At every open the ledger is re-applied before the store serves: a restored
older backup loses its erased subjects' keys and sealed rows again. The hosts sharing a
database share one key file (it is re-read when it changes).
"""

from __future__ import annotations

import base64
import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from remem.errors import InvalidInput, StoreError
from remem.store.durable import replace_file
from remem.store.postgres.connect import Pool
from remem.store.postgres.schema import KEYRING_SCOPE

log = logging.getLogger("remem.store")
#: The advisory lock a KEK rotation holds exclusively and a key's creation shares.
_ROTATION_LOCK = 0x72656D656D6B  # "rememk"


def _aesgcm(key: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise InvalidInput(
            "encrypting note text ($REMEM_KEY_FILE) needs cryptography: "
            "pip install 'remem[postgres]'"
        ) from None
    return AESGCM(key)


def seal(key: bytes, plain: bytes, aad: bytes) -> bytes:
    nonce = secrets.token_bytes(12)
    return nonce + bytes(_aesgcm(key).encrypt(nonce, plain, aad))


def unseal(key: bytes, sealed: bytes, aad: bytes) -> bytes:
    return bytes(_aesgcm(key).decrypt(sealed[:12], sealed[12:], aad))


class KeyFile:
    """The KEK (and, during a rotation, the previous one) and the erasure ledger."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self.data: dict[str, Any] = {}
        if not path.exists():
            self.data = {"kek": _new_kek(1), "ledger": []}
            self.save()
        self.reload()

    def reload(self) -> None:
        st = os.stat(self.path)
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            self.data = orjson.loads(self.path.read_bytes())
            self._stamp = stamp

    def save(self) -> None:
        # Durable before it returns: a rotation's destroyed KEK must stay destroyed.
        replace_file(self.path, orjson.dumps(self.data))
        self._stamp = None

    def keks(self) -> dict[int, bytes]:
        """Every KEK the file holds, by id (two only while a rotation runs)."""
        self.reload()
        found = [self.data["kek"], *([self.data["previous"]] if "previous" in self.data else [])]
        return {int(k["id"]): base64.b64decode(k["key"]) for k in found}

    @property
    def current(self) -> tuple[int, bytes]:
        self.reload()
        kek = self.data["kek"]
        return int(kek["id"]), base64.b64decode(kek["key"])


def _new_kek(kek_id: int) -> dict[str, Any]:
    return {"id": kek_id, "key": base64.b64encode(secrets.token_bytes(32)).decode()}


class Keyring:
    """Data keys by (agent, subject): created, unwrapped (and kept in memory), erased."""

    def __init__(self, pool: Pool, path: Path) -> None:
        self._pool = pool
        self.file = KeyFile(path)
        self._keys: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()
        if "previous" in self.file.data:
            self.rotate()  # a rotation was interrupted: finish it before serving
        self.apply_ledger()

    def data_key(self, agent: str, subject: str, *, create: bool) -> bytes | None:
        with self._lock:
            key = self._keys.get((agent, subject))
        if key is not None:
            return key
        with self._pool.scoped(agent) as conn:
            if create:
                # Shared with other creators, exclusive with a rotation: the KEK read from
                # the file after this is the one every key ends up wrapped under.
                conn.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_ROTATION_LOCK,))
                kek_id, kek = self.file.current
                fresh = secrets.token_bytes(32)
                conn.execute(
                    "INSERT INTO remem_keys (agent, subject, kek_id, wrapped) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (agent, subject, kek_id, seal(kek, fresh, f"{agent}/{subject}".encode())),
                )
            row = conn.execute(
                "SELECT kek_id, wrapped FROM remem_keys WHERE agent = %s AND subject = %s",
                (agent, subject),
            ).fetchone()
        if row is None:
            return None
        key = self._unwrap(agent, subject, int(row[0]), bytes(row[1]))
        with self._lock:
            self._keys[(agent, subject)] = key
        return key

    def _unwrap(self, agent: str, subject: str, kek_id: int, wrapped: bytes) -> bytes:
        kek = self.file.keks().get(kek_id)
        if kek is None:
            raise StoreError(
                f"the data key of {subject} (agent {agent}) is wrapped under KEK {kek_id}, "
                f"which {self.file.path} no longer holds: this database (or backup) predates "
                "a key rotation, so its sealed text cannot be read"
            )
        return unseal(kek, wrapped, f"{agent}/{subject}".encode())

    def erased(self, agent: str, subjects: list[str]) -> None:
        """Subjects whose keys a compaction deleted: into the ledger, then a rotation."""
        with self._lock:
            for subject in subjects:
                self._keys.pop((agent, subject), None)
        self.file.reload()
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.file.data["ledger"] += [{"agent": agent, "subject": s, "at": at} for s in subjects]
        self.file.save()
        self.rotate()

    def rotate(self) -> None:
        """Re-wrap every data key under a fresh KEK, then drop the old one from the file.

        Holds the rotation lock (exclusive) from before the new KEK is written until every
        key is re-wrapped, so no host wraps a new key under the KEK being destroyed."""
        with self._pool.scoped(KEYRING_SCOPE) as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_ROTATION_LOCK,))
            self.file.reload()
            if "previous" not in self.file.data:
                old = self.file.data["kek"]
                self.file.data["previous"] = old
                self.file.data["kek"] = _new_kek(int(old["id"]) + 1)
                self.file.save()
            new_id, new = self.file.current
            keks = self.file.keks()
            rows = conn.execute(
                "SELECT agent, subject, kek_id, wrapped FROM remem_keys WHERE kek_id <> %s "
                "FOR UPDATE",
                (new_id,),
            ).fetchall()
            for agent, subject, kek_id, wrapped in rows:
                aad = f"{agent}/{subject}".encode()
                old_kek = keks.get(int(kek_id))
                if old_kek is None:  # wrapped under a KEK already destroyed: unreadable
                    continue
                try:
                    key = unseal(old_kek, bytes(wrapped), aad)
                except Exception:  # not wrapped by this file's KEK: unreadable, left so
                    log.warning("data key of %s (agent %s) does not unwrap", subject, agent)
                    continue
                conn.execute(
                    "UPDATE remem_keys SET kek_id = %s, wrapped = %s "
                    "WHERE agent = %s AND subject = %s",
                    (new_id, seal(new, key, aad), agent, subject),
                )
        self.file.data.pop("previous", None)
        self.file.save()

    def apply_ledger(self) -> None:
        """Erase again what the ledger names (a restored older backup still holds it)."""
        self.file.reload()
        by_agent: dict[str, list[str]] = {}
        for entry in self.file.data.get("ledger", []):
            by_agent.setdefault(entry["agent"], []).append(entry["subject"])
        # At every open: one transaction per agent, not one per erased subject.
        for agent, subjects in by_agent.items():
            with self._pool.scoped(agent) as conn:
                for table in ("remem_keys", "remem_events"):
                    conn.execute(
                        f"DELETE FROM {table} WHERE agent = %s AND subject = ANY(%s)",
                        (agent, subjects),
                    )

"""The scope key (schema v4): it signs the row-level-security scope of every transaction,
so that a connection without it reads no row, whatever settings it sets.

Every transaction of the service begins with ``BEGIN; SELECT <challenge>`` (one round
trip, the one psycopg would spend on ``BEGIN`` alone): the challenge (:data:`CHALLENGE`)
is the transaction's start time to the microsecond and the backend's pid, both read
inside that transaction, so it names this transaction and no other: a
transaction pooler keeps one server connection from ``BEGIN`` to ``COMMIT``, a read-only
transaction on a hot standby has both, and neither assigns a transaction id. The service
then sets its scope in one statement (:meth:`remem.store.postgres.connect.Pool.set_scope`): the
settings ``remem.agent``, ``remem.user``, ``remem.channel`` and ``remem.sig`` = HMAC-SHA256
under this key of the challenge and the three settings (NUL-separated: no PostgreSQL text
holds a NUL). The policies admit a row only through ``remem_scope(name)``
(:mod:`remem.store.postgres.schema`), which recomputes the HMAC from the key in
``remem_scope_key`` (a table the application role cannot read) and answers the setting
only when the signature matches.

Two copies of the key: the database's (``remem_scope_key``, owner-only) and the
service's, a file named by ``$REMEM_SCOPE_KEY_FILE`` (mode 0600, JSON ``{"scope_key":
base64}``). ``remem db upgrade --scope-key-file PATH`` provisions both
(:func:`provision`). A service whose role may read the database's copy (the tables'
owner, a superuser: row-level security is only advisory for it anyway) takes that one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from pathlib import Path
from typing import Any

import orjson

from remem.errors import StoreError
from remem.store.durable import ensure_dir, read_all, reason, replace_file

#: Names the service's copy of the key.
KEY_FILE_ENV = "REMEM_SCOPE_KEY_FILE"
KEY_BYTES = 32
#: The key table (owner-only; ``SELECT`` granted to nobody).
TABLE = "remem_scope_key"
#: A transaction's challenge: its start (``now()``) in UTC to the microsecond, and its
#: backend's pid. Every name qualified: it is read before the transaction sets its path.
CHALLENGE = (
    "pg_catalog.concat(pg_catalog.to_char(pg_catalog.timezone('UTC', pg_catalog.now()), "
    "'YYYYMMDDHH24MISSUS'), '/', pg_catalog.pg_backend_pid())"
)


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def pads(key: bytes) -> tuple[bytes, bytes]:
    """HMAC-SHA256's inner and outer padded keys, kept beside the key so that the database
    computes the HMAC with its built-in ``sha256`` alone (no extension)."""
    block = key.ljust(64, b"\0")
    return bytes(b ^ 0x36 for b in block), bytes(b ^ 0x5C for b in block)


def sign(key: bytes, challenge: str, agent: str, user: str, channel: str) -> str:
    """The signature ``remem_scope`` expects for this transaction's challenge and scope."""
    message = b"\0".join(s.encode() for s in (challenge, agent, user, channel))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def read_file(path: Path) -> bytes:
    """The key in ``path``; a clear ``StoreError`` when it is missing or malformed."""
    try:
        data = orjson.loads(read_all(path))
        key = base64.b64decode(data["scope_key"], validate=True)
    except FileNotFoundError:
        raise StoreError(
            f"scope key file {path} does not exist; `remem db upgrade --scope-key-file "
            f"{path}` writes it (as the tables' owner)"
        ) from None
    except OSError as exc:
        raise StoreError(f"cannot read scope key file {path}: {reason(exc)}") from None
    except (orjson.JSONDecodeError, KeyError, TypeError, binascii.Error):
        raise StoreError(
            f"{path} is not a remem scope key file (JSON with a base64 scope_key)"
        ) from None
    if len(key) != KEY_BYTES:
        raise StoreError(f"{path}: the scope key must be {KEY_BYTES} bytes, not {len(key)}")
    return key


def write_file(path: Path, key: bytes) -> None:
    """Write the service's copy (mode 0600, durable) or raise a clear ``StoreError``."""
    body = orjson.dumps({"scope_key": base64.b64encode(key).decode()})
    try:
        replace_file(path, body)
    except OSError as exc:
        raise StoreError(f"cannot write scope key file {path}: {reason(exc)}") from None


def database_copy(conn: Any, schema: str) -> bytes | None:
    """The database's copy, when this connection's role may read it (``None``: it may
    not, or there is none)."""
    table = f"{quote_ident(schema)}.{TABLE}"
    row = conn.execute("SELECT has_table_privilege(%s, 'SELECT')", (table,)).fetchone()
    if not row[0]:
        return None
    found = conn.execute(f"SELECT key FROM {table}").fetchone()
    return None if found is None else bytes(found[0])


def provision(conn: Any, schema: str, path: Path | None) -> list[str]:
    """Inside ``remem db upgrade``'s transaction: the database's copy (kept; else taken
    from ``path`` when that file exists; else new). Returns notes; :func:`write_copy`
    writes the file after the commit."""
    table = f"{quote_ident(schema)}.{TABLE}"
    if conn.execute(f"SELECT 1 FROM {table}").fetchone() is not None:
        return []
    key = read_file(path) if path is not None and path.exists() else new_key()
    inner, outer = pads(key)
    conn.execute(
        f"INSERT INTO {table} (key, inner_pad, outer_pad) VALUES (%s, %s, %s)",
        (key, inner, outer),
    )
    return ["scope key created in the database (owner-only table remem_scope_key)"]


def write_copy(conn: Any, schema: str, path: Path) -> str:
    """After the commit: make ``path`` hold the database's key (written when absent;
    ``StoreError`` when it holds another key)."""
    key = database_copy(conn, schema)
    if key is None:
        raise StoreError("the database holds no scope key: run `remem db upgrade` as its owner")
    if path.exists():
        if not hmac.compare_digest(read_file(path), key):
            raise StoreError(
                f"{path} holds another database's scope key; name a new path with "
                "--scope-key-file, or remove that file to have this database's written"
            )
        return f"scope key file {path} matches the database"
    ensure_dir(path.parent)  # each missing ancestor 0700 (and durable), not only the last
    write_file(path, key)
    return (
        f"scope key written to {path} (mode 0600): give the service hosts a copy and set "
        f"{KEY_FILE_ENV}={path}"
    )


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'

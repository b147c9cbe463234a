"""Connections to PostgreSQL: psycopg imported lazily, a pool, a transaction per agent.

Every transaction names its agent first, signed (:meth:`Pool.set_scope`; settings local
to the transaction): the row-level security policies of
:mod:`remem.store.postgres.schema` admit that agent's rows and no others, and nothing to
a transaction whose scope is not signed with the scope key
(:mod:`remem.store.postgres.scope_key`). The pool's connections are in autocommit mode:
a transaction begins in the statement that fetches its challenge, so signing costs no
round trip more than psycopg's own ``BEGIN`` did.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from remem.errors import InvalidInput, StoreError
from remem.store.location import redact
from remem.store.postgres.scope_key import CHALLENGE, quote_ident, sign

#: Connections one backend keeps at most (each writing agent holds one for its write).
POOL_MAX = 16


def psycopg_modules() -> tuple[Any, Any]:
    """``(psycopg, psycopg_pool)``, or a clear error saying which extra to install."""
    try:
        return importlib.import_module("psycopg"), importlib.import_module("psycopg_pool")
    except ImportError:
        raise InvalidInput(
            "the PostgreSQL backend needs psycopg 3 and its pool: pip install 'remem[postgres]'"
        ) from None


def db_error(exc: BaseException, url: str) -> StoreError:
    """A database failure as a ``StoreError`` (one line; whether it applied is unknown).

    The message, which a service sends to its callers, names the failure's class and
    SQLSTATE only: the driver's words can hold the host, port, role and database. They
    are in ``detail`` (with the location, passwords removed) for the CLI and the log."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    state = getattr(exc, "sqlstate", None)
    what = type(exc).__name__ + (f", SQLSTATE {state}" if isinstance(state, str) else "")
    return StoreError(
        f"the PostgreSQL store failed ({what}); whether the change was applied is unknown: "
        "retry later, and see the service's log for the cause",
        applied=None,
        detail=f"PostgreSQL at {redact(url)}: {redact(first)}",
    )


def open_error(exc: BaseException, url: str) -> StoreError:
    """A failure to open the database (the CLI, a service's start): nothing changed, and
    the operator reads it, so it names where and why (passwords removed)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    where = f"cannot open PostgreSQL at {redact(url)}: {redact(first)}"
    return StoreError(where, detail=where)


def connect(url: str, **kwargs: Any) -> Any:
    """One connection to ``url`` (not pooled): for ``db upgrade`` and tests."""
    psycopg, _ = psycopg_modules()
    try:
        return psycopg.connect(url, **kwargs)
    except psycopg.Error as exc:
        raise open_error(exc, url) from None


#: Begins a transaction and reads its challenge.
_BEGIN = f"BEGIN; SELECT {CHALLENGE}".encode()
#: The scope of a transaction, in one statement (``pg_catalog.`` and the path: nothing an
#: application role made is resolved instead of remem's own).
_SET_SCOPE = (
    "SELECT pg_catalog.set_config('search_path', %s, true), "
    "pg_catalog.set_config('remem.agent', %s, true), "
    "pg_catalog.set_config('remem.user', %s, true), "
    "pg_catalog.set_config('remem.channel', %s, true), "
    "pg_catalog.set_config('remem.sig', %s, true)"
)


class Pool:
    """A pool of connections to one database, each used by one transaction at a time."""

    def __init__(self, url: str, max_size: int = POOL_MAX) -> None:
        psycopg, pool_mod = psycopg_modules()
        self.url = url
        self.errors: type[BaseException] = psycopg.Error
        try:
            self._pool = pool_mod.ConnectionPool(
                url,
                min_size=1,
                max_size=max_size,
                open=True,
                timeout=60.0,
                kwargs={"autocommit": True},  # set_scope begins each transaction
            )
            self._pool.wait(timeout=30.0)
        except (psycopg.Error, pool_mod.PoolTimeout) as exc:
            raise open_error(exc, url) from None
        self._key: bytes | None = None
        self._path = ""
        self._psycopg = psycopg
        self._tuples_ok = psycopg.pq.ExecStatus.TUPLES_OK

    def sign_with(self, key: bytes, schema: str) -> None:
        """Sign every scope with ``key``, for the tables in ``schema``."""
        self._key = key
        self._path = f"{quote_ident(schema)}, pg_temp"

    def set_scope(self, conn: Any, agent: str, *, user: str = "", channel: str = "") -> None:
        """Begin a transaction on ``conn`` and name its agent (``remem.agent``) and, on the
        member read path, the member and their DM channel (``remem.user``,
        ``remem.channel``), signed for this transaction alone: two round trips, as
        ``BEGIN`` and the unsigned settings took before."""
        if self._key is None:
            raise StoreError("the pool has no scope key yet (PgBackend arms it at open)")
        # Straight through libpq (one simple query, its last result): psycopg's cursor
        # machinery cost as much client time as the rest of the transaction's start.
        result = conn.pgconn.exec_(_BEGIN)
        if result.status != self._tuples_ok:
            raise self._psycopg.errors.error_from_result(result, encoding="utf-8")
        sig = sign(self._key, result.get_value(0, 0).decode(), agent, user, channel)
        conn.execute(_SET_SCOPE, (self._path, agent, user, channel, sig))

    @contextmanager
    def scoped(self, scope: str, *, user: str = "", channel: str = "") -> Iterator[Any]:
        """A connection in a transaction that sees ``scope``'s rows (and, with ``user`` and
        ``channel``, only that member's: :meth:`set_scope`); committed at the end (rolled
        back on an exception)."""
        try:
            with self._pool.connection() as conn:
                self.set_scope(conn, scope, user=user, channel=channel)
                yield conn
        except self.errors as exc:
            raise db_error(exc, self.url) from None

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection of the pool, as it is (the caller manages its transactions)."""
        with self._pool.connection() as conn:
            yield conn

    def close(self) -> None:
        self._pool.close()

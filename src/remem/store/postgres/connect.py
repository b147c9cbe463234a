"""Connections to PostgreSQL: psycopg imported lazily, a pool, a transaction per agent.

Every transaction names its agent first (``set_config('remem.agent', agent, true)``,
local to the transaction): the row-level security policies of
:mod:`remem.store.postgres.schema` admit that agent's rows and no others.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from remem.errors import InvalidInput, StoreError
from remem.store.location import redact

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


def set_scope(conn: Any, agent: str, **settings: str) -> None:
    """Name this transaction's agent (``remem.agent``) and any other row-level-security
    setting (``user``, ``channel`` → ``remem.user``, ``remem.channel``), in one round trip."""
    values = {"agent": agent, **settings}
    calls = ", ".join(f"set_config('remem.{name}', %s, true)" for name in values)
    conn.execute(f"SELECT {calls}", tuple(values.values()))


class Pool:
    """A pool of connections to one database, each used by one transaction at a time."""

    def __init__(self, url: str, max_size: int = POOL_MAX) -> None:
        psycopg, pool_mod = psycopg_modules()
        self.url = url
        self.errors: type[BaseException] = psycopg.Error
        try:
            self._pool = pool_mod.ConnectionPool(
                url, min_size=1, max_size=max_size, open=True, timeout=60.0
            )
            self._pool.wait(timeout=30.0)
        except (psycopg.Error, pool_mod.PoolTimeout) as exc:
            raise open_error(exc, url) from None

    @contextmanager
    def scoped(self, scope: str, **settings: str) -> Iterator[Any]:
        """A connection in a transaction that sees ``scope``'s rows (and, with ``user`` and
        ``channel``, only that member's: :func:`set_scope`); committed at the end (rolled
        back on an exception)."""
        try:
            with self._pool.connection() as conn:
                set_scope(conn, scope, **settings)
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

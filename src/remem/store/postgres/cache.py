"""The catalog snapshot of an agent in ``remem_caches`` (:class:`~remem.store.base.Cache`).

Derived data beside the events: a host that opens an agent with a long log resumes from
the snapshot (at the mark it names: generation and seq) and reads only what came after,
instead of folding every event again. ``scrub`` deletes it; a snapshot that does not
match the log is ignored by its reader. Only the catalog is kept here: the note vectors
stay in the agent's state (appending to a ``bytea`` rewrites it whole).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from remem.store.postgres.connect import Pool

#: The caches this backend keeps in the database.
KEPT = frozenset({"catalog"})


class PgCache:
    """One agent's cache row; methods raise ``OSError`` (a missing cache to the caller)."""

    def __init__(self, pool: Pool, agent: str, name: str) -> None:
        self._pool = pool
        self._agent = agent
        self._name = name
        self.label = f"PostgreSQL cache {name} of {agent}"  # in logs and messages: no URL

    def _body(self) -> bytes | None:
        try:
            with self._pool.scoped(self._agent) as conn:
                row = conn.execute(
                    "SELECT body FROM remem_caches WHERE agent = %s AND name = %s",
                    (self._agent, self._name),
                ).fetchone()
        except Exception as exc:  # a database failure is a missing cache, never an error
            raise OSError(str(exc)) from None
        return None if row is None else bytes(row[0])

    def size(self) -> int | None:
        body = self._body()
        return None if body is None else len(body)

    @contextmanager
    def mapped(self) -> Iterator[bytes | None]:
        yield self._body()

    def replace(self, chunks: Sequence[bytes]) -> None:
        try:
            with self._pool.scoped(self._agent) as conn:
                conn.execute(
                    "INSERT INTO remem_caches (agent, name, body) VALUES (%s, %s, %s) "
                    "ON CONFLICT (agent, name) DO UPDATE SET body = EXCLUDED.body",
                    (self._agent, self._name, b"".join(chunks)),
                )
        except Exception as exc:
            raise OSError(str(exc)) from None

    def append(self, data: bytes) -> bool:
        try:
            with self._pool.scoped(self._agent) as conn:
                cur = conn.execute(
                    "UPDATE remem_caches SET body = body || %s WHERE agent = %s AND name = %s",
                    (data, self._agent, self._name),
                )
                return bool(cur.rowcount)
        except Exception as exc:
            raise OSError(str(exc)) from None

    def close(self) -> None:
        pass

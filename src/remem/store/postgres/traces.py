"""One agent's recall traces in ``remem_traces`` (derived data: committed without waiting
for the disk, ``synchronous_commit = off``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from remem.store.postgres.connect import Pool


def _dump(record: dict[str, Any]) -> str:
    return orjson.dumps(record, option=orjson.OPT_UTC_Z).decode()


_INSERT = (
    "INSERT INTO remem_traces (agent, run_id, actor, channel, data) VALUES (%s, %s, %s, %s, %s)"
)


class PgTraceLog:
    """The :class:`~remem.store.base.TraceLog` of one agent."""

    def __init__(self, pool: Pool, agent: str) -> None:
        self._pool = pool
        self.agent = agent

    def append(self, record: dict[str, Any], shared: dict[str, Any] | None = None) -> None:
        with self._pool.scoped(self.agent) as conn:
            conn.execute("SET LOCAL synchronous_commit = off")
            if shared is not None:
                conn.execute(
                    "INSERT INTO remem_trace_shared (agent, ref, data) VALUES (%s, %s, %s) "
                    "ON CONFLICT (agent, ref) DO UPDATE SET data = EXCLUDED.data",
                    (self.agent, str(shared["ref"]), _dump(shared)),
                )
            conn.execute(_INSERT, self._row(record))

    def _row(self, record: dict[str, Any]) -> tuple[Any, ...]:
        """``record`` as a row of :data:`_INSERT` (its columns for lookups, and all of it)."""
        run_id, actor, channel = record.get("run_id"), record.get("actor"), record.get("channel")
        return (self.agent, run_id, actor, channel, _dump(record))

    def shared(self, ref: str) -> dict[str, Any] | None:
        with self._pool.scoped(self.agent) as conn:
            row = conn.execute(
                "SELECT data FROM remem_trace_shared WHERE agent = %s AND ref = %s",
                (self.agent, ref),
            ).fetchone()
        return None if row is None else dict(orjson.loads(row[0]))

    def find(self, run_id: str) -> list[dict[str, Any]]:
        return self._select("run_id = %s ORDER BY id", (run_id,))

    def latest(self, actor: str, channel: str | None) -> dict[str, Any] | None:
        found = self._select(
            "actor = %s AND channel IS NOT DISTINCT FROM %s ORDER BY id DESC LIMIT 1",
            (actor, channel),
        )
        return found[0] if found else None

    def rewrite(self, records: Sequence[dict[str, Any]]) -> None:
        refs = sorted({str(r["ref"]) for r in records if r.get("ref") is not None})
        with self._pool.scoped(self.agent) as conn:
            conn.execute("DELETE FROM remem_traces WHERE agent = %s", (self.agent,))
            conn.execute(
                "DELETE FROM remem_trace_shared WHERE agent = %s AND NOT ref = ANY(%s)",
                (self.agent, refs),
            )
            with conn.cursor() as cur:
                cur.executemany(_INSERT, [self._row(r) for r in records])

    def all(self) -> list[dict[str, Any]]:
        return self._select("true ORDER BY id", ())

    def _select(self, where: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self._pool.scoped(self.agent) as conn:
            rows = conn.execute(
                "SELECT data FROM remem_traces WHERE agent = %s AND " + where,
                (self.agent, *args),
            ).fetchall()
        return [dict(orjson.loads(r[0])) for r in rows]

    def close(self) -> None:
        pass

"""The PostgreSQL backend: every agent's events, traces, rules and secret, and the
service's records, in one database that several service hosts share.

``Memory.open("postgresql://user@host/db")`` opens it (:mod:`remem.store.open`);
``remem db upgrade`` creates its tables first (:mod:`remem.store.postgres.schema`),
and every open checks their version. Each transaction names its agent (or one of the
reserved scopes), signed with the scope key, for row-level security: the database's
copy when this role may read it (the tables' owner), else ``$REMEM_SCOPE_KEY_FILE``.
Every method that takes an agent name checks it first
(:func:`remem.core.names.check_agent`), so no transaction is ever opened under a reserved
scope's name (``#config``...) on behalf of an input. The catalog snapshot is kept in
``remem_caches`` (:mod:`remem.store.postgres.cache`); other caches stay in memory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any

import orjson

from remem.core.names import check_agent
from remem.errors import Conflict, InvalidInput, NotFound, StoreError
from remem.store.config import ConfigRecord, _next_version, check_names
from remem.store.location import redact
from remem.store.postgres.cache import KEPT, PgCache
from remem.store.postgres.changes import Listener
from remem.store.postgres.connect import Pool, open_error
from remem.store.postgres.events import PgEventLog
from remem.store.postgres.keyring import Keyring
from remem.store.postgres.schema import (
    CONFIG_SCOPE,
    DIRECTORY_SCOPE,
    check_version,
    tables_schema,
)
from remem.store.postgres.scope_key import KEY_FILE_ENV, database_copy, read_file
from remem.store.postgres.traces import PgTraceLog
from remem.store.rules import check_rule_name


class PgBackend:
    """A :class:`~remem.store.base.Backend` on one PostgreSQL database."""

    def __init__(self, url: str) -> None:
        #: Where the database is, for the operator's CLI (no password). What a service
        #: answers (errors, trash and scrub results) names no part of it.
        self.url = redact(url)
        self.pool = Pool(url)
        self._listener = Listener(url)
        try:
            with self.pool.connection() as conn:
                check_version(conn, self.url)
                schema = tables_schema(conn)
                key = database_copy(conn, schema)
            self.pool.sign_with(key or self._service_key(), schema)
            self._check_key()
        except self.pool.errors as exc:
            self.pool.close()
            raise open_error(exc, self.url) from None
        except BaseException:
            self.pool.close()
            raise
        key_file = os.environ.get("REMEM_KEY_FILE")
        #: Seals note text under per-subject keys when a key file is configured.
        self.keyring = None if not key_file else Keyring(self.pool, Path(key_file))

    def _service_key(self) -> bytes:
        """The service's copy of the scope key (this role may not read the database's)."""
        path = os.environ.get(KEY_FILE_ENV)
        if not path:
            raise StoreError(
                f"{self.url}: row-level security needs the scope key, and this role may not "
                f"read the database's copy; set {KEY_FILE_ENV} to the file that `remem db "
                "upgrade --scope-key-file` wrote"
            )
        return read_file(Path(path))

    def _check_key(self) -> None:
        """Refuse a key that is not this database's (every row would stay hidden)."""
        with self.pool.scoped(DIRECTORY_SCOPE) as conn:
            seen = conn.execute("SELECT remem_scope('agent')").fetchone()[0]
        if seen != DIRECTORY_SCOPE:
            raise StoreError(
                f"{self.url}: the scope key in ${KEY_FILE_ENV} is not this database's (row-level "
                "security would hide every row); copy the file `remem db upgrade "
                "--scope-key-file` wrote for this database"
            )

    def watch(self, agent: str, wake: threading.Event) -> None:
        """Set ``wake`` when any host commits events of ``agent`` (a wake-up only: read
        the log for what is new; see :mod:`remem.store.postgres.changes`)."""
        self._listener.watch(agent, wake)

    def readable_notes(
        self, agent: str, member: str, channel: str, note_ids: Collection[str]
    ) -> set[str]:
        """The ids among ``note_ids`` whose rows row-level security lets through under
        ``remem.agent`` = ``agent``, ``remem.user`` = ``member`` and ``remem.channel`` =
        ``channel`` (:class:`~remem.store.base.MemberWall`; the policy decides, not this
        query: it asks for the ids without any condition of scope)."""
        check_agent(agent)
        if not note_ids:
            return set()
        if not member:
            raise InvalidInput("the member wall needs a member (an empty one admits every row)")
        with self.pool.scoped(agent, user=member, channel=channel) as conn:
            rows = conn.execute(
                "SELECT DISTINCT note_id FROM remem_events WHERE agent = %s AND note_id = ANY(%s)",
                (agent, list(note_ids)),
            ).fetchall()
        return {r[0] for r in rows}

    def agents(self) -> list[str]:
        with self.pool.scoped(DIRECTORY_SCOPE) as conn:
            rows = conn.execute(
                "SELECT agent FROM remem_agents WHERE last_seq > 0 OR rules > 0 ORDER BY agent"
            ).fetchall()
        return [r[0] for r in rows]

    def event_log(self, agent: str) -> PgEventLog:
        check_agent(agent)
        return PgEventLog(self.pool, agent, self.keyring)

    def trace_log(self, agent: str) -> PgTraceLog:
        check_agent(agent)
        return PgTraceLog(self.pool, agent)

    def read_rules(self, agent: str) -> dict[str, str]:
        check_agent(agent)
        with self.pool.scoped(agent) as conn:
            rows = conn.execute(
                "SELECT name, content FROM remem_rules WHERE agent = %s ORDER BY name", (agent,)
            ).fetchall()
        return {name: content for name, content in rows}

    def write_rule(self, agent: str, name: str, content: str) -> None:
        check_agent(agent)
        check_rule_name(name)
        with self.pool.scoped(agent) as conn:
            if content:
                conn.execute(
                    "INSERT INTO remem_rules (agent, name, content) VALUES (%s, %s, %s) "
                    "ON CONFLICT (agent, name) DO UPDATE SET content = EXCLUDED.content",
                    (agent, name, content),
                )
            else:
                conn.execute(
                    "DELETE FROM remem_rules WHERE agent = %s AND name = %s", (agent, name)
                )
            conn.execute(
                "INSERT INTO remem_agents (agent, rules) "
                "VALUES (%s, (SELECT count(*) FROM remem_rules WHERE agent = %s)) "
                "ON CONFLICT (agent) DO UPDATE SET rules = EXCLUDED.rules",
                (agent, agent),
            )

    def policy_source(self) -> tuple[str, str] | None:
        return None  # a host's policy file is a deployment matter: none in the database

    def trash_agent(self, agent: str) -> str:
        check_agent(agent)
        with self.pool.scoped(agent) as conn:
            row = conn.execute(
                "DELETE FROM remem_agents WHERE agent = %s RETURNING agent", (agent,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no agent named {agent!r} in the database")
            for table in (
                "remem_events",
                "remem_tombstones",
                "remem_traces",
                "remem_trace_shared",
                "remem_rules",
                "remem_secrets",
                "remem_caches",
                "remem_keys",
            ):
                conn.execute(f"DELETE FROM {table} WHERE agent = %s", (agent,))
        return f"the PostgreSQL database (agent {agent} deleted)"

    def scrub(self, agent: str) -> list[str]:
        check_agent(agent)
        with self.pool.scoped(agent) as conn:
            rows = conn.execute(
                "DELETE FROM remem_caches WHERE agent = %s RETURNING name", (agent,)
            ).fetchall()
        return [f"PostgreSQL cache {r[0]} of {agent}" for r in rows]

    def cache(self, agent: str, name: str) -> PgCache | None:
        """The catalog snapshot in ``remem_caches``; other caches stay in the agent's state."""
        check_agent(agent)
        return PgCache(self.pool, agent, name) if name in KEPT else None

    def agent_secret(self, agent: str) -> bytes:
        check_agent(agent)
        with self.pool.scoped(agent) as conn:
            conn.execute(
                "INSERT INTO remem_secrets (agent, secret) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (agent, os.urandom(32)),
            )
            row = conn.execute(
                "SELECT secret FROM remem_secrets WHERE agent = %s", (agent,)
            ).fetchone()
        return bytes(row[0])

    def adopt_secret(self, agent: str, secret: bytes) -> None:
        """Keep ``secret`` as the agent's (a migration); ``Conflict`` if it has another."""
        check_agent(agent)
        with self.pool.scoped(agent) as conn:
            conn.execute(
                "INSERT INTO remem_secrets (agent, secret) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (agent, secret),
            )
            row = conn.execute(
                "SELECT secret FROM remem_secrets WHERE agent = %s", (agent,)
            ).fetchone()
        if bytes(row[0]) != secret:
            raise Conflict(f"agent {agent!r} already has another secret in the database")

    # -- the service's records ----------------------------------------------------------

    def read_record(self, collection: str, key: str) -> ConfigRecord | None:
        check_names(collection, key)
        with self.pool.scoped(CONFIG_SCOPE) as conn:
            return self._read(conn, collection, key)

    @staticmethod
    def _read(conn: Any, collection: str, key: str, lock: str = "") -> ConfigRecord | None:
        row = conn.execute(
            "SELECT value, version FROM remem_records WHERE collection = %s AND key = %s" + lock,
            (collection, key),
        ).fetchone()
        return None if row is None else ConfigRecord(orjson.loads(row[0]), int(row[1]))

    def write_record(
        self, collection: str, key: str, value: dict[str, Any] | None, *, if_version: int | None
    ) -> int:
        check_names(collection, key)
        with self.pool.scoped(CONFIG_SCOPE) as conn:
            # One writer per key at a time, whether the record exists yet or not.
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"remem:{collection}/{key}",)
            )
            current = self._read(conn, collection, key, " FOR UPDATE")
            version = _next_version(current, if_version, f"{collection}/{key}")
            if value is None:
                conn.execute(
                    "DELETE FROM remem_records WHERE collection = %s AND key = %s",
                    (collection, key),
                )
                return 0
            conn.execute(
                "INSERT INTO remem_records (collection, key, value, version) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (collection, key) "
                "DO UPDATE SET value = EXCLUDED.value, version = EXCLUDED.version",
                (collection, key, orjson.dumps(value).decode(), version),
            )
            return version

    def record_keys(self, collection: str) -> list[str]:
        check_names(collection)
        with self.pool.scoped(CONFIG_SCOPE) as conn:
            rows = conn.execute(
                'SELECT key FROM remem_records WHERE collection = %s ORDER BY key COLLATE "C"',
                (collection,),
            ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        self._listener.close()
        self.pool.close()

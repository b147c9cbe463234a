"""The PostgreSQL schema: its tables, row-level security and version.

:data:`SCHEMA_VERSION` names the layout this code reads and writes; the database
says its own through the function ``remem_schema_version()`` (a function, not a
table, so that every table holds one agent's rows and nothing else).
:func:`upgrade` (``remem db upgrade``) creates or updates the tables, the policies
and the application role's grants; :func:`check_version` runs at every open and
refuses a database of another version with what to do about it.

Row-level security is the second wall behind the service's own authorization:
every table is ``FORCE ROW LEVEL SECURITY`` (its owner included) and its policy
admits the rows of the agent named by the transaction's scope. Since v4 the scope is
signed (:mod:`remem.store.postgres.scope_key`): the policies read it only through
``remem_scope(name)``, a ``STABLE SECURITY DEFINER`` function (``search_path =
pg_catalog, pg_temp``, every name in it schema-qualified) called once per statement as
``(SELECT remem_scope('agent'))``, which answers the setting ``remem.<name>`` only when
``remem.sig`` is this transaction's HMAC of it under the key in ``remem_scope_key`` (a
table the application role cannot read), and NULL otherwise, which admits nothing. So a
connection without the key reads no row, whatever it sets. An empty agent admits
nothing. Three reserved agents, which no agent name can take (agent names never contain
``#``): :data:`CONFIG_SCOPE` reads and writes the service's records (tokens, member
links, sessions, slots: they belong to no single agent), :data:`DIRECTORY_SCOPE` reads
the agent names (``remem_agents`` holds names and counters, no content) and
:data:`KEYRING_SCOPE` re-wraps the wrapped data keys at a KEK rotation
(:mod:`remem.store.postgres.keyring`). The application role may create nothing in the
tables' schema nor in the database (:func:`upgrade` revokes it and checks), and each
transaction's path is that schema, then ``pg_temp``: no object of its making is ever
resolved before remem's.

The member wall (v3): ``remem_events`` rows carry their note's current scope
(``note_scope``, ``note_scope_id``); a transaction of the member read path also signs
``remem.user`` (the member) and ``remem.channel`` (their DM channel), and then sees
only that member's user notes, that channel's notes and agent-wide notes
(:meth:`remem.store.postgres.backend.PgBackend.readable_notes`). With ``remem.user``
unset or empty, the agent policy alone applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from remem.errors import InvalidInput, StoreError
from remem.store.postgres.scope_key import CHALLENGE, provision, quote_ident

#: The layout of this code's tables; bumped with every change of them.
SCHEMA_VERSION = 4
#: ``remem.agent`` while reading or writing the service's records.
CONFIG_SCOPE = "#config"
#: ``remem.agent`` while listing the agents.
DIRECTORY_SCOPE = "#directory"
#: ``remem.agent`` while re-wrapping every agent's data keys (a KEK rotation).
KEYRING_SCOPE = "#keyring"

#: A setting of the transaction's scope as the signature vouches for it (NULL when it does
#: not: that admits nothing); an InitPlan, computed once per statement (``{s}``: the
#: tables' schema, quoted).
_SCOPE = "(SELECT {s}.remem_scope('%s'))"
_AGENT_SCOPE, _USER, _CHANNEL = (_SCOPE % name for name in ("agent", "user", "channel"))
#: Every table, with the policy expression that admits a row.
_AGENT = f"agent = {_AGENT_SCOPE}"
#: The member wall (v3): with ``remem.user`` set (the member read path), an event row
#: passes only when its note is that member's user note, a note of ``remem.channel`` (the
#: member's DM channel) or an agent-wide note (which every member reads); with it empty,
#: the agent's rows as before.
_MEMBER = (
    f"({_USER} = '' OR note_scope = 'agent' "
    f"OR (note_scope = 'user' AND note_scope_id = {_USER}) "
    f"OR (note_scope = 'channel' AND note_scope_id = {_CHANNEL}))"
)
POLICIES: dict[str, str] = {
    "remem_agents": f"{_AGENT} OR {_AGENT_SCOPE} = '{DIRECTORY_SCOPE}'",
    "remem_events": f"{_AGENT} AND {_MEMBER}",
    "remem_tombstones": _AGENT,
    "remem_traces": _AGENT,
    "remem_trace_shared": _AGENT,
    "remem_rules": _AGENT,
    "remem_secrets": _AGENT,
    "remem_caches": _AGENT,
    "remem_records": f"{_AGENT_SCOPE} = '{CONFIG_SCOPE}'",
    "remem_keys": f"{_AGENT} OR {_AGENT_SCOPE} = '{KEYRING_SCOPE}'",
}

_TABLES = """
CREATE TABLE IF NOT EXISTS remem_agents (
    agent text PRIMARY KEY,
    -- The highest seq ever given (never lowered: a seq is never given twice).
    last_seq bigint NOT NULL DEFAULT 0,
    -- Bumped by every rewrite (compaction): a reader of another generation starts over.
    generation bigint NOT NULL DEFAULT 0,
    -- Rules the agent has (an agent with rules and no events is still listed).
    rules integer NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS remem_events (
    agent text NOT NULL,
    seq bigint NOT NULL,
    -- Log order: the seq for appends, the place in the rewrite for a compaction's events.
    ord bigint NOT NULL,
    eid text NOT NULL,
    note_id text,
    by_id text,
    data text NOT NULL,
    PRIMARY KEY (agent, seq),
    UNIQUE (agent, eid)
);
-- v2: the subject whose data key seals the event's text (NULL: nothing sealed).
ALTER TABLE remem_events ADD COLUMN IF NOT EXISTS subject text;
CREATE INDEX IF NOT EXISTS remem_events_subject ON remem_events (agent, subject);
-- v3: the scope of the row's note as it is now (every row of a note follows a move), for
-- the member wall (NULL for events about no note).
ALTER TABLE remem_events ADD COLUMN IF NOT EXISTS note_scope text;
ALTER TABLE remem_events ADD COLUMN IF NOT EXISTS note_scope_id text;
CREATE INDEX IF NOT EXISTS remem_events_ord ON remem_events (agent, ord);
CREATE INDEX IF NOT EXISTS remem_events_note ON remem_events (agent, note_id);
CREATE INDEX IF NOT EXISTS remem_events_by ON remem_events (agent, by_id);
CREATE TABLE IF NOT EXISTS remem_tombstones (
    agent text NOT NULL,
    eid text NOT NULL,
    PRIMARY KEY (agent, eid)
);
CREATE TABLE IF NOT EXISTS remem_traces (
    agent text NOT NULL,
    id bigserial,
    run_id text,
    actor text,
    channel text,
    data text NOT NULL,
    PRIMARY KEY (agent, id)
);
CREATE INDEX IF NOT EXISTS remem_traces_run ON remem_traces (agent, run_id);
CREATE INDEX IF NOT EXISTS remem_traces_actor ON remem_traces (agent, actor, channel, id);
CREATE TABLE IF NOT EXISTS remem_trace_shared (
    agent text NOT NULL,
    ref text NOT NULL,
    data text NOT NULL,
    PRIMARY KEY (agent, ref)
);
CREATE TABLE IF NOT EXISTS remem_rules (
    agent text NOT NULL,
    name text NOT NULL,
    content text NOT NULL,
    PRIMARY KEY (agent, name)
);
CREATE TABLE IF NOT EXISTS remem_secrets (
    agent text PRIMARY KEY,
    secret bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS remem_caches (
    agent text NOT NULL,
    name text NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY (agent, name)
);
CREATE TABLE IF NOT EXISTS remem_keys (
    agent text NOT NULL,
    subject text NOT NULL,
    kek_id integer NOT NULL,
    wrapped bytea NOT NULL,
    PRIMARY KEY (agent, subject)
);
CREATE TABLE IF NOT EXISTS remem_records (
    collection text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    version integer NOT NULL,
    PRIMARY KEY (collection, key)
);
-- v4: the key that signs each transaction's scope (remem.store.postgres.scope_key). Owner
-- only: no grant to anyone, and row-level security with no policy as a second lock.
CREATE TABLE IF NOT EXISTS remem_scope_key (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    key bytea NOT NULL,
    inner_pad bytea NOT NULL,
    outer_pad bytea NOT NULL
);
ALTER TABLE remem_scope_key ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON remem_scope_key FROM PUBLIC
"""

#: The signed settings, in the order of the message.
_SIGNED = ("agent", "user", "channel")
#: The signed message: the challenge and the three settings, NUL-separated.
_MESSAGE = " || '\\x00'::bytea || ".join(
    f"convert_to({part}, 'UTF8')"
    for part in [
        CHALLENGE,
        *(f"coalesce(current_setting('remem.{n}', true), '')" for n in _SIGNED),
    ]
)
#: The setting ``remem.<setting>`` when ``remem.sig`` is the HMAC-SHA256 of the challenge
#: and the scope under the key; NULL otherwise. The digests are compared hashed again, so
#: the comparison's timing says nothing about the expected signature. PL/pgSQL keeps the
#: plan of its key lookup for the session (an SQL function would plan it at every call).
_CHECK = (
    "CREATE OR REPLACE FUNCTION {s}.remem_scope(setting text) RETURNS text LANGUAGE plpgsql "
    "STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$ "
    "DECLARE k record; BEGIN "
    "SELECT inner_pad, outer_pad INTO k FROM {s}.remem_scope_key; "
    "IF FOUND AND sha256(convert_to(coalesce(current_setting('remem.sig', true), ''), 'UTF8')) "
    "= sha256(convert_to(encode(sha256(k.outer_pad || sha256(k.inner_pad || "
    f"{_MESSAGE})), 'hex'), 'UTF8')) THEN "
    "RETURN coalesce(current_setting('remem.' || setting, true), ''); END IF; "
    "RETURN NULL; END $f$"
)
_FUNCTIONS = ("remem_scope(text)",)


#: v2 -> v3: every note's rows get the note's current scope, read from its events' JSON
#: (the owner is under FORCE row-level security too: lifted for this one statement,
#: inside the upgrade's transaction, and forced again by the policies that follow).
_FILL_NOTE_SCOPES = [
    "ALTER TABLE remem_events NO FORCE ROW LEVEL SECURITY",
    "UPDATE remem_events e SET note_scope = s.scope, note_scope_id = s.scope_id FROM ("
    "SELECT DISTINCT ON (agent, note_id) agent, note_id, data::jsonb->>'scope' AS scope, "
    "data::jsonb->>'scope_id' AS scope_id FROM remem_events WHERE note_id IS NOT NULL "
    "AND data::jsonb->>'scope' IS NOT NULL ORDER BY agent, note_id, ord DESC) s "
    "WHERE e.agent = s.agent AND e.note_id = s.note_id",
]


def _statements(app_role: str | None, have: int | None, schema: str) -> list[str]:
    qs = quote_ident(schema)
    out = [s.strip() for s in _TABLES.split(";") if s.strip()]
    if have is not None and have < 3:
        out += _FILL_NOTE_SCOPES
    out.append(_CHECK.format(s=qs))
    out += [f"REVOKE ALL ON FUNCTION {qs}.{f} FROM PUBLIC" for f in _FUNCTIONS]
    for table, template in POLICIES.items():
        expr = template.format(s=qs)
        out += [
            f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
            f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
            f"DROP POLICY IF EXISTS remem_scope ON {table}",
            f"CREATE POLICY remem_scope ON {table} USING ({expr}) WITH CHECK ({expr})",
        ]
    out.append(
        "CREATE OR REPLACE FUNCTION remem_schema_version() RETURNS integer "
        f"LANGUAGE sql IMMUTABLE AS 'SELECT {SCHEMA_VERSION}'"
    )
    if app_role is not None:
        role = quote_ident(app_role)
        tables = ", ".join(POLICIES)
        functions = ", ".join(f"{qs}.{f}" for f in _FUNCTIONS)
        out += [
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON {tables} TO {role}",
            f"GRANT USAGE ON SEQUENCE remem_traces_id_seq TO {role}",
            f"GRANT EXECUTE ON FUNCTION remem_schema_version(), {functions} TO {role}",
            f"REVOKE CREATE ON SCHEMA {qs} FROM {role}",
        ]
    return out


def tables_schema(conn: Any) -> str:
    """The schema of remem's tables (where ``remem_schema_version()`` lives; for a database
    without them, the schema they would be created in)."""
    row = conn.execute(
        "SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE p.proname = 'remem_schema_version' AND pg_function_is_visible(p.oid)"
    ).fetchone()
    if row is None:
        row = conn.execute("SELECT current_schema()").fetchone()
    if row is None or row[0] is None:
        raise StoreError("no schema to create remem's tables in (the search_path names none)")
    return str(row[0])


def database_version(conn: Any) -> int | None:
    """The schema version the database holds (``None``: it has no remem schema)."""
    row = conn.execute(
        "SELECT p.oid FROM pg_proc p WHERE p.proname = 'remem_schema_version' "
        "AND pg_function_is_visible(p.oid)"
    ).fetchone()
    if row is None:
        return None
    version = conn.execute("SELECT remem_schema_version()").fetchone()
    return int(version[0])


def check_version(conn: Any, url: str) -> None:
    """Refuse a database whose schema is not :data:`SCHEMA_VERSION`, saying what to do."""
    have = database_version(conn)
    if have == SCHEMA_VERSION:
        return
    if have is None:
        raise StoreError(
            f"{url} has no remem tables yet; create them with `remem db upgrade --data {url}` "
            "(as the role that is to own them)"
        )
    if have < SCHEMA_VERSION:
        raise StoreError(
            f"{url} holds remem schema v{have}, this remem needs v{SCHEMA_VERSION}; run "
            "`remem db upgrade` with this version (as the role that owns the tables)"
        )
    raise StoreError(
        f"{url} holds remem schema v{have}, newer than this remem (v{SCHEMA_VERSION}); "
        "upgrade remem on this host"
    )


def upgrade(conn: Any, app_role: str | None, key_file: Path | None = None) -> list[str]:
    """Create or update the tables, policies and ``app_role``'s grants in one transaction
    (run as the role that is to own the tables), with the database's copy of the scope key
    (taken from ``key_file`` when that exists: :func:`~remem.store.postgres.scope_key.provision`;
    the caller writes the file after the commit); returns notes for the operator."""
    have = database_version(conn)
    if have is not None and have > SCHEMA_VERSION:
        raise StoreError(
            f"the database holds remem schema v{have}, newer than this remem "
            f"(v{SCHEMA_VERSION}); upgrade remem, not the database"
        )
    notes = []
    if app_role is not None:
        row = conn.execute(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s", (app_role,)
        ).fetchone()
        if row is None:
            conn.execute(f"CREATE ROLE {quote_ident(app_role)} LOGIN")
            notes.append(f"created role {app_role} (LOGIN, no password: set one for it)")
        elif row[0] or row[1]:
            raise StoreError(
                f"role {app_role} is a superuser or has BYPASSRLS: row-level security would "
                "not apply to it; name a plain role as --app-role"
            )
        if key_file is None:
            raise InvalidInput(
                f"the application role {app_role} reads no row without the scope key: name "
                "the file for the service's copy with --scope-key-file PATH (or "
                "$REMEM_SCOPE_KEY_FILE), then set REMEM_SCOPE_KEY_FILE=PATH for the service"
            )
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('remem db upgrade'))")
        schema = tables_schema(conn)
        for statement in _statements(app_role, have, schema):
            conn.execute(statement)  # SQL of our own: names and constants, no input
        notes += provision(conn, schema, key_file)
        if app_role is not None:
            notes += _deny_create(conn, app_role, schema)
    notes.insert(0, f"schema at v{SCHEMA_VERSION} (was {'none' if have is None else have})")
    return notes


def _deny_create(conn: Any, app_role: str, schema: str) -> list[str]:
    """Make sure ``app_role`` can create nothing in the tables' schema nor in the database
    (a schema of its own named like it would come first on the default path): revoke what
    this role may revoke, refuse what remains."""
    may = (
        "SELECT has_schema_privilege(%s, %s, 'CREATE'), "
        "has_database_privilege(%s, current_database(), 'CREATE'), current_database()"
    )
    in_schema, in_database, database = conn.execute(may, (app_role, schema, app_role)).fetchone()
    notes = []
    if in_schema:  # granted to PUBLIC (PostgreSQL before 15 does so for schema public)
        conn.execute(f"REVOKE CREATE ON SCHEMA {quote_ident(schema)} FROM PUBLIC")
        notes.append(f"revoked CREATE on schema {schema} from PUBLIC ({app_role} had it)")
    if in_database:
        conn.execute(
            f"REVOKE CREATE ON DATABASE {quote_ident(database)} FROM {quote_ident(app_role)}"
        )
    in_schema, in_database, _ = conn.execute(may, (app_role, schema, app_role)).fetchone()
    if in_schema or in_database:
        where = f"schema {schema}" if in_schema else f"database {database}"
        raise StoreError(
            f"role {app_role} may still CREATE in {where} (granted to PUBLIC or to a role it "
            f"belongs to, and this role may not revoke it): objects of its making could "
            f"shadow remem's; revoke that CREATE as the {where.split()[0]}'s owner, then run "
            "db upgrade again"
        )
    return notes


def rls_effect(conn: Any, app_role: str | None) -> str:
    """One line saying whether row-level security is a wall for the service's role."""
    if app_role is not None:
        return (
            f"row-level security applies to {app_role}: it owns no table and cannot bypass "
            "it; connect the service as that role"
        )
    row = conn.execute(
        "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    why = "bypasses it (a superuser or BYPASSRLS)" if row[1] or row[2] else "owns the tables"
    return (
        f"row-level security is only advisory: the service connects as {row[0]}, which {why}; "
        "for a second wall, run again with --owner-url (the owner) and --app-role (the role "
        "the service connects as)"
    )

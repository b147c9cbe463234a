-- remem's PostgreSQL schema v3 as `remem db upgrade --app-role __APP_ROLE__` created it
-- (main at c28057d): the previous version, for the upgrade test. Frozen: never edit.
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
ALTER TABLE remem_agents ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_agents FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_agents;
CREATE POLICY remem_scope ON remem_agents USING (agent = current_setting('remem.agent', true) OR current_setting('remem.agent', true) = '#directory') WITH CHECK (agent = current_setting('remem.agent', true) OR current_setting('remem.agent', true) = '#directory');
ALTER TABLE remem_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_events FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_events;
CREATE POLICY remem_scope ON remem_events USING (agent = current_setting('remem.agent', true) AND (coalesce(current_setting('remem.user', true), '') = '' OR note_scope = 'agent' OR (note_scope = 'user' AND note_scope_id = current_setting('remem.user', true)) OR (note_scope = 'channel' AND note_scope_id = current_setting('remem.channel', true)))) WITH CHECK (agent = current_setting('remem.agent', true) AND (coalesce(current_setting('remem.user', true), '') = '' OR note_scope = 'agent' OR (note_scope = 'user' AND note_scope_id = current_setting('remem.user', true)) OR (note_scope = 'channel' AND note_scope_id = current_setting('remem.channel', true))));
ALTER TABLE remem_tombstones ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_tombstones FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_tombstones;
CREATE POLICY remem_scope ON remem_tombstones USING (agent = current_setting('remem.agent', true)) WITH CHECK (agent = current_setting('remem.agent', true));
ALTER TABLE remem_traces ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_traces FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_traces;
CREATE POLICY remem_scope ON remem_traces USING (agent = current_setting('remem.agent', true)) WITH CHECK (agent = current_setting('remem.agent', true));
ALTER TABLE remem_trace_shared ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_trace_shared FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_trace_shared;
CREATE POLICY remem_scope ON remem_trace_shared USING (agent = current_setting('remem.agent', true)) WITH CHECK (agent = current_setting('remem.agent', true));
ALTER TABLE remem_rules ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_rules FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_rules;
CREATE POLICY remem_scope ON remem_rules USING (agent = current_setting('remem.agent', true)) WITH CHECK (agent = current_setting('remem.agent', true));
ALTER TABLE remem_secrets ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_secrets FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_secrets;
CREATE POLICY remem_scope ON remem_secrets USING (agent = current_setting('remem.agent', true)) WITH CHECK (agent = current_setting('remem.agent', true));
ALTER TABLE remem_caches ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_caches FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_caches;
CREATE POLICY remem_scope ON remem_caches USING (agent = current_setting('remem.agent', true)) WITH CHECK (agent = current_setting('remem.agent', true));
ALTER TABLE remem_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_records FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_records;
CREATE POLICY remem_scope ON remem_records USING (current_setting('remem.agent', true) = '#config') WITH CHECK (current_setting('remem.agent', true) = '#config');
ALTER TABLE remem_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE remem_keys FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS remem_scope ON remem_keys;
CREATE POLICY remem_scope ON remem_keys USING (agent = current_setting('remem.agent', true) OR current_setting('remem.agent', true) = '#keyring') WITH CHECK (agent = current_setting('remem.agent', true) OR current_setting('remem.agent', true) = '#keyring');
CREATE OR REPLACE FUNCTION remem_schema_version() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 3';
GRANT SELECT, INSERT, UPDATE, DELETE ON remem_agents, remem_events, remem_tombstones, remem_traces, remem_trace_shared, remem_rules, remem_secrets, remem_caches, remem_records, remem_keys TO __APP_ROLE__;
GRANT USAGE ON SEQUENCE remem_traces_id_seq TO __APP_ROLE__;
GRANT EXECUTE ON FUNCTION remem_schema_version() TO __APP_ROLE__;

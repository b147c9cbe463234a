"""Row-level security that SQL alone cannot open (schema v4): a fresh connection with the
application role's credentials and no scope key reads no row of any table, whatever
settings it sets — forged ones, the reserved scopes, and a real service transaction's
signed settings replayed as a statement log shows them (in another session, and in a
later transaction of the very backend the service used, as a transaction pooler would
hand it over) — on the primary, on a hot standby, and behind pgbouncer in transaction
mode. The service itself, as that role with the key, works on all three. Also: upgrade
from schema v3, CREATE taken from the role, one check per statement."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from http_server import free_port
from postgres.test_pg_rls import fill_every_table
from remem import Memory, RunContext
from remem.cli import main
from remem.core.events import sequenced, to_dict
from remem.errors import StoreError
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect, psycopg_modules
from remem.store.postgres.schema import CONFIG_SCOPE, DIRECTORY_SCOPE, KEYRING_SCOPE, POLICIES
from remem.store.postgres.scope_key import CHALLENGE, KEY_FILE_ENV, new_key, pads, sign, write_file
from remem.testing import postgres_server
from remem.testing.event_samples import remembered

AGENTS = ("alice_bot", "bob_bot")
SETTINGS = ("remem.agent", "remem.user", "remem.channel", "remem.sig")
#: Every table the schema has: the policed ones and the key's.
TABLES = {*POLICIES, "remem_scope_key"}
#: The schema before this one, as its `remem db upgrade --app-role` made it.
V3 = Path(__file__).with_name("schema_v3.sql")


def _captured(conn: Any) -> dict[str, str]:
    """This transaction's scope settings, as a statement log would show the service's."""
    names = ("search_path", *SETTINGS)
    calls = ", ".join(f"current_setting('{n}')" for n in names)
    return dict(zip(names, conn.execute(f"SELECT {calls}").fetchone(), strict=True))


def _attempts(replays: list[dict[str, str]]) -> list[dict[str, str]]:
    """What an attacker with the role's credentials sets: every scope a service sets, with
    no signature, a made-up one, and the service's own signatures replayed."""
    forged = []
    for agent in (*AGENTS, CONFIG_SCOPE, DIRECTORY_SCOPE, KEYRING_SCOPE, ""):
        for user, channel in (("", ""), ("m", "dm-m")):
            for sig in ("", "0" * 64, secrets.token_hex(32)):
                forged.append(
                    {"remem.agent": agent, "remem.user": user, "remem.channel": channel}
                    | {"remem.sig": sig}
                )
    # A replayed signature with another agent, or the same one (both must fail).
    altered = [r | {"remem.agent": AGENTS[1]} for r in replays]
    return [*forged, *replays, *altered]


def _count(conn: Any, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _reads_nothing(conn: Any, attempts: list[dict[str, str]]) -> None:
    """Under each of ``attempts`` (transaction-local, and for the session), every table
    reads 0 rows; the key's table refuses outright."""
    psycopg, _ = psycopg_modules()
    tables = {
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    }
    assert tables == TABLES, "a table the test does not know of"
    for settings in attempts:
        for local in (True, False):
            conn.execute("BEGIN")
            for name, value in settings.items():
                conn.execute("SELECT set_config(%s, %s, %s)", (name, value, local))
            for table in sorted(TABLES - {"remem_scope_key"}):
                assert _count(conn, table) == 0, (table, settings)
            assert conn.execute("SELECT remem_scope('agent')").fetchone() == (None,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute("SELECT key FROM remem_scope_key")
            conn.execute("ROLLBACK")


def _service_settings(backend: PgBackend) -> list[dict[str, str]]:
    """Settings of real service transactions (an agent's, a member's, a reserved scope's),
    each checked to open what it names."""
    out = []
    for agent, user, channel in ((AGENTS[0], "", ""), (AGENTS[0], "m", "dm-m")):
        with backend.pool.scoped(agent, user=user, channel=channel) as conn:
            assert _count(conn, "remem_events") > 0  # the signed scope opens its rows
            out.append(_captured(conn))
    with backend.pool.scoped(CONFIG_SCOPE) as conn:
        assert _count(conn, "remem_records") > 0
        out.append(_captured(conn))
    # The transaction's path: remem's schema, then pg_temp (nothing of the role's first).
    assert {o["search_path"] for o in out} == {'"public", pg_temp'}
    return out


@pytest.fixture(scope="module")
def filled(app_db: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The application role's URL, with rows in every table (as the owner sees)."""
    owner_url, app_url = app_db
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REMEM_KEY_FILE", str(tmp_path_factory.mktemp("kek") / "kek.json"))
        fill_every_table(app_url)
    with connect(owner_url, autocommit=True) as owner:
        for table in POLICIES:
            assert _count(owner, table) > 0, f"no row in {table}: the test would prove nothing"
    return app_url


def test_without_the_key_the_application_role_reads_no_row_whatever_it_sets(
    filled: str,
) -> None:
    backend = PgBackend(filled)
    try:
        replays = _service_settings(backend)
    finally:
        backend.close()
    with connect(filled, autocommit=True) as conn:
        _reads_nothing(conn, _attempts(replays))


def test_a_signature_opens_its_own_transaction_only(filled: str) -> None:
    """A transaction pooler hands the service's backend to another client after COMMIT:
    the signature seen there (same pid) opens nothing in the next transaction; nor, in
    another session, while the service's transaction is still open."""
    backend = PgBackend(filled)
    try:
        with connect(filled, autocommit=True) as conn, connect(filled, autocommit=True) as other:
            backend.pool.set_scope(conn, AGENTS[0])
            assert _count(conn, "remem_events") > 0
            seen = _captured(conn)
            _reads_nothing(other, [seen])  # concurrently, in another session
            conn.execute("COMMIT")
            _reads_nothing(conn, [seen])  # the same backend, the next transaction
    finally:
        backend.close()


def test_the_application_role_can_create_nothing_on_the_path(filled: str) -> None:
    psycopg, _ = psycopg_modules()
    denied = psycopg.errors.InsufficientPrivilege
    with connect(filled, autocommit=True) as conn:
        row = conn.execute(
            "SELECT has_schema_privilege('public', 'CREATE'), "
            "has_database_privilege(current_database(), 'CREATE')"
        ).fetchone()
        assert row == (False, False)
        for ddl in (
            "CREATE TABLE public.remem_shadow (a int)",
            "CREATE FUNCTION public.remem_scope(x int) RETURNS text "
            "LANGUAGE sql AS $$ SELECT 'alice_bot' $$",
            "CREATE SCHEMA remem_shadow",
        ):
            with pytest.raises(denied):
                conn.execute(ddl)
        # A key of its own in pg_temp (the last place on the function's path, and never
        # searched for a name remem qualifies) changes nothing.
        key = secrets.token_bytes(32)
        inner, outer = pads(key)
        conn.execute(
            "CREATE TEMP TABLE remem_scope_key (one boolean, key bytea, inner_pad bytea, "
            "outer_pad bytea)"
        )
        conn.execute("INSERT INTO remem_scope_key VALUES (true, %s, %s, %s)", (key, inner, outer))
        conn.execute("BEGIN")
        challenge = conn.execute(f"SELECT {CHALLENGE}").fetchone()[0]
        forged = {"remem.agent": AGENTS[0], "remem.user": "", "remem.channel": ""}
        forged["remem.sig"] = sign(key, challenge, AGENTS[0], "", "")
        for name, value in forged.items():
            conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        assert _count(conn, "remem_events") == 0
        conn.execute("ROLLBACK")
        row = conn.execute(
            "SELECT prosecdef, provolatile, proconfig FROM pg_proc WHERE proname = 'remem_scope'"
        ).fetchone()
        assert row == (True, "s", ["search_path=pg_catalog, pg_temp"])


def test_the_check_runs_once_per_statement_not_per_row(app_db: tuple[str, str]) -> None:
    owner_url, app_url = app_db
    role = app_url.split("://", 1)[1].split("@", 1)[0]
    agent = postgres_server.agent_for("once per statement")
    with Memory.open(app_url) as mem:
        for i in range(12):
            mem.remember(RunContext.owner(agent), f"Fact number {i}.", scope="agent")
    with connect(owner_url, autocommit=True) as owner:
        owner.execute(f"ALTER ROLE \"{role}\" SET track_functions = 'all'")
    backend = PgBackend(app_url)
    try:
        with backend.pool.scoped(agent, user="m", channel="dm-m") as conn:
            assert _count(conn, "remem_events") >= 12
            calls = conn.execute(
                "SELECT calls FROM pg_stat_xact_user_functions WHERE funcname = 'remem_scope'"
            ).fetchone()[0]
        assert 1 <= calls <= 4  # one per reference in the policy, whatever the rows
    finally:
        backend.close()
        with connect(owner_url, autocommit=True) as owner:
            owner.execute(f'ALTER ROLE "{role}" RESET track_functions')


@pytest.fixture(scope="module")
def standby(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """A primary and a hot standby of our own, upgraded for an application role with rows
    in every table: (primary app URL, standby app URL, scope key file)."""
    reason = postgres_server.standby_unavailable()
    if reason is not None:
        pytest.skip(f"no standby can be started: {reason}")
    key_file = tmp_path_factory.mktemp("standby") / "scope.key"
    role = "remem_app"
    with postgres_server.primary_and_standby() as (primary, replica):
        app = primary.replace("postgres@", f"{role}@", 1)
        result = CliRunner().invoke(
            main,
            [
                *("--data", app, "db", "upgrade", "--owner-url", primary),
                *("--app-role", role, "--scope-key-file", str(key_file)),
            ],
        )
        assert result.exit_code == 0, result.output
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(KEY_FILE_ENV, str(key_file))
            patch.setenv("REMEM_KEY_FILE", str(key_file.with_name("kek.json")))
            fill_every_table(app)
        with connect(primary, autocommit=True) as conn:
            lsn = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        with connect(replica, autocommit=True) as conn:
            deadline = time.monotonic() + 20
            while not conn.execute(
                "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= %s", (lsn,)
            ).fetchone()[0]:
                assert time.monotonic() < deadline, "the standby did not catch up"
                time.sleep(0.05)
        yield app, replica.replace("postgres@", f"{role}@", 1), key_file


def test_on_a_hot_standby_too_no_key_reads_no_row_and_the_service_reads(
    standby: tuple[str, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, replica_app, key_file = standby
    monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
    backend = PgBackend(replica_app)  # the service on the standby: read-only transactions
    try:
        replays = _service_settings(backend)
        assert backend.read_rules(AGENTS[0]) == {"tone": f"{AGENTS[0]} is brief."}
    finally:
        backend.close()
    with connect(replica_app, autocommit=True) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        _reads_nothing(conn, _attempts(replays))


def test_the_service_without_its_key_is_told_what_to_set(
    app_db: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner_url, app_url = app_db
    monkeypatch.delenv(KEY_FILE_ENV)
    with pytest.raises(StoreError, match=f"set {KEY_FILE_ENV} to the file"):
        PgBackend(app_url)
    other = tmp_path / "other.key"
    write_file(other, new_key())
    monkeypatch.setenv(KEY_FILE_ENV, str(other))
    with pytest.raises(StoreError, match="is not this database's"):
        PgBackend(app_url)
    role = app_url.split("://", 1)[1].split("@", 1)[0]
    upgrade: list[str | Path] = ["--data", app_url, "db", "upgrade", "--owner-url", owner_url]
    result = CliRunner().invoke(
        main, [*upgrade, "--app-role", role, "--scope-key-file", str(other)]
    )
    assert result.exit_code != 0 and "holds another database's scope key" in result.output
    monkeypatch.delenv(KEY_FILE_ENV)
    result = CliRunner().invoke(main, [*upgrade, "--app-role", role])
    assert result.exit_code != 0 and "--scope-key-file PATH" in result.output


def test_db_upgrade_makes_every_missing_directory_of_the_key_file_0700(
    app_db: tuple[str, str], tmp_path: Path
) -> None:
    """Not only the key file's own directory: each missing ancestor too (``os.makedirs``
    gives the ancestors the umask's mode, 0755)."""
    owner_url, app_url = app_db
    role = app_url.split("://", 1)[1].split("@", 1)[0]
    key_file = tmp_path / "etc" / "remem" / "scope.key"
    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(
            main,
            [
                *("--data", app_url, "db", "upgrade", "--owner-url", owner_url),
                *("--app-role", role, "--scope-key-file", str(key_file)),
            ],
        )
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert key_file.stat().st_mode & 0o777 == 0o600
    for directory in (tmp_path / "etc", tmp_path / "etc" / "remem"):
        assert directory.stat().st_mode & 0o777 == 0o700, directory


def test_db_upgrade_from_v3_closes_what_sql_alone_opened_and_keeps_the_rows(
    pg_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    role, key_file = f"remem_app_{secrets.token_hex(4)}", tmp_path / "scope.key"
    event = sequenced([remembered("Alice's plan is secret.", scope_id="m")], 1)[0]
    row = (AGENTS[0], 1, 1, event.eid, event.note_id, None)
    row += (orjson.dumps(to_dict(event), option=orjson.OPT_UTC_Z).decode(), None, "user", "m")
    try:
        with postgres_server.fresh_database(pg_server, schema=False) as owner_url:
            app_url = f"postgresql://{role}@{owner_url.split('@', 1)[1]}"
            with connect(owner_url, autocommit=True) as owner:  # v3, as its upgrade made it
                owner.execute(f'CREATE ROLE "{role}" LOGIN')
                owner.execute(V3.read_text().replace("__APP_ROLE__", f'"{role}"'))
            with connect(app_url, autocommit=True) as app:
                app.execute("SELECT set_config('remem.agent', %s, false)", (AGENTS[0],))
                app.execute("INSERT INTO remem_agents (agent, last_seq) VALUES (%s, 1)", (row[0],))
                app.execute(f"INSERT INTO remem_events VALUES ({', '.join(['%s'] * 10)})", row)
                assert _count(app, "remem_events") == 1  # v3: the setting alone opened it
            result = CliRunner().invoke(
                main,
                [
                    *("--data", app_url, "db", "upgrade", "--owner-url", owner_url),
                    *("--app-role", role, "--scope-key-file", str(key_file)),
                ],
            )
            assert result.exit_code == 0, result.output
            assert "schema at v4 (was 3)" in result.output
            assert f"scope key written to {key_file} (mode 0600)" in result.output
            assert key_file.stat().st_mode & 0o777 == 0o600
            with connect(app_url, autocommit=True) as app:
                _reads_nothing(app, _attempts([]))
            monkeypatch.setenv(KEY_FILE_ENV, str(key_file))
            backend = PgBackend(app_url)
            try:
                assert backend.event_log(AGENTS[0]).read_after(0) == [event]
            finally:
                backend.close()
    finally:
        with connect(pg_server, autocommit=True) as admin:
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_db_upgrade_takes_create_away_from_the_application_role(
    pg_server: str, tmp_path: Path
) -> None:
    """PostgreSQL before 15 lets PUBLIC create in schema public: upgrade revokes that; a
    CREATE the role holds through another role, upgrade cannot take: it refuses."""
    role, helper = f"remem_app_{secrets.token_hex(4)}", f"remem_ddl_{secrets.token_hex(4)}"
    try:
        with postgres_server.fresh_database(pg_server, schema=False) as owner_url:
            app_url = f"postgresql://{role}@{owner_url.split('@', 1)[1]}"
            upgrade = [
                *("--data", app_url, "db", "upgrade", "--owner-url", owner_url),
                *("--app-role", role, "--scope-key-file", str(tmp_path / "scope.key")),
            ]
            with connect(owner_url, autocommit=True) as owner:
                owner.execute(f'CREATE ROLE "{role}" LOGIN')
                owner.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
            result = CliRunner().invoke(main, upgrade)
            assert result.exit_code == 0, result.output
            assert "revoked CREATE on schema public from PUBLIC" in result.output
            with connect(app_url, autocommit=True) as app:
                assert app.execute(
                    "SELECT has_schema_privilege('public', 'CREATE')"
                ).fetchone() == (False,)
            with connect(owner_url, autocommit=True) as owner:
                owner.execute(f'CREATE ROLE "{helper}"')
                owner.execute(f'GRANT CREATE ON SCHEMA public TO "{helper}"')
                owner.execute(f'GRANT "{helper}" TO "{role}"')
            result = CliRunner().invoke(main, upgrade)
            assert result.exit_code != 0
            assert f"role {role} may still CREATE in schema public" in result.output
    finally:
        with connect(pg_server, autocommit=True) as admin:
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')
            admin.execute(f'DROP ROLE IF EXISTS "{helper}"')


@pytest.fixture
def bouncer(app_db: tuple[str, str]) -> Iterator[str]:
    """The application role's URL through pgbouncer in transaction mode, with ONE server
    connection: every client's transaction runs on the same backend, one after another."""
    binary = shutil.which("pgbouncer", path=os.environ.get("PATH", "") + ":/usr/sbin")
    if binary is None:
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer)")
    _, app_url = app_db
    info = psycopg_modules()[0].conninfo.conninfo_to_dict(app_url)
    role, port = str(info["user"]), free_port()
    top = Path(tempfile.mkdtemp(prefix="remem-pgbouncer-"))  # readable by nobody, see below
    (top / "users.txt").write_text(f'"{role}" ""\n')
    (top / "pgbouncer.ini").write_text(
        f"[databases]\n* = host={info['host']} port={info.get('port', 5432)}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {top / 'users.txt'}\npool_mode = transaction\n"
        "default_pool_size = 1\nmax_client_conn = 20\n"
        "ignore_startup_parameters = extra_float_digits\n"
    )
    argv = [binary, str(top / "pgbouncer.ini")]
    if os.geteuid() == 0:  # pgbouncer refuses to run as root: it becomes nobody
        os.chmod(top, 0o755)
        argv[1:1] = ["-u", "nobody"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert proc.poll() is None and time.monotonic() < deadline, "pgbouncer did not start"
            time.sleep(0.05)
        yield f"postgresql://{role}@127.0.0.1:{port}/{info['dbname']}"
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(top, ignore_errors=True)


def test_behind_pgbouncer_in_transaction_mode_the_service_reads_and_no_key_reads_nothing(
    filled: str, bouncer: str
) -> None:
    """The service's signed transactions work through a transaction pooler; a client of
    the same pool, handed the very backend the service just used, opens nothing with what
    it sets or replays, and what it leaves on that backend (session settings, a temporary
    table shadowing remem's) changes nothing for the service's next transaction."""
    backend = PgBackend(bouncer)
    try:
        replays = _service_settings(backend)
        with backend.pool.scoped(AGENTS[0]) as conn:
            used = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            rows = _count(conn, "remem_events")
        # No named prepared statements of its own (pgbouncer before 1.21 would hand them to
        # the service's next transaction on this backend, and psycopg's names collide).
        with connect(bouncer, autocommit=True, prepare_threshold=None) as attacker:
            assert attacker.execute("SELECT pg_backend_pid()").fetchone() == (used,)
            _reads_nothing(attacker, _attempts(replays))
            attacker.execute("SELECT set_config('remem.agent', %s, false)", (AGENTS[1],))
            attacker.execute("SELECT set_config('search_path', 'pg_temp, public', false)")
            attacker.execute("CREATE TEMP TABLE remem_events (LIKE public.remem_events)")
        with backend.pool.scoped(AGENTS[0]) as conn:
            assert conn.execute("SELECT pg_backend_pid()").fetchone() == (used,)
            assert _count(conn, "remem_events") == rows  # remem's table, alice's rows
    finally:
        backend.close()

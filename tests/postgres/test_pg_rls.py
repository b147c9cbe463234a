"""Row-level security as a second wall, tested as the application role (a superuser
bypasses RLS and would prove nothing), and ``remem db upgrade`` that sets it up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from remem import Memory, RunContext
from remem.cli import main
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect, psycopg_modules
from remem.store.postgres.schema import POLICIES
from remem.testing import postgres_server


def fill_every_table(app_url: str) -> None:
    """Two agents with a row in every table they have (through the service's code)."""
    with Memory.open(app_url) as mem:
        for agent in ("alice_bot", "bob_bot"):
            ctx = RunContext.owner(agent)
            note = mem.remember(ctx, f"A fact only {agent} knows.", scope="agent")
            mem.set_rule(ctx, "tone", f"{agent} is brief.")
            mem.forget(ctx, note.id)
            mem.compact(ctx)  # tombstones of the erased note's events
            mem.remember(ctx, f"Another fact of {agent}.", scope="agent")
            mem.recall(ctx, "fact")  # a trace (and its shared part)
        backend = mem.backend
        assert isinstance(backend, PgBackend)
        backend.write_record("tokens", "h1", {"agent": "alice_bot"}, if_version=None)
        for agent in ("alice_bot", "bob_bot"):
            backend.agent_secret(agent)
            with backend.pool.scoped(agent) as conn:
                conn.execute(
                    "INSERT INTO remem_caches (agent, name, body) VALUES (%s, 'catalog', 'x')",
                    (agent,),
                )


def _rows(conn: Any, table: str) -> list[dict[str, Any]]:
    cur = conn.execute(f"SELECT * FROM {table}")
    names = [c.name for c in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def test_under_an_agents_signed_scope_every_table_returns_only_its_rows(
    app_db: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner_url, app_url = app_db
    monkeypatch.setenv("REMEM_KEY_FILE", str(tmp_path / "kek.json"))  # rows in remem_keys
    fill_every_table(app_url)
    with connect(app_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row == (False, False)
        owned = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE tableowner = current_user"
        ).fetchone()
        assert owned == (0,)
    monkeypatch.delenv("REMEM_KEY_FILE")  # no ledger re-applied at this open
    backend = PgBackend(app_url)  # as the application role, with the scope key's file
    try:
        for agent in ("alice_bot", "bob_bot"):
            with backend.pool.scoped(agent) as conn:
                for table in POLICIES:
                    rows = _rows(conn, table)
                    if table == "remem_records":
                        assert rows == []  # the service's records belong to no agent
                        continue
                    assert rows, f"{agent} has rows in {table}: the test must see some"
                    assert {r["agent"] for r in rows} == {agent}, table
        with backend.pool.scoped("") as conn:  # an empty agent, signed, admits nothing
            for table in POLICIES:
                assert _rows(conn, table) == [], table
    finally:
        backend.close()
    # The owner (a superuser here) sees both: the rows are there, RLS hid them.
    with connect(owner_url, autocommit=True) as conn:
        agents = {r[0] for r in conn.execute("SELECT agent FROM remem_events").fetchall()}
        assert agents == {"alice_bot", "bob_bot"}


def test_the_app_role_cannot_write_another_agents_rows_nor_lift_the_wall(
    app_db: tuple[str, str],
) -> None:
    _, app_url = app_db
    psycopg, _ = psycopg_modules()
    backend = PgBackend(app_url)
    try:
        refused = psycopg.errors.InsufficientPrivilege
        with (
            backend.pool.scoped("alice_bot") as conn,  # alice's scope, signed
            pytest.raises(refused, match="row-level security"),
        ):
            conn.execute("INSERT INTO remem_rules VALUES ('bob_bot', 'tone', 'Be rude.')")
        with backend.pool.scoped("alice_bot") as conn, pytest.raises(refused, match="owner"):
            conn.execute("ALTER TABLE remem_events DISABLE ROW LEVEL SECURITY")
        with backend.pool.scoped("alice_bot") as conn:
            gone = conn.execute("DELETE FROM remem_rules WHERE agent = 'bob_bot'").rowcount
            assert gone == 0
    finally:
        backend.close()


def test_the_service_works_as_the_application_role(app_db: tuple[str, str]) -> None:
    _, app_url = app_db
    ctx = RunContext.owner("carol_bot")
    with Memory.open(app_url) as mem:
        note = mem.remember(ctx, "Carol's deploys go out on Tuesdays.", scope="agent")
        assert [n.id for n in mem.recall(ctx, "deploys").notes] == [note.id]
        assert "carol_bot" in mem.agents()


def test_upgrade_without_options_works_and_says_rls_is_only_advisory(pg_server: str) -> None:
    with postgres_server.fresh_database(pg_server, schema=False) as url:
        result = CliRunner().invoke(main, ["--data", url, "db", "upgrade"])
        assert result.exit_code == 0, result.output
        assert "schema at v4 (was none)" in result.output
        assert "row-level security is only advisory" in result.output
        again = CliRunner().invoke(main, ["--data", url, "db", "upgrade"])
        assert "schema at v4 (was 4)" in again.output
        with Memory.open(url) as mem:
            assert mem.agents() == []


def test_upgrade_refuses_a_superuser_as_the_application_role(pg_server: str) -> None:
    with postgres_server.fresh_database(pg_server, schema=False) as url:
        result = CliRunner().invoke(
            main, ["--data", url, "db", "upgrade", "--owner-url", url, "--app-role", "postgres"]
        )
        assert result.exit_code != 0
        assert "superuser or has BYPASSRLS" in result.output


def test_upgrade_as_a_role_that_may_not_create_tables_fails_in_one_line(
    app_db: tuple[str, str],
) -> None:
    _, app_url = app_db
    result = CliRunner().invoke(main, ["--data", app_url, "db", "upgrade"])
    assert result.exit_code != 0
    assert "permission denied" in result.output or "must be owner" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1

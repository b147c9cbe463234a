"""PostgreSQL (issue 20, items 9 and 11): no transaction is opened under a name of the
service's own (``#config`` unlocks the records, ``#keyring`` every agent's keys), and
``remem doctor`` leaves no row and no key of its probe agent behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from remem.cli import main
from remem.errors import InvalidInput
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect

RESERVED = ("#config", "#keyring", "#directory")


def cli(url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(
        main, ["--data", url, *args], env={"REMEM_EMBEDDINGS": "off", **(env or {})}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def rows_of(url: str, where: str) -> dict[str, int]:
    """Rows per table whose agent matches ``where`` (read as a superuser: every row), in
    every remem table with an ``agent`` column: one the backend's delete misses fails."""
    with connect(url, autocommit=True) as conn:
        tables = [
            t
            for (t,) in conn.execute(
                "SELECT table_name FROM information_schema.columns WHERE column_name = 'agent'"
                " AND table_name LIKE 'remem%' AND table_schema = current_schema()"
            ).fetchall()
        ]
        assert "remem_keys" in tables and "remem_events" in tables, tables
        counts = {
            t: conn.execute(f"SELECT count(*) FROM {t} WHERE {where}").fetchone()[0] for t in tables
        }
    return {t: n for t, n in counts.items() if n}


def test_no_transaction_for_a_reserved_name(pg_backend: PgBackend, pg_url: str) -> None:
    calls: list[tuple[str, tuple[object, ...]]] = [
        ("event_log", ()),
        ("trace_log", ()),
        ("read_rules", ()),
        ("write_rule", ("style", "x")),
        ("agent_secret", ()),
        ("adopt_secret", (b"k" * 32,)),
        ("scrub", ()),
        ("cache", ("catalog",)),
        ("trash_agent", ()),
        ("readable_notes", ("discord:7", "discord:1", {"note_x"})),
    ]
    for name in RESERVED:
        for method, args in calls:
            with pytest.raises(InvalidInput, match="reserved"):
                getattr(pg_backend, method)(name, *args)
        result = cli(pg_url, "remember", "--agent", name, "A note.")
        assert result.exit_code == 2 and "reserved" in result.output
    assert rows_of(pg_url, "agent LIKE '#%'") == {}


def test_doctor_leaves_no_row_or_key_behind(pg_url: str, tmp_path: Path) -> None:
    env = {"REMEM_KEY_FILE": str(tmp_path / "keyring.json")}  # note text sealed: keys rows
    assert (
        cli(pg_url, "remember", "--agent", "remem-doctor", "Left by 0.x.", env=env).exit_code == 0
    )
    probes = "agent LIKE '#doctor-%' OR agent = 'remem-doctor'"
    kept = cli(pg_url, "doctor", env=env)
    assert kept.exit_code == 0, kept.output
    assert "agent 'remem-doctor' was left by an earlier doctor" in kept.output
    assert "ok  forget+compact" in kept.output
    assert set(rows_of(pg_url, "agent LIKE '#doctor-%'")) == set()
    assert "remem_agents" in rows_of(pg_url, probes)  # the legacy probe: kept unasked

    removed = cli(pg_url, "doctor", "--yes", env=env)
    assert removed.exit_code == 0, removed.output
    assert "removed agent remem-doctor" in removed.output
    assert rows_of(pg_url, probes) == {}

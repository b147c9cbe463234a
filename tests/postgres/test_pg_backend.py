"""What the PostgreSQL backend promises beyond the contracts: readers never pass a position
a slower transaction fills later, gapless seqs under concurrent hosts, the schema version
checked at open, a clear message without the extra, a server of its own for tests."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from remem import Memory, RunContext
from remem.errors import StoreError
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect
from remem.testing import postgres_server
from remem.testing.event_samples import remembered


def _waiting_on_a_lock(url: str, count: int) -> bool:
    """Whether ``count`` sessions of this database wait for a lock (polled up to 10 s)."""
    deadline = time.monotonic() + 10
    with connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            ).fetchone()
            if row[0] >= count:
                return True
            time.sleep(0.02)
    return False


def test_a_reader_never_passes_a_position_a_slower_transaction_fills_later(
    pg_backend: PgBackend, pg_url: str, tmp_path: Path
) -> None:
    agent = postgres_server.agent_for(tmp_path)
    slow, fast, reader = (pg_backend.event_log(agent) for _ in range(3))
    a, b = remembered("Numbered first, committed late."), remembered("Numbered second.")
    done: list[Any] = []
    with slow.transaction() as txn:
        assert [ev.seq for ev in txn.stage([a])] == [1]
        # Another writer now waits for the agent's row: it cannot number 2 before 1 commits.
        worker = threading.Thread(target=lambda: _append(fast, [b], done))
        worker.start()
        assert _waiting_on_a_lock(pg_url, 1), "the second writer did not wait for the row lock"
        assert reader.read_new().events == []  # nothing visible: no position to pass
        txn.commit()
    worker.join(10)
    assert [ev.seq for ev in done[0]] == [2]
    assert [(ev, ev.seq) for ev in reader.read_new().events] == [(a, 1), (b, 2)]


def _append(log: Any, events: list[Any], out: list[Any]) -> None:
    with log.transaction() as txn:
        out.append(txn.append(events))


def test_concurrent_hosts_leave_no_gap_and_a_polling_reader_sees_every_seq_in_order(
    pg_url: str, tmp_path: Path
) -> None:
    """Two backends (two hosts' pools), four writers each, one reader polling all along:
    every poll continues exactly where the last one stopped."""
    agent = postgres_server.agent_for(tmp_path)
    hosts = [PgBackend(pg_url), PgBackend(pg_url)]
    reader = hosts[0].event_log(agent)
    seen: list[int] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            seen.extend(ev.seq for ev in reader.read_new().events)

    def write(host: PgBackend) -> None:
        log = host.event_log(agent)
        for i in range(15):
            _append(log, [remembered(f"Write {i}."), remembered(f"And {i}.")], [])

    polling = threading.Thread(target=poll)
    polling.start()
    writers = [threading.Thread(target=write, args=(h,)) for h in hosts for _ in range(4)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    stop.set()
    polling.join(10)
    seen.extend(ev.seq for ev in reader.read_new().events)
    assert seen == list(range(1, 8 * 15 * 2 + 1))
    for host in hosts:
        host.close()


def test_open_refuses_a_database_without_the_schema_or_of_another_version(
    pg_server: str,
) -> None:
    with postgres_server.fresh_database(pg_server, schema=False) as url:
        with pytest.raises(StoreError, match="remem db upgrade"):
            Memory.open(url)
        with connect(url, autocommit=True) as conn:
            conn.execute(
                "CREATE FUNCTION remem_schema_version() RETURNS integer LANGUAGE sql "
                "AS 'SELECT 999'"
            )
        with pytest.raises(StoreError, match="newer than this remem"):
            Memory.open(url)
        with connect(url, autocommit=True) as conn:
            conn.execute(
                "CREATE OR REPLACE FUNCTION remem_schema_version() RETURNS integer "
                "LANGUAGE sql AS 'SELECT 0'"
            )
        with pytest.raises(StoreError, match=r"holds remem schema v0.*run `remem db upgrade`"):
            Memory.open(url)


def test_a_memory_on_postgres_survives_reopening(pg_url: str, tmp_path: Path) -> None:
    ctx = RunContext.owner(postgres_server.agent_for(tmp_path))
    with Memory.open(pg_url) as mem:
        note = mem.remember(ctx, "The deploy window is Friday.", scope="agent")
    with Memory.open(pg_url) as mem:
        assert mem.get(ctx, note.id).text == "The deploy window is Friday."
        assert ctx.agent in mem.agents()


def test_without_psycopg_opening_postgres_says_which_extra_to_install() -> None:
    code = textwrap.dedent(
        """
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("psycopg", "psycopg_pool"):
                    raise ImportError(name)
        sys.meta_path.insert(0, Block())
        from remem import Memory
        from remem.errors import InvalidInput
        try:
            Memory.open("postgresql://nobody@127.0.0.1:1/none")
        except InvalidInput as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install 'remem[postgres]'" in out.stdout, out.stderr


def test_tests_start_a_server_of_their_own_when_none_answers() -> None:
    """What happens on a machine without a running PostgreSQL (as nobody when root)."""
    if postgres_server.binaries() is None:
        pytest.skip("no PostgreSQL binaries installed (apt-get install postgresql)")
    with postgres_server.own_server() as url:
        assert ":5432/" not in url
        with postgres_server.fresh_database(url) as db, Memory.open(db) as mem:
            ctx = RunContext.owner("yuko")
            note = mem.remember(ctx, "Stored in a server of the tests' own.", scope="agent")
            assert mem.get(ctx, note.id).version == 1

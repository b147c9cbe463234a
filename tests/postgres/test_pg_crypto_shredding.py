"""Crypto-shredding on PostgreSQL: note text is sealed under per-subject data keys wrapped
under a KEK kept in a key file outside the database. After a person's notes are erased,
their text is unreadable from a full ``pg_dump`` taken *before* the erase (with the key
file as it is after the erase and its KEK rotation), absent from the live tables, and
still absent after that old dump is restored and the store reopened (the erasure ledger
re-applied). Also: the contracts pass with sealing on."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag

from postgres.test_pg_memory_contract import TestPgMemory as PgMemory
from remem import Memory, RunContext
from remem.errors import StoreError
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect
from remem.store.postgres.events import PgEventLog
from remem.store.postgres.keyring import KeyFile, unseal
from remem.testing import postgres_server
from remem.testing.contract import EventLogContract
from remem.testing.contract_seq import SeqContract

ALICE = RunContext.dm("yuko", "discord:dm7", "discord:7")
BOB = RunContext.dm("yuko", "discord:dm8", "discord:8")
OWNER = RunContext.owner("yuko")


@pytest.fixture(scope="module")
def key_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One key file for the module's database (a database has one KEK, as in production)."""
    path = tmp_path_factory.mktemp("keys") / "remem-kek.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REMEM_KEY_FILE", str(path))
        yield path


def _tool(name: str) -> str:
    bin_dir = postgres_server.binaries()
    if bin_dir is None or not (bin_dir / name).exists():
        pytest.skip(f"no {name} installed (apt-get install postgresql)")
    return str(bin_dir / name)


def _copy_rows(dump: str, table: str) -> list[list[str]]:
    """The rows of ``table`` in a plain ``pg_dump`` (COPY text format)."""
    lines = dump.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"COPY public.{table} "))
    rows = []
    for line in lines[start + 1 :]:
        if line == "\\.":
            return rows
        rows.append(line.split("\t"))
    raise AssertionError("unterminated COPY")


def _bytea(field: str) -> bytes:
    return bytes.fromhex(field.replace("\\\\", "\\").removeprefix("\\x"))


def test_an_erased_persons_text_is_unreadable_from_an_old_dump_and_after_its_restore(
    pg_server: str, key_file: Path, tmp_path: Path
) -> None:
    pg_dump, psql = _tool("pg_dump"), _tool("psql")
    with postgres_server.fresh_database(pg_server) as url:
        with Memory.open(url) as mem:
            secret = mem.remember(ALICE, "My cat is called Biscuitzy.", scope="user")
            mem.correct(OWNER, secret.id, "My cat is called Pretzelby.", if_version=1)
            kept = mem.remember(BOB, "I drink green tea.", scope="user")
        old = subprocess.run([pg_dump, url], capture_output=True, text=True, check=True).stdout
        for plain in ("Biscuitzy", "Pretzelby", "green tea"):
            assert plain not in old  # sealed at rest: the heap, the WAL and dumps hold none
        subject = "user:discord:7"
        wrapped = [_bytea(r[3]) for r in _copy_rows(old, "remem_keys") if r[1] == subject]
        assert len(wrapped) == 1
        before = KeyFile(key_file).keks()

        with Memory.open(url) as mem:  # the owner erases Alice's note
            mem.forget(OWNER, secret.id)
            mem.compact(OWNER)
            assert mem.get(BOB, kept.id).text == "I drink green tea."  # re-wrapped, readable

        after = KeyFile(key_file)
        assert not set(after.keks()) & set(before), "the old KEK must be gone from the file"
        assert [e["subject"] for e in after.data["ledger"]] == [subject]
        for kek in after.keks().values():  # the old dump's wrapped key opens with no KEK left
            with pytest.raises(InvalidTag):
                unseal(kek, wrapped[0], f"yuko/{subject}".encode())
        with connect(url, autocommit=True) as conn:  # a superuser: sees every row
            assert conn.execute(
                "SELECT count(*) FROM remem_events WHERE subject = %s OR data LIKE %s",
                (subject, "%Pretzelby%"),
            ).fetchone() == (0,)
            assert conn.execute(
                "SELECT count(*) FROM remem_keys WHERE subject = %s", (subject,)
            ).fetchone() == (0,)

        # The old dump restored into a new database, and the store reopened.
        (tmp_path / "old.sql").write_text(old)
        with postgres_server.fresh_database(pg_server, schema=False) as restored:
            subprocess.run(
                [psql, "-q", "-v", "ON_ERROR_STOP=1", "-f", str(tmp_path / "old.sql"), restored],
                capture_output=True,
                check=True,
            )
            backend = PgBackend(restored)  # re-applies the ledger before serving
            try:
                with connect(restored, autocommit=True) as conn:
                    gone = conn.execute(
                        "SELECT (SELECT count(*) FROM remem_events WHERE subject = %s), "
                        "(SELECT count(*) FROM remem_keys WHERE subject = %s)",
                        (subject, subject),
                    ).fetchone()
                assert gone == (0, 0)
                # What remains predates the rotation: its keys are under a destroyed KEK.
                with pytest.raises(StoreError, match="predates a key rotation"):
                    backend.event_log("yuko").read_after(0)
            finally:
                backend.close()


class TestPgMemorySealed(PgMemory):
    """The Memory-level contract with note text sealed (a key file configured)."""

    @pytest.fixture(autouse=True)
    def _sealed(self, key_file: Path) -> None:
        """Every case opens its Memory with the module's key file set."""


class TestPgEventLogSealed(EventLogContract, SeqContract):
    """The event-store contract with sealing on."""

    @pytest.fixture(autouse=True)
    def _backend(self, pg_url: str, key_file: Path) -> Iterator[None]:
        self.backend = PgBackend(pg_url)
        yield
        self.backend.close()

    def make_log(self, tmp_path: Path) -> PgEventLog:
        return self.backend.event_log(postgres_server.agent_for(tmp_path))

"""The event-store and config-store contracts on PostgreSQL, as on JSONL and in memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from remem.store.postgres.backend import PgBackend
from remem.store.postgres.events import PgEventLog
from remem.testing import postgres_server
from remem.testing.contract import EventLogContract
from remem.testing.contract_config import ConfigStoreContract
from remem.testing.contract_seq import SeqContract


class TestPgEventLog(EventLogContract, SeqContract):
    """Each test its own agent in the module's database; handles share the pool."""

    @pytest.fixture(autouse=True)
    def _backend(self, pg_backend: PgBackend) -> None:
        self.backend = pg_backend

    def make_log(self, tmp_path: Path) -> PgEventLog:
        return self.backend.event_log(postgres_server.agent_for(tmp_path))


class TestPgConfigStore(ConfigStoreContract):
    """Records are the database's, not an agent's: each test a database of its own."""

    @pytest.fixture(autouse=True)
    def _database(self, pg_server: str) -> Iterator[None]:
        self.opened: dict[Path, str] = {}
        self.backends: list[PgBackend] = []
        with postgres_server.fresh_database(pg_server) as url:
            self.url = url
            yield
            for backend in self.backends:
                backend.close()

    def make_store(self, tmp_path: Path) -> PgBackend:
        self.backends.append(PgBackend(self.url))
        return self.backends[-1]

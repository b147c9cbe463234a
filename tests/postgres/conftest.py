"""PostgreSQL for these tests: the server at 127.0.0.1:5432, or one started for the session
(remem.testing.postgres_server); a fresh database per module, dropped afterwards. Skipped,
with the reason, only where no PostgreSQL can be had at all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip(
    "psycopg", reason="the postgres extra is not installed: pip install '.[postgres]'"
)

from remem.store.postgres.backend import PgBackend
from remem.testing import postgres_server


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    reason = postgres_server.unavailable()
    if reason is not None:
        pytest.skip(reason)
    with postgres_server.postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def pg_url(pg_server: str) -> Iterator[str]:
    """A database of this module's own, with the remem schema."""
    with postgres_server.fresh_database(pg_server) as url:
        yield url


@pytest.fixture(scope="module")
def pg_backend(pg_url: str) -> Iterator[PgBackend]:
    backend = PgBackend(pg_url)
    yield backend
    backend.close()

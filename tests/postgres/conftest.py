"""PostgreSQL for these tests: the server at 127.0.0.1:5432, or one started for the session
(remem.testing.postgres_server); a fresh database per module, dropped afterwards. Skipped,
with the reason, only where no PostgreSQL can be had at all."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

pytest.importorskip(
    "psycopg", reason="the postgres extra is not installed: pip install '.[postgres]'"
)

from remem.cli import main
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect
from remem.store.postgres.scope_key import KEY_FILE_ENV
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


def _as(url: str, user: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{user}@{rest.split('@', 1)[1]}"


@pytest.fixture(scope="module")
def app_db(pg_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A database upgraded by its owner for an application role: (owner URL, app URL).
    The scope key's service copy is in ``$REMEM_SCOPE_KEY_FILE`` while the module runs
    (as it is for a service connecting as the application role)."""
    role = f"remem_app_{secrets.token_hex(4)}"
    key_file = tmp_path_factory.mktemp("scope") / "scope.key"
    with postgres_server.fresh_database(pg_server, schema=False) as owner_url:
        app_url = _as(owner_url, role)
        result = CliRunner().invoke(
            main,
            [
                *("--data", app_url, "db", "upgrade", "--owner-url", owner_url),
                *("--app-role", role, "--scope-key-file", str(key_file)),
            ],
        )
        assert result.exit_code == 0, result.output
        assert f"row-level security applies to {role}" in result.output
        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv(KEY_FILE_ENV, str(key_file))
                yield owner_url, app_url
        finally:
            with connect(pg_server, autocommit=True) as admin:
                admin.execute(
                    f'DROP DATABASE IF EXISTS "{owner_url.rsplit("/", 1)[1]}" WITH (FORCE)'
                )
                admin.execute(f'DROP ROLE IF EXISTS "{role}"')

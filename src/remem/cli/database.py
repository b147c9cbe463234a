"""``remem db upgrade``: create or update the PostgreSQL tables, their row-level security
and the application role's grants (:mod:`remem.store.postgres.schema`), and both copies
of the scope key (:mod:`remem.store.postgres.scope_key`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from remem.cli.main import Ctx, handle_errors, main, pass_ctx
from remem.errors import InvalidInput
from remem.store.open import POSTGRES_SCHEMES


@main.group("db")
def db_group() -> None:
    """The PostgreSQL database of `--data postgresql://...`.

    \b
    Example:
      remem --data postgresql://remem_app@db.example/remem db upgrade --app-role remem_app
    """


@db_group.command("upgrade")
@click.option(
    "--owner-url",
    metavar="URL",
    help="Connect as this role to create the tables (it owns them); default: --data.",
)
@click.option(
    "--app-role",
    metavar="NAME",
    help="The role the service connects as (no table ownership, no BYPASSRLS): it gets "
    "the grants; created when missing. Default: --data's user when --owner-url differs.",
)
@click.option(
    "--scope-key-file",
    metavar="PATH",
    envvar="REMEM_SCOPE_KEY_FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where the service's copy of the scope key goes (written 0600 when absent, checked "
    "when present); the service reads it from $REMEM_SCOPE_KEY_FILE. Needed with an "
    "application role. Default: $REMEM_SCOPE_KEY_FILE.",
)
@pass_ctx
@handle_errors
def db_upgrade(
    obj: Ctx, owner_url: str | None, app_role: str | None, scope_key_file: Path | None
) -> None:
    """Create or update remem's tables, row-level security policies and the application
    role's grants, as the role that is to own the tables, and the scope key that signs
    every transaction's scope: the database's copy (an owner-only table) and the service's
    (--scope-key-file). The service then connects as the application role with
    REMEM_SCOPE_KEY_FILE set to that file; without the key, the role reads no row. Without
    an application role (a developer's server where the service's role owns everything)
    row-level security is only advisory, and this says so.

    \b
    Example:
      remem --data postgresql://postgres@127.0.0.1/remem db upgrade
      remem --data postgresql://app@127.0.0.1/remem db upgrade \
        --owner-url postgresql://postgres@127.0.0.1/remem --scope-key-file /etc/remem/scope.key
    """
    from remem.store.location import redact
    from remem.store.postgres.connect import connect, db_error, psycopg_modules

    data = obj.data or ""
    target = owner_url or data
    if not target.startswith(POSTGRES_SCHEMES):
        raise InvalidInput(
            "db upgrade needs a PostgreSQL database: --data postgresql://... (or --owner-url)"
        )
    psycopg, _ = psycopg_modules()
    try:
        _upgrade(connect(target), data, owner_url, app_role, scope_key_file)
    except psycopg.Error as exc:
        raise db_error(exc, target) from None
    click.echo(f"ready: remem serve --data {redact(data or target)}")


def _upgrade(
    conn: Any, data: str, owner_url: str | None, app_role: str | None, key_file: Path | None
) -> None:
    from remem.store.postgres.schema import rls_effect, tables_schema, upgrade
    from remem.store.postgres.scope_key import write_copy

    with conn:
        if app_role is None and owner_url and data.startswith(POSTGRES_SCHEMES):
            app_role = _user_of(data)
            owner = conn.execute("SELECT current_user").fetchone()[0]
            app_role = None if app_role == owner else app_role
        for line in upgrade(conn, app_role, key_file):
            click.echo(line)
        conn.commit()
        if key_file is not None:
            click.echo(write_copy(conn, tables_schema(conn), key_file))
            conn.commit()
        click.echo(rls_effect(conn, app_role))


def _user_of(url: str) -> str | None:
    """The user ``url`` connects as (``None`` when it names none)."""
    from remem.store.postgres.connect import psycopg_modules

    psycopg, _ = psycopg_modules()
    user = psycopg.conninfo.conninfo_to_dict(url).get("user")
    return str(user) if user else None


@main.command("migrate")
@click.option("--from", "source", required=True, metavar="DIR", help="The embedded store.")
@click.option("--to", "target", required=True, metavar="URL", help="postgresql://... (upgraded).")
@handle_errors
def migrate_cmd(source: str, target: str) -> None:
    """Copy an embedded data directory into PostgreSQL (events in order, ids and seqs kept,
    rules, secrets, traces, the service's records) and verify the copy. Run `remem db
    upgrade` on the database first; agents that already have events there are refused.

    \b
    Example:
      remem migrate --from ./remem-data --to postgresql://remem@127.0.0.1/remem
    """
    from remem.store.jsonl import JsonlBackend
    from remem.store.postgres.backend import PgBackend
    from remem.store.postgres.migrate import migrate

    if not target.startswith(POSTGRES_SCHEMES):
        raise InvalidInput("--to takes a PostgreSQL URL: postgresql://user@host/db")
    if not Path(source, "agents").is_dir() and not Path(source, "config").is_dir():
        raise InvalidInput(f"--from {source}: not a remem data directory (no agents/ or config/)")
    src, dst = JsonlBackend(Path(source)), PgBackend(target)
    try:
        report = migrate(src, dst)
    finally:
        src.close()
        dst.close()
    for agent, count in report.events.items():
        click.echo(f"{agent}: {count} events")
    for collection, count in report.records.items():
        click.echo(f"{collection}: {count} records")
    click.echo(f"verified: {dst.url} holds the same events, rules and records as {source}")

"""A PostgreSQL server for tests and benchmarks: the one at 127.0.0.1:5432 when it answers,
else one of our own (``initdb`` and ``pg_ctl`` in a temporary directory, run as
``nobody`` when we are root, since PostgreSQL refuses to run as root).

:func:`postgres_server` yields the URL of a role that may create databases;
:func:`fresh_database` a new database on it with the remem schema, dropped afterwards.
:func:`unavailable` says why neither is possible (no server answers and no PostgreSQL
binaries are installed), for a test to skip with that reason. ``$REMEM_TEST_PG`` names
another server (``own``: start one even though 5432 answers). :func:`primary_and_standby`
starts a primary and a hot standby of our own. Ships without a pytest dependency.
"""

from __future__ import annotations

import glob
import hashlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from remem.store.postgres.connect import connect
from remem.store.postgres.schema import upgrade

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin directory (with initdb and pg_ctl), if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major, reverse=True)
    for path in [*found, shutil.which("initdb") or ""]:
        if path and Path(path).with_name("pg_ctl").exists():
            return Path(path).parent
    return None


def _major(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def unavailable() -> str | None:
    """Why no PostgreSQL can be had for tests (``None``: one can)."""
    if os.environ.get("REMEM_TEST_PG") or _answers("127.0.0.1", 5432) or binaries():
        return None
    return (
        "no PostgreSQL answers at 127.0.0.1:5432 and no PostgreSQL binaries are installed "
        "(apt-get install postgresql; .ci/run does)"
    )


@contextmanager
def own_server() -> Iterator[str]:
    """A server of our own in a temporary directory, stopped and removed at the end."""
    yield from _own_server()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    return (
        [runuser, "-u", "nobody", "--", *argv]
        if runuser
        else ["su", "nobody", "-s", "/bin/sh", "-c", " ".join(argv)]
    )


@contextmanager
def postgres_server() -> Iterator[str]:
    """The URL of a server (and a role that may create databases and roles)."""
    given = os.environ.get("REMEM_TEST_PG")
    if given and given != "own":
        yield given
        return
    if given != "own" and _answers("127.0.0.1", 5432):
        yield DEFAULT_URL
        return
    yield from _own_server()


def _own_server() -> Iterator[str]:
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError(unavailable() or "no PostgreSQL binaries")
    top = Path(tempfile.mkdtemp(prefix="remem-pg-"))
    try:
        with _cluster(bin_dir, top, "data", [str(bin_dir / "initdb"), "-U", "postgres"]) as url:
            yield url
    finally:
        shutil.rmtree(top, ignore_errors=True)


@contextmanager
def _cluster(bin_dir: Path, top: Path, name: str, create: list[str]) -> Iterator[str]:
    """Create a cluster in ``top/name`` with ``create`` (given ``-D``), start it on a free
    port, yield its URL, stop it."""
    data, port, run = top / name, _free_port(), _as_postgres_user
    if os.geteuid() == 0:
        os.chown(top, _uid("nobody"), -1)
    # Throwaway clusters: nothing synced to disk, and stopped without a checkpoint.
    extra = ["--auth=trust", "-E", "UTF8"] if create[0].endswith("initdb") else []
    subprocess.run(
        run([*create, "-D", str(data), "--no-sync", *extra]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    options = f"-p {port} -k {top} -c listen_addresses=127.0.0.1 -c fsync=off"
    log = str(top / f"{name}.log")
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", log, "-w"]
    subprocess.run(
        run([*pg_ctl, "-o", options, "start"]), check=True, capture_output=True, timeout=120
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(run([*pg_ctl, "-m", "immediate", "stop"]), capture_output=True, timeout=120)


def standby_unavailable() -> str | None:
    """Why :func:`primary_and_standby` cannot run here (``None``: it can)."""
    bin_dir = binaries()
    if bin_dir is None or not (bin_dir / "pg_basebackup").exists():
        return "no PostgreSQL binaries (initdb, pg_ctl, pg_basebackup) are installed"
    return None


@contextmanager
def primary_and_standby() -> Iterator[tuple[str, str]]:
    """A primary of our own and a hot standby streaming from it (``pg_basebackup -R``,
    read-only): their URLs. Both stopped and removed at the end."""
    bin_dir = binaries()
    if bin_dir is None or standby_unavailable():
        raise RuntimeError(standby_unavailable() or "no PostgreSQL binaries")
    top = Path(tempfile.mkdtemp(prefix="remem-pg-"))
    try:
        with _cluster(bin_dir, top, "primary", [str(bin_dir / "initdb"), "-U", "postgres"]) as one:
            port = one.rsplit(":", 1)[1].split("/")[0]
            backup = [str(bin_dir / "pg_basebackup"), "-h", "127.0.0.1", "-p", port]
            backup += ["-U", "postgres", "-R", "-X", "stream", "-c", "fast"]
            with _cluster(bin_dir, top, "standby", backup) as two:
                yield one, two
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


def agent_for(key: object) -> str:
    """An agent name of one test's own (tests share a module's database)."""
    return "t" + hashlib.sha256(str(key).encode()).hexdigest()[:20]


def with_database(url: str, name: str) -> str:
    """``url`` naming database ``name`` instead."""
    base, _, query = url.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")


@contextmanager
def fresh_database(server_url: str, *, schema: bool = True) -> Iterator[str]:
    """A new database on ``server_url`` (with the remem schema unless ``schema=False``),
    dropped at the end."""
    name = f"remem_t_{secrets.token_hex(6)}"
    admin = connect(server_url, autocommit=True)
    try:
        admin.execute(f'CREATE DATABASE "{name}"')
        url = with_database(server_url, name)
        if schema:
            with connect(url) as conn:
                upgrade(conn, None)
        yield url
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()

"""What a PostgreSQL store's failures tell whom: a service's callers (HTTP and MCP bodies)
and its access log nothing of the connection string; the operator's CLI the host and
the database, never a password."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

from postgres.test_pg_two_hosts import serve_pg
from remem import RunContext
from remem.store.location import redact
from remem.store.postgres.connect import connect

AGENT = "yuko"
CLI = (sys.executable, "-m", "remem.cli")
PASSWORD, KEY_PASSWORD = "hunter2-pw", "keyring-pw"


def _with_passwords(url: str) -> str:
    """``url`` with a userinfo password and an ``sslpassword`` parameter (the test server
    trusts every local connection, so neither is checked, yet both are in the URL)."""
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{PASSWORD}@{host}?sslpassword={KEY_PASSWORD}"


def _call(base: str, method: str, path: str, body: Any, **headers: str) -> tuple[int, str]:
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request(method, path, None if body is None else json.dumps(body).encode(), headers)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, text


def _parts(url: str) -> list[str]:
    """Every part of ``url`` a caller of the service must not learn."""
    parsed = urllib.parse.urlsplit(url)
    assert parsed.hostname and parsed.username and parsed.port
    database = parsed.path.lstrip("/")
    return [PASSWORD, KEY_PASSWORD, database, parsed.hostname, f"{parsed.username}@", "5432"]


def test_store_failures_reach_callers_without_the_connection_string(
    pg_url: str, tmp_path: Path
) -> None:
    url = _with_passwords(pg_url)
    token = json.loads(
        subprocess.run(
            [*CLI, "--data", url, "tokens", "create", "--json", "--name", "errors-bot", "--owner"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    )["token"]
    run = json.dumps(RunContext.owner(AGENT).to_json())
    auth = {"Authorization": f"Bearer {token}", "Remem-Run": run}
    json_rpc = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with serve_pg(url, tmp_path) as (base, _):
        # A NUL in a rule is the caller's mistake, said as such (it was a 503 naming the
        # database), on PostgreSQL as on JSONL.
        status, text = _call(
            base, "PUT", f"/v1/agents/{AGENT}/rules/style", {"content": "a\x00b"}, **auth
        )
        assert status == 422 and "rule content" in text and "U+0000" in text, text
        # A real store failure: the rules table is away for a moment.
        with connect(pg_url, autocommit=True) as owner:
            owner.execute("ALTER TABLE remem_rules RENAME TO remem_rules_away")
            try:
                answers = [
                    _call(base, "GET", f"/v1/agents/{AGENT}/rules", None, **auth),
                    _call(
                        base,
                        "POST",
                        "/mcp",
                        {
                            "jsonrpc": "2.0",
                            "id": 1,
                            "method": "tools/call",
                            "params": {
                                "name": "recall",
                                "arguments": {"query": "tea"},
                                "_meta": {"remem/run": json.loads(run)},
                            },
                        },
                        Authorization=f"Bearer {token}",
                        **json_rpc,
                    ),
                ]
            finally:
                owner.execute("ALTER TABLE remem_rules_away RENAME TO remem_rules")
    (status, text), (_, mcp) = answers
    assert status == 503 and '"code":"store"' in text and "UndefinedTable" in text, text
    assert "the PostgreSQL store failed" in mcp, mcp  # the MCP client learns it failed ...
    log = "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))
    access = "\n".join(line for line in log.splitlines() if line.startswith('{"method"'))
    for part in _parts(pg_url):
        assert part not in text and part not in mcp and part not in access, part
    # ... and the operator's log says where and why, without a password.
    assert "remem_rules" in log and PASSWORD not in log and KEY_PASSWORD not in log


def test_cli_errors_name_host_and_database_but_no_password(pg_server: str) -> None:
    # The server's own database exists and holds no remem tables: opening it fails at once.
    every_form = f"{_with_passwords(pg_server)}&password={PASSWORD}"
    done = subprocess.run(
        [*CLI, "--data", every_form, "ls"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 8, done.stderr
    database = urllib.parse.urlsplit(pg_server).path.lstrip("/")
    assert f"127.0.0.1:5432/{database}" in done.stderr, done.stderr
    assert PASSWORD not in done.stderr and KEY_PASSWORD not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_cli_errors_carry_no_percent_encoded_password_parameter(pg_server: str) -> None:
    """libpq decodes a URI query's keys as well as its values: ``%70assword`` is
    ``password``, ``ssl%70assword`` is ``sslpassword``."""
    encoded = f"{pg_server}?%70assword={PASSWORD}&ssl%70assword={KEY_PASSWORD}"
    done = subprocess.run([*CLI, "--data", encoded, "ls"], capture_output=True, text=True)
    assert done.returncode != 0 and "127.0.0.1:5432/" in done.stderr, done.stderr
    assert PASSWORD not in done.stderr and KEY_PASSWORD not in done.stderr, done.stderr


def test_one_redaction_removes_every_password_form() -> None:
    assert redact("postgresql://app:p@ss@db:5432/remem") == "postgresql://app@db:5432/remem"
    assert (
        redact("postgresql://app@db/remem?password=x&sslmode=require&sslpassword=y")
        == "postgresql://app@db/remem?sslmode=require"
    )
    assert redact("host=db password='a \\' b' dbname=remem") == "host=db dbname=remem"
    assert redact("host=db sslpassword=k user=app") == "host=db user=app"
    assert redact("/srv/remem-data") == "/srv/remem-data"


def test_redaction_takes_linear_time_over_long_runs_of_blanks() -> None:
    """Each blank of a run was a start from which the whole run was scanned again: 20,000
    blanks after a ``%`` or ``password`` took 16 s."""
    started = time.monotonic()
    for text in ("%" + " " * 200_000, "password" + " \t" * 100_000 + "=x"):
        assert redact(text) in ("%", "")
    assert time.monotonic() - started < 2

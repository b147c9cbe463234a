"""``remem serve --workers 2``: several processes of one service on one data directory.

Each request here opens its own connection, so the kernel hands it to either worker; the
access log's ``pid`` says which one served it. The tests check that both workers served
requests and that nothing depends on which one did: a note written through one is read
and changed through the other at once (read-your-writes), and an event stream served by
one worker delivers writes served by the other and resumes on either.
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, serve
from remem import RunContext
from test_http_events import Events

AGENT = "yuko"
OWNER = RunContext.owner(AGENT)
ME = RunContext.dm(AGENT, "discord:1", "discord:7")
NOTES_PATH = f"/v1/agents/{AGENT}/notes"


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    os.environ["REMEM_SERVE_HEARTBEAT"] = "1"
    try:
        with serve(tmp_path_factory.mktemp("workers") / "data", "--workers", "2") as srv:
            yield srv, srv.token("--name", "both", "--owner")
    finally:
        os.environ.pop("REMEM_SERVE_HEARTBEAT", None)


def fresh(
    server: Server,
    token: str,
    verb: str,
    path: str,
    ctx: RunContext,
    body: Any = None,
    if_match: int | None = None,
) -> tuple[int, Any]:
    """One request on a new connection (so either worker may accept it)."""
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Remem-Run": json.dumps(ctx.to_json())}
    if if_match is not None:
        headers["If-Match"] = f'"{if_match}"'
    raw = None if body is None else json.dumps(body).encode()
    try:
        conn.request(verb, path, body=raw, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def served_by(server: Server, route: str) -> list[int]:
    """The pid of each logged request to ``route``, in log order."""
    lines = [json.loads(x) for x in server.log.read_text().splitlines() if x.startswith("{")]
    return [x["pid"] for x in lines if x.get("route") == route]


def write_then_read(server: Server, token: str, i: int) -> None:
    status, note = fresh(
        server,
        token,
        "POST",
        NOTES_PATH,
        OWNER,
        {"text": f"Rota {i} is on Fridays.", "scope": "agent"},
    )
    assert status == 201, note
    status, read = fresh(server, token, "GET", f"{NOTES_PATH}/{note['id']}", OWNER)
    assert (status, read) == (200, note)
    status, changed = fresh(
        server,
        token,
        "POST",
        f"{NOTES_PATH}/{note['id']}/correct",
        OWNER,
        {"text": f"Rota {i} is on Mondays."},
        if_match=note["version"],
    )
    assert status == 200 and changed["version"] == note["version"] + 1, changed
    assert fresh(server, token, "GET", f"{NOTES_PATH}/{note['id']}", OWNER) == (200, changed)


def test_both_workers_serve_and_every_write_is_read_back_at_once(
    workers: tuple[Server, str],
) -> None:
    server, token = workers
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: write_then_read(server, token, i), range(48)))
    pids = served_by(server, "/v1/agents/{agent}/notes/{note_id}")
    assert len(set(pids)) == 2, f"one worker served every read: {set(pids)}"
    assert server.proc.pid not in pids  # the parent only supervises


def test_an_event_stream_gets_writes_served_by_the_other_worker_and_resumes_on_either(
    workers: tuple[Server, str],
) -> None:
    server, token = workers
    events = Events(server, token, ME)
    try:
        with ThreadPoolExecutor(8) as pool:
            body = {"text": "I like tea in the afternoon."}
            notes = list(
                pool.map(lambda _: fresh(server, token, "POST", NOTES_PATH, ME, body)[1], range(8))
            )
        got = events.until(notes[-1]["id"])
    finally:
        events.close()
    assert {n["id"] for n in notes} <= {e["data"]["id"] for e in got}
    stream_pid = served_by(server, "/v1/agents/{agent}/events")[-1]
    assert set(served_by(server, "/v1/agents/{agent}/notes")) - {stream_pid}, (
        "every write went to the stream's own worker"
    )
    # Resume after the first event, on new connections until the other worker serves one.
    first = got[0]
    for _ in range(20):
        again = Events(server, token, ME, {"Last-Event-ID": first["id"]})
        try:
            resumed = again.next()
        finally:
            again.close()
        assert int(resumed["id"]) > int(first["id"]), resumed
        if served_by(server, "/v1/agents/{agent}/events")[-1] != stream_pid:
            return
    pytest.fail("twenty resumed streams were all served by the first stream's worker")


def test_the_workers_leave_a_clean_directory(workers: tuple[Server, str], tmp_path: Path) -> None:
    """Nothing the two workers wrote concurrently needs repair (``remem doctor``)."""
    import subprocess
    import sys

    server, _ = workers
    out = subprocess.run(
        [sys.executable, "-m", "remem.cli", "--data", str(server.data), "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr

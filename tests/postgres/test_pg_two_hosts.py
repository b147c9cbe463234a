"""Two ``remem serve`` processes on one PostgreSQL database: a write on one is in the
other's recall and SSE; an If-Match race across them has one winner and one 409; SIGKILL
of one mid-write loses no acknowledged write and leaves no gap in the sequence. And the
change signal itself: NOTIFY carries the agent and the position only, and wakes a
watcher on another host (also after its listener's connection was cut)."""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from http_server import free_port
from remem import Memory, RunContext
from remem.cli.serving import stop, wait_healthy
from remem.errors import RememError
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.changes import CHANNEL
from remem.store.postgres.connect import connect
from remem.testing import postgres_server
from remem.testing.event_samples import remembered

AGENT = "yuko"
ME = RunContext.dm(AGENT, "discord:1", "discord:7")
HOST_ARGS = ("--agent", "*", "--channel", "*", "--actor", "*")


@contextmanager
def serve_pg(url: str, logs: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    log = (logs / f"serve-{port}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "remem.cli", "serve", "--data", url, "--port", str(port)],
        env={**os.environ, "REMEM_EMBEDDINGS": "0"},
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_healthy(base, proc):
            raise RuntimeError((logs / f"serve-{port}.log").read_text()[-2000:])
        yield base, proc
    finally:
        stop(proc)
        log.close()


def _token(url: str) -> str:
    name = f"bot-{secrets.token_hex(4)}"
    argv = ["tokens", "create", "--json", "--name", name, *HOST_ARGS]
    out = subprocess.run(
        [sys.executable, "-m", "remem.cli", "--data", url, *argv],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return str(json.loads(out.stdout)["token"])


@pytest.fixture(scope="module")
def hosts(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    logs = tmp_path_factory.mktemp("hosts")
    token = _token(pg_url)
    with serve_pg(pg_url, logs) as (one, _), serve_pg(pg_url, logs) as (two, _):
        yield one, two, token


def _sse_collect(
    base: str, token: str, ctx: RunContext, seen: list[dict[str, Any]], ready: threading.Event
) -> None:
    """Append the SSE events of ``ctx`` on ``base`` to ``seen`` until the stream ends or goes
    quiet for 20 s (the caller watches ``seen``: the event may arrive before it knows the
    id)."""
    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    headers = {"Authorization": f"Bearer {token}", "Remem-Run": json.dumps(ctx.to_json())}
    conn.request("GET", f"/v1/agents/{ctx.agent}/events", headers=headers)
    response = conn.getresponse()
    assert response.status == 200
    try:
        while raw := response.readline():  # b"": the stream ended
            line = raw.decode().rstrip("\n")
            if line == ": subscribed":
                ready.set()
            elif line.startswith("data: "):
                seen.append(json.loads(line[len("data: ") :]))
    except OSError:
        return
    finally:
        conn.close()


def test_a_write_on_one_host_is_in_the_others_recall_and_sse(hosts: tuple[str, str, str]) -> None:
    one, two, token = hosts
    writer, reader = Memory.open(one, token=token), Memory.open(two, token=token)
    ready, seen = threading.Event(), []
    listening = threading.Thread(
        target=_sse_collect, args=(two, token, ME, seen, ready), daemon=True
    )
    listening.start()
    assert ready.wait(20)  # subscribed on host two, then written on host one
    note = writer.remember(ME, "I prefer answers in French.", scope="user")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and note.id not in [e.get("id") for e in seen]:
        time.sleep(0.05)
    about = [e for e in seen if e.get("id") == note.id]
    assert about, "host two's SSE did not deliver host one's write"
    assert about[0]["op"] == "remember" and "text" not in about[0]
    assert note.id in [n.id for n in reader.recall(ME, "answers in French").notes]


def _correct(base: str, token: str, note_id: str, version: int, text: str) -> int:
    """POST .../correct with ``If-Match``; the HTTP status."""
    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {
        "Authorization": f"Bearer {token}",
        "Remem-Run": json.dumps(ME.to_json()),
        "If-Match": f'"{version}"',
        "Content-Type": "application/json",
    }
    try:
        path = f"/v1/agents/{AGENT}/notes/{note_id}/correct"
        conn.request("POST", path, body=json.dumps({"text": text}), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def _race(
    barrier: threading.Barrier,
    statuses: list[int],
    i: int,
    base: str,
    token: str,
    note_id: str,
    version: int,
) -> None:
    barrier.wait()
    statuses[i] = _correct(base, token, note_id, version, f"Host {i} says it is earlier.")


def test_an_if_match_race_across_hosts_has_one_winner_and_one_409(
    hosts: tuple[str, str, str],
) -> None:
    one, two, token = hosts
    mem = Memory.open(one, token=token)
    for round_ in range(5):
        note = mem.remember(ME, f"The meeting is at {round_} pm.", scope="user")
        barrier = threading.Barrier(2)
        statuses: list[int] = [0, 0]
        threads = [
            threading.Thread(
                target=_race, args=(barrier, statuses, i, base, token, note.id, note.version)
            )
            for i, base in enumerate((one, two))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(statuses) == [200, 409], statuses
        assert mem.get(ME, note.id).version == note.version + 1


def test_sigkill_mid_write_loses_no_acknowledged_write_and_leaves_no_gap(
    pg_url: str, tmp_path: Path
) -> None:
    token = _token(pg_url)
    agent = postgres_server.agent_for(tmp_path)
    ctx = RunContext.dm(agent, "discord:1", "discord:7")
    acked: list[str] = []
    with serve_pg(pg_url, tmp_path) as (one, victim), serve_pg(pg_url, tmp_path) as (two, _):
        stop_at = time.monotonic() + 30
        killed = threading.Event()

        def write(base: str, n: int) -> None:
            mem = Memory.open(base, token=token)
            for i in range(n):
                if time.monotonic() > stop_at:
                    return
                try:
                    acked.append(mem.remember(ctx, f"Fact {i} via {base}.", scope="user").id)
                except (RememError, OSError):
                    if base == one and killed.is_set():
                        return

        writers = [threading.Thread(target=write, args=(b, 40)) for b in (one, one, two, two)]
        for w in writers:
            w.start()
        while len(acked) < 20 and time.monotonic() < stop_at:
            time.sleep(0.01)
        assert len(acked) >= 20, "the writers did not get going"
        victim.send_signal(signal.SIGKILL)
        killed.set()
        for w in writers:
            w.join(60)
        survivor = Memory.open(two, token=token)
        present = {n.id for n in survivor.list(ctx)}
    assert set(acked) <= present, "an acknowledged write was lost"
    with connect(pg_url, autocommit=True) as conn:
        conn.execute("SELECT set_config('remem.agent', %s, false)", (agent,))
        seqs = [
            r[0]
            for r in conn.execute(
                "SELECT seq FROM remem_events WHERE agent = %s ORDER BY seq", (agent,)
            ).fetchall()
        ]
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= len(acked)


def test_notify_carries_agent_and_position_only_and_wakes_another_host(
    pg_url: str, tmp_path: Path
) -> None:
    agent = postgres_server.agent_for(tmp_path)
    watching, writing = PgBackend(pg_url), PgBackend(pg_url)
    try:
        with connect(pg_url, autocommit=True) as raw:
            raw.execute(f"LISTEN {CHANNEL}")
            wake = threading.Event()
            watching.watch(agent, wake)
            assert wake.wait(10)  # the listener's first connect wakes every watcher
            wake.clear()
            log = writing.event_log(agent)
            with log.transaction() as txn:
                txn.append([remembered("Secret content never in a payload.")])
            assert wake.wait(10), "a commit on another host did not wake the watcher"
            payloads = [n.payload for n in raw.notifies(timeout=5, stop_after=1)]
            assert [json.loads(p) for p in payloads] == [{"agent": agent, "seq": 1}]
            # The listener's connection is cut: it reconnects and wakes its watchers.
            wake.clear()
            with connect(pg_url, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE query LIKE %s AND pid <> pg_backend_pid()",
                    (f"LISTEN {CHANNEL}%",),
                )
            assert wake.wait(15), "the watcher was not woken after its listener reconnected"
    finally:
        watching.close()
        writing.close()

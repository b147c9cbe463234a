"""Long polls and event streams against real ``remem serve`` processes (issue 20, items 6
and 7): held waits take no request thread, each principal holds at most
``--max-waits-per-principal`` (429 with ``Retry-After`` past it, which the Python client's
``subscribe`` backs off from), a stream ends once its token is revoked or its member
signs out (no event after), and after ``--stream-max-seconds``, resumable with
``Last-Event-ID`` without losing an event."""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, serve
from remem import Memory, RunContext
from remem.http.tokens import create_token

AGENT = "yuko"
ME = RunContext.dm(AGENT, "discord:1", "discord:7")
#: Principals holding 7 waits each: 42 held waits, each principal within the default 8.
HOLDERS = 6
#: Seconds for the server to take held waits whose requests were just sent (nothing
#: tells a client that a long poll has begun waiting).
SETTLE = 1.0
#: The test server's ``--stream-max-seconds``.
STREAM_MAX = 2


def _tokens(data: Path, names: list[str]) -> dict[str, str]:
    """Host tokens made before the server starts (``remem tokens create``'s function)."""
    data.mkdir(parents=True, exist_ok=True)
    with Memory.open(data) as mem:
        return {
            name: create_token(
                mem.backend, name, agents=[AGENT], channels=["discord:*"], actors=["*"]
            )
            for name in names
        }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    """One ``remem serve`` with its defaults (8 waits a principal), and host tokens."""
    data = tmp_path_factory.mktemp("waits") / "data"
    names = [f"holder{i}" for i in range(HOLDERS)]
    names += ["other", "full", "gone", "writer", "client", "drop"]
    tokens = _tokens(data, names)
    with serve(data) as srv:
        yield srv, tokens


def _conn(srv: Server, timeout: float = 30) -> http.client.HTTPConnection:
    url = urllib.parse.urlsplit(srv.url)
    return http.client.HTTPConnection(url.hostname or "", url.port, timeout=timeout)


def _headers(token: str | None, ctx: RunContext | None = ME, **extra: str) -> dict[str, str]:
    out = {"Authorization": f"Bearer {token}"} if token else {}
    if ctx is not None:
        out["Remem-Run"] = json.dumps(ctx.to_json())
    return {**out, **extra}


def _get(srv: Server, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
    conn = _conn(srv)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        return response.status, dict(response.getheaders()), json.loads(raw) if raw else None
    finally:
        conn.close()


def _write(srv: Server, token: str, text: str, ctx: RunContext = ME) -> str:
    conn = _conn(srv)
    try:
        body = json.dumps({"text": text}).encode()
        conn.request(
            "POST",
            f"/v1/agents/{AGENT}/notes",
            body,
            {**_headers(token, ctx), "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        data = json.loads(response.read())
        assert response.status == 201, data
        return str(data["id"])
    finally:
        conn.close()


class Waits:
    """``n`` long polls of ``token`` (``wait`` seconds each) held in threads."""

    def __init__(self, srv: Server, token: str, n: int, wait: int = 10) -> None:
        self.statuses: list[int] = []
        self._lock = threading.Lock()
        self._started = threading.Barrier(n + 1)
        self.threads = [
            threading.Thread(target=self._one, args=(srv, token, wait), daemon=True)
            for _ in range(n)
        ]
        for thread in self.threads:
            thread.start()
        self._started.wait(timeout=10)

    def _one(self, srv: Server, token: str, wait: int) -> None:
        conn = _conn(srv)
        conn.connect()
        self._started.wait(timeout=10)
        try:
            conn.request("GET", f"/v1/agents/{AGENT}/changes?wait={wait}", headers=_headers(token))
            response = conn.getresponse()
            response.read()
            with self._lock:
                self.statuses.append(response.status)
        finally:
            conn.close()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def test_held_waits_do_not_stall_other_principals(server: tuple[Server, dict[str, str]]) -> None:
    srv, tokens = server
    holders = [Waits(srv, tokens[f"holder{i}"], 7) for i in range(HOLDERS)]  # 42 held
    time.sleep(SETTLE)
    started = time.monotonic()
    status, _, body = _get(srv, f"/v1/agents/{AGENT}/notes", _headers(tokens["other"]))
    latency = time.monotonic() - started
    assert status == 200, body
    # Today's code holds a worker thread per wait: the 40-thread pool is full and this
    # request waits for a poll to end (seconds). Waiting on the event loop, it does not.
    assert latency < 3.0, f"a request took {latency:.2f}s while 42 waits were held"
    _write(srv, tokens["writer"], "Likes short replies.")  # wakes every wait: they answer
    for waits in holders:
        waits.join(10)
        assert waits.statuses == [200] * 7


def test_a_principal_past_its_waits_gets_429_with_retry_after(
    server: tuple[Server, dict[str, str]],
) -> None:
    srv, tokens = server
    held, other = Waits(srv, tokens["full"], 8), Waits(srv, tokens["other"], 1)
    time.sleep(SETTLE)
    status, headers, body = _get(
        srv, f"/v1/agents/{AGENT}/changes?wait=5", _headers(tokens["full"])
    )
    assert status == 429, body
    assert headers["retry-after"] == "1"
    assert body["code"] == "too_many_requests"
    assert "8" in body["message"] and "--max-waits-per-principal" in body["message"]
    # A stream counts too; another principal is not limited; an instant poll never waits.
    status, headers, _ = _get(srv, f"/v1/agents/{AGENT}/events", _headers(tokens["full"]))
    assert (status, headers["retry-after"]) == (429, "1")
    assert _get(srv, f"/v1/agents/{AGENT}/changes?wait=0", _headers(tokens["full"]))[0] == 200
    _write(srv, tokens["writer"], "Prefers metric units.")
    held.join(10)
    other.join(10)
    assert held.statuses == [200] * 8 and other.statuses == [200]
    # The waits ended: the principal may wait again.
    assert _get(srv, f"/v1/agents/{AGENT}/changes?wait=1", _headers(tokens["full"]))[0] == 200


class Stream:
    """One SSE connection, read block by block (every read bounded by the socket timeout)."""

    def __init__(self, srv: Server, headers: dict[str, str], timeout: float = 10) -> None:
        self.conn = _conn(srv, timeout)
        self.conn.request("GET", f"/v1/agents/{AGENT}/events", headers=headers)
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.read()

    def block(self) -> dict[str, str] | None:
        """The next block's fields (comments under ``":"``); ``None`` at the end."""
        fields: dict[str, str] = {}
        while True:
            raw = self.response.readline()
            if not raw:
                return fields or None
            line = raw.decode().rstrip("\n")
            if not line:
                if fields:
                    return fields
                continue
            name, _, value = line.partition(":")
            fields[name] = (fields.get(name, "") + value.strip()) if name else value.strip()

    def event(self) -> dict[str, str]:
        """The next event (a block with data)."""
        while True:
            block = self.block()
            assert block is not None, "the stream ended"
            if "data" in block:
                return block

    def rest(self) -> tuple[list[dict[str, str]], bool]:
        """Every block until the stream ends or a read times out; and whether it ended."""
        out = []
        try:
            while (block := self.block()) is not None:
                out.append(block)
        except TimeoutError:
            return out, False
        return out, True


def _ids(blocks: list[dict[str, str]]) -> set[str]:
    return {json.loads(b["data"]).get("id") for b in blocks if "data" in b}


def test_a_revoked_token_stream_and_wait_end_with_no_further_event(
    server: tuple[Server, dict[str, str]],
) -> None:
    srv, tokens = server
    stream = Stream(srv, _headers(tokens["gone"]), timeout=8)
    first = _write(srv, tokens["writer"], "Works nights.")
    assert json.loads(stream.event()["data"])["id"] == first
    poll = Waits(srv, tokens["gone"], 1, wait=20)
    subprocess.run(
        [sys.executable, "-m", "remem.cli", "--data", str(srv.data), "tokens", "revoke", "gone"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    started = time.monotonic()
    after = _write(srv, tokens["writer"], "Works days now.")
    # The stream ends: at the event (the credential is re-checked first), else in 5 s.
    rest, ended = stream.rest()
    assert after not in _ids(rest) and not _ids(rest)
    assert ended and time.monotonic() - started < 7
    poll.join(10)
    assert poll.statuses == [401]


def _member_session(srv: Server, token: str) -> str:
    with Memory.open(srv.url, token=token) as host:
        link = host.member_link(ME)
    conn = _conn(srv)
    body = json.dumps({"token": link.token}).encode()
    conn.request("POST", "/pad/session", body, {"Origin": srv.url, "Remem-Pad": "1"})
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 201
    return response.getheader("set-cookie", "").split(";")[0]


def test_a_members_stream_ends_when_they_sign_out(server: tuple[Server, dict[str, str]]) -> None:
    srv, tokens = server
    cookie = _member_session(srv, tokens["writer"])
    stream = Stream(srv, {"Cookie": cookie}, timeout=8)
    first = _write(srv, tokens["writer"], "Signs off with a wave.")
    assert json.loads(stream.event()["data"])["id"] == first
    conn = _conn(srv)
    conn.request(
        "DELETE", "/pad/session", headers={"Cookie": cookie, "Origin": srv.url, "Remem-Pad": "1"}
    )
    assert conn.getresponse().status == 200
    conn.close()
    started = time.monotonic()
    after = _write(srv, tokens["writer"], "Signs off with a bow.")
    rest, ended = stream.rest()
    assert after not in _ids(rest) and not _ids(rest)
    assert ended and time.monotonic() - started < 7


@pytest.fixture(scope="module")
def short(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    """``remem serve --stream-max-seconds 2``."""
    data = tmp_path_factory.mktemp("short") / "data"
    tokens = _tokens(data, ["bot", "writer"])
    with serve(data, "--stream-max-seconds", f"{STREAM_MAX}") as srv:
        yield srv, tokens


def test_a_stream_ends_after_its_time_and_resumes_losing_nothing(
    short: tuple[Server, dict[str, str]],
) -> None:
    srv, tokens = short
    started = time.monotonic()
    stream = Stream(srv, _headers(tokens["bot"]))
    first = _write(srv, tokens["writer"], "Drinks tea.")
    assert json.loads(stream.event()["data"])["id"] == first
    rest, ended = stream.rest()
    assert ended and STREAM_MAX - 0.5 < time.monotonic() - started < STREAM_MAX + 3
    resume = rest[-1]["id"]  # the last block: the position to resume from
    missed = _write(srv, tokens["writer"], "Drinks coffee now.")  # while disconnected
    again = Stream(srv, _headers(tokens["bot"], **{"Last-Event-ID": resume}))
    event = again.event()
    assert json.loads(event["data"])["id"] == missed  # not `first` again, nothing lost
    again.conn.close()


def test_the_client_subscription_backs_off_on_429(server: tuple[Server, dict[str, str]]) -> None:
    srv, tokens = server
    with Memory.open(srv.url, token=tokens["client"]) as host:
        sub = host.subscribe(ME)
        held = Waits(srv, tokens["client"], 8)  # all the token's waits
        time.sleep(SETTLE)
        # A write in 1.5 s ends the held waits; until then the client's poll gets 429,
        # waits Retry-After and asks again, instead of failing.
        writer = threading.Timer(1.2, _write, (srv, tokens["writer"], "Walks to work."))
        writer.start()
        got = sub.poll(8)
        writer.join()
        held.join(10)
    assert [c.event for c in got] == ["note.changed"]
    lines = [json.loads(x) for x in srv.log.read_text().splitlines() if x.startswith("{")]
    polls = [x["status"] for x in lines if x.get("route", "").endswith("/changes")]
    assert 429 in polls and polls[-1] == 200


def test_a_quiet_wait_rechecks_its_credential_on_schedule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no event to deliver, the credential is still re-checked every
    ``RECHECK_SECONDS`` (here 0.2 s), and its end ends the wait."""
    import anyio

    from remem.app.subscription import LocalSubscription
    from remem.errors import Unauthenticated
    from remem.http import waits

    monkeypatch.setattr(waits, "RECHECK_SECONDS", 0.2)
    mem = Memory.open("memory://")
    checks: list[float] = []

    async def recheck() -> None:
        checks.append(time.monotonic())
        if len(checks) >= 4:
            raise Unauthenticated("revoked")

    async def wait() -> None:
        sub = mem.subscribe(ME)
        assert isinstance(sub, LocalSubscription)
        waiter = waits.Waiter(sub, recheck, lambda: None)
        started = time.monotonic()
        assert await waiter.next(0.5) == []
        assert len(checks) >= 2  # a quiet half second: rechecked on schedule
        with pytest.raises(Unauthenticated):
            await waiter.next(5.0)
        assert time.monotonic() - started < 3
        waiter.close()

    anyio.run(wait)
    gaps = [b - a for a, b in itertools.pairwise(checks)]
    assert max(gaps) < 0.2 + 0.6  # the schedule, give or take a busy machine


def test_an_abandoned_wait_frees_its_place(server: tuple[Server, dict[str, str]]) -> None:
    srv, tokens = server
    path = f"/v1/agents/{AGENT}/changes?wait=20"
    dropped = []
    for _ in range(8):  # all the token's waits, each dropped by its client
        conn = _conn(srv)
        conn.request("GET", path, headers=_headers(tokens["drop"]))
        dropped.append(conn)
    time.sleep(0.3)
    for conn in dropped:
        conn.close()
    time.sleep(0.5)  # a gone client's wait ends within a read interval (0.2 s)
    status, _, body = _get(srv, f"/v1/agents/{AGENT}/changes?wait=1", _headers(tokens["drop"]))
    assert status == 200, body

"""Nothing unauthenticated costs ``remem serve`` unbounded memory (issue 20, items 3-5),
against real server processes on 127.0.0.1, for both HTTP parsers:

- a request line and headers past 16 KiB or 100 fields are refused (431) while they
  arrive, a dribbled head is closed after ``--header-timeout``, connections past
  ``--max-connections`` are closed at once, ``Remem-Run`` is at most 4 KiB (422);
- every route the application serves refuses an oversized body (413) by
  ``Content-Length`` or while it streams, before buffering it;
- an error names at most 5 offending keys of 40 characters, and no error body is over
  2 KiB;
- the bounded-resources check: eight unauthenticated clients sending 1 GiB headers and
  bodies while long polls are held move the server's RSS by at most 64 MiB, and an
  authenticated recall's p50 stays within 2x idle + 2 ms.
"""

from __future__ import annotations

import json
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import orjson
import pytest

from http_server import Server, serve
from remem import Memory, RunContext
from remem.error_table import MAX_ERROR_BYTES, error_body
from remem.errors import Conflict, Denied, InvalidInput, Rejected, shown_keys
from remem.http.tokens import create_token

AGENT = "yuko"
OWNER = RunContext.owner(AGENT)
MEMBER = RunContext.dm(AGENT, "discord:1", "discord:7")
#: Long polls held during the bounded-resources check, over POLL_TOKENS principals (a
#: principal holds at most 8 waits). 100 needs waits that hold no worker thread.
LONG_POLLS, POLL_TOKENS = 100, 13
#: The most a refused request may have sent: socket buffers, never the 1 GiB.
SENT_BOUND = 32 << 20
GIB = 1 << 30
CHUNK = b"a" * (1 << 16)


def _port(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def _rss(server: Server) -> int:
    """The serve process's resident set size in bytes."""
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _tokens(data: Path) -> dict[str, str]:
    """An owner token and POLL_TOKENS member-capped host tokens, made in this process."""
    mem = Memory.open(str(data))
    try:
        store = mem.backend
        out = {"owner": create_token(store, "owner", owner=True)}
        for i in range(POLL_TOKENS):
            out[f"poll{i}"] = create_token(
                store, f"poll{i}", agents=[AGENT], channels=["discord:*"], actors=["*"]
            )
        return out
    finally:
        mem.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One server per parser: httptools (the default) with room for the long polls, and
    h11 with a cap of 6 connections; both close a head after 1 s. Started side by side."""
    root = tmp_path_factory.mktemp("bounds")
    tokens = _tokens(root / "data")
    common = ("--header-timeout", "1")
    with ExitStack() as stack, ThreadPoolExecutor(2) as pool:
        httptools = pool.submit(
            stack.enter_context, serve(root / "data", *common, "--max-connections", "400")
        )
        h11 = pool.submit(
            stack.enter_context,
            serve(root / "data-h11", *common, "--http-parser", "h11", "--max-connections", "6"),
        )
        yield {"httptools": httptools.result(), "h11": h11.result(), "tokens": tokens}


def _answer(sock: socket.socket, timeout: float = 10) -> bytes:
    """What the server sends until it closes (or ``timeout``)."""
    sock.settimeout(timeout)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except OSError:
        pass
    return out


def send_until_refused(
    port: int, head: bytes, total: int = GIB, chunk: bytes = CHUNK
) -> tuple[int, bytes]:
    """Send ``head`` and then ``chunk`` after ``chunk``, up to ``total`` bytes, stopping as
    soon as the server answers or closes: (bytes sent, what it answered; empty when the
    connection was reset before the answer could be read)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sent = 0
    try:
        sock.sendall(head)
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            sock.sendall(chunk)
            sent += len(chunk)
        return sent, _answer(sock)
    except OSError:
        return sent, b""
    finally:
        sock.close()


#: One chunk of a chunked body (64 KiB).
CHUNKED = b"10000\r\n" + CHUNK + b"\r\n"


def status_of(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def body_of(answer: bytes) -> dict[str, Any]:
    return dict(json.loads(answer.split(b"\r\n\r\n", 1)[1]))


def _request(port: int, raw: bytes) -> bytes:
    sock = socket.create_connection(("127.0.0.1", port))
    try:
        sock.sendall(raw)
        return _answer(sock, 5)
    finally:
        sock.close()


# -- 3. request heads -------------------------------------------------------------------


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_heads_past_16_kib_or_100_fields_are_refused_while_they_arrive(
    servers: dict[str, Any], parser: str
) -> None:
    server = servers[parser]
    port, before = _port(server), _rss(server)
    # Four clients each sending a 100 MB header: answered 431 after a few MB of socket
    # buffers at most, and the server's memory does not grow with them.
    results: list[tuple[int, bytes]] = []
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: "

    def attack() -> None:
        results.append(send_until_refused(port, head, 100 << 20))

    threads = [threading.Thread(target=attack) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 4
    for sent, answer in results:
        assert sent < SENT_BOUND  # refused after 16 KiB; the rest is socket buffers
        # Answered 431, or reset when the client keeps sending past what the server
        # reads after answering.
        assert answer == b"" or status_of(answer) == 431, answer[:200]
    assert _rss(server) - before < 16 << 20
    # The limits themselves: 16 KiB of head and 100 fields pass, one more does not.
    ok = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: %s\r\n\r\n"
    pad = (16 * 1024) - len(ok % b"")
    assert status_of(_request(port, ok % (b"p" * pad))) == 200
    assert status_of(_request(port, ok % (b"p" * (pad + 1)))) == 431
    fields = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n"
    assert status_of(_request(port, fields % (b"X-F: 1\r\n" * 98))) == 200
    many = _request(port, fields % (b"X-F: 1\r\n" * 99))
    assert status_of(many) == 431 and body_of(many)["code"] == "headers_too_large"


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_a_pipelined_head_past_16_kib_is_refused(servers: dict[str, Any], parser: str) -> None:
    # The second request's head arrives with the first one's bytes: it is held to the
    # same 16 KiB as a head that arrives on its own.
    port = _port(servers[parser])
    first = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    second = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n" % (b"b" * 20000)
    answers = _request(port, first + second).split(b"HTTP/1.1 ")[1:]
    assert [int(a.split(b" ", 1)[0]) for a in answers] == [200, 431], answers


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_a_chunked_bodys_trailer_fields_are_held_to_the_heads_limit(
    servers: dict[str, Any], parser: str
) -> None:
    # Trailer fields come after the body's last chunk, and the parser buffers them like a
    # head's: an endless one is refused like an endless header, before the route answers.
    server = servers[parser]
    port, before = _port(server), _rss(server)
    head = (
        b"POST /v1/agents/yuko/notes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        b"\r\n2\r\n{}\r\n0\r\nX-Trailer: "
    )
    sent, answer = send_until_refused(port, head, 64 << 20)
    assert sent < SENT_BOUND and status_of(answer) in (None, 400, 431), answer[:200]
    assert _rss(server) - before < 16 << 20


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_a_dribbled_head_is_closed_after_the_header_timeout(
    servers: dict[str, Any], parser: str
) -> None:
    port = _port(servers[parser])
    started = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", port))
    closed_after = None
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        while time.monotonic() - started < 8:
            try:
                sock.sendall(b"X")  # one byte of a header every 0.2 s, never its end
            except OSError:
                closed_after = time.monotonic() - started
                break
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable and not sock.recv(1024):
                closed_after = time.monotonic() - started
                break
    finally:
        sock.close()
    assert closed_after is not None and 0.8 < closed_after < 4


def test_connections_past_the_cap_are_closed_at_once(servers: dict[str, Any]) -> None:
    port = _port(servers["h11"])  # started with --max-connections 6
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(6)]
    try:
        time.sleep(0.2)
        extra = socket.create_connection(("127.0.0.1", port))
        extra.settimeout(0.5)
        try:
            assert extra.recv(1) == b""  # closed before the 1 s header timeout
        except ConnectionResetError:
            pass
        finally:
            extra.close()
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.1)
    healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    assert status_of(_request(port, healthz)) == 200


def test_a_remem_run_header_over_4_kib_is_422(servers: dict[str, Any]) -> None:
    port, token = _port(servers["httptools"]), servers["tokens"]["owner"]
    envelope = json.dumps(OWNER.to_json())

    def recall(run: str) -> bytes:
        body = b'{"query": "x"}'
        return _request(
            port,
            f"POST /v1/agents/{AGENT}/recall HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            f"Authorization: Bearer {token}\r\nRemem-Run: {run}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body,
        )

    def padded(size: int) -> str:  # spaces inside the JSON (a header's ends are trimmed)
        return "{" + " " * (size - len(envelope)) + envelope[1:]

    assert status_of(recall(padded(4096))) == 200
    refused = recall(padded(4097))
    assert status_of(refused) == 422
    assert "Remem-Run header is over 4096" in body_of(refused)["message"]


# -- 4. bodies --------------------------------------------------------------------------


def _every_route() -> list[tuple[str, str]]:
    """(method, path) of every route the application serves, its parameters filled."""
    from remem.http.app import create_app

    mem = Memory.open("memory://")
    try:
        app = create_app(mem, mem.backend)
    finally:
        mem.close()
    out = []
    for route in app.routes:
        path = getattr(route, "path", "")
        for method in sorted(getattr(route, "methods", None) or {"POST"}):
            if method != "HEAD":
                filled = path.replace("{agent}", AGENT)
                out.append(
                    (method, "/".join("x" if p.startswith("{") else p for p in filled.split("/")))
                )
    return out


def test_every_route_refuses_an_oversized_body_before_buffering_it(
    servers: dict[str, Any],
) -> None:
    port, token = _port(servers["httptools"]), servers["tokens"]["owner"]
    routes = _every_route()
    paths = {p for _, p in routes}
    assert {"/pad/session", "/mcp", f"/v1/agents/{AGENT}/notes", "/healthz"} <= paths
    for method, path in routes:  # refused by Content-Length: no byte of it is read
        head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {GIB}\r\n\r\n"
        answer = _request(port, head.encode())
        assert status_of(answer) == 413, (method, path, answer[:200])
        assert body_of(answer)["code"] == "body_too_large"
    # Streamed without a length: counted while the route reads it, refused at the limit.
    for path in ("/pad/session", "/mcp", f"/v1/agents/{AGENT}/notes"):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n\r\n"
        )
        sent, answer = send_until_refused(port, head.encode(), 200 << 20, CHUNKED)
        assert sent < SENT_BOUND, path
        assert answer == b"" or status_of(answer) == 413, (path, answer[:200])
        # Just past the limit, the client reads the answer.
        body = CHUNKED * (1 if path == "/pad/session" else 17) + b"0\r\n\r\n"
        answer = _request(port, head.encode() + body)
        assert status_of(answer) == 413, (path, answer[:200])
    # A route's own smaller limit: a member link's exchange takes 4 KiB.
    small = b'{"token": "%s"}' % (b"t" * 5000)
    answer = _request(
        port,
        b"POST /pad/session HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
        % (len(small), small),
    )
    assert status_of(answer) == 413
    assert "over 4096 bytes" in body_of(answer)["message"]


# -- 5. error bodies --------------------------------------------------------------------


def _post(port: int, token: str, path: str, body: bytes, ctx: RunContext = OWNER) -> bytes:
    return _request(
        port,
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        f"Authorization: Bearer {token}\r\nRemem-Run: {json.dumps(ctx.to_json())}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body,
    )


def _named_keys(message: str) -> list[str]:
    listed = message[message.index("[") + 1 : message.index("]")]
    return [k.strip().strip("'") for k in listed.split(", ") if k.startswith("'")]


def test_errors_name_at_most_five_keys_and_stay_under_2_kib(servers: dict[str, Any]) -> None:
    port, token = _port(servers["httptools"]), servers["tokens"]["owner"]
    keys = {f"k{i:06d}" + "x" * 50: 1 for i in range(15000)}  # about 1 MB
    answer = _post(
        port, token, f"/v1/agents/{AGENT}/notes", json.dumps({"text": "hi", **keys}).encode()
    )
    assert status_of(answer) == 422
    raw = answer.split(b"\r\n\r\n", 1)[1]
    assert len(raw) <= MAX_ERROR_BYTES
    message = body_of(answer)["message"]
    named = _named_keys(message)
    assert len(named) == 5 and all(len(k) <= 41 for k in named)
    assert "and 14995 more" in message
    # Unknown query parameters, within the head's limit.
    run = json.dumps(OWNER.to_json())
    query = "&".join(f"q{i:04d}{'y' * 40}=1" for i in range(200))
    raw_get = _request(
        port,
        f"GET /v1/agents/{AGENT}/events?{query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        f"Authorization: Bearer {token}\r\nRemem-Run: {run}\r\n\r\n".encode(),
    )
    assert status_of(raw_get) == 422
    assert len(_named_keys(body_of(raw_get)["message"])) == 5
    assert len(raw_get.split(b"\r\n\r\n", 1)[1]) <= MAX_ERROR_BYTES
    # MCP: unknown tool arguments, an unknown method, an envelope with unknown keys.
    meta = {"remem/run": OWNER.to_json()}
    for params, method in (
        ({"name": "recall", "arguments": keys, "_meta": meta}, "tools/call"),
        ({"_meta": meta}, "x" * 900_000),
        ({"_meta": {"remem/run": {**OWNER.to_json(), **keys}}}, "tools/list"),
    ):
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = _post(port, token, "/mcp", json.dumps(request).encode())
        assert status_of(answer) == 200
        raw = answer.split(b"\r\n\r\n", 1)[1]
        assert len(raw) <= MAX_ERROR_BYTES + 200, raw[:300]  # the JSON-RPC frame around it
        reply = json.loads(raw)
        assert "error" in reply or reply["result"]["isError"]


def test_the_error_body_is_bounded_whatever_raised_it(tmp_path: Path) -> None:
    """The cap holds centrally (every adapter's body), a 409's ``current`` aside."""
    for error in (
        InvalidInput("x" * 1_000_000),
        InvalidInput("\x00" * 100_000),  # six bytes of JSON a character
        Denied("no", rule="r" * 100_000),
        Rejected("no", reason="\x01" * 100_000),
    ):
        body = error_body(error)
        assert len(orjson.dumps(body)) <= MAX_ERROR_BYTES
        assert body["message"] == error.message or body["message"].endswith("…")
    mem = Memory.open(str(tmp_path / "data"))
    try:
        note = mem.remember(OWNER, "Uses metric units. " * 20, scope="agent")
    finally:
        mem.close()
    body = error_body(Conflict("stale " * 1000, current=note))
    current = body.pop("current")
    assert len(orjson.dumps(body)) <= MAX_ERROR_BYTES  # the message is cut ...
    assert current["text"] == note.text  # ... never the current note
    assert shown_keys(["b" * 100, "a", "c", "d", "e", "f", "g"]) == (
        "['a', 'b" + "b" * 39 + "…', 'c', 'd', 'e', and 2 more]"
    )


# -- the bounded-resources check --------------------------------------------------------

_ATTACK = r"""
import json, select, socket, sys, threading, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
CHUNK = b"a" * (1 << 16)
GIB = 1 << 30
heads = [
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ",
    b"POST /pad/session HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % GIB,
    b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
]
chunks = [CHUNK, CHUNK, b"10000\r\n" + CHUNK + b"\r\n"]
results = []

def once(head, chunk):
    sock = socket.create_connection(("127.0.0.1", port))
    sent = 0
    try:
        sock.sendall(head)
        while sent < GIB:
            if select.select([sock], [], [], 0)[0]:
                break
            sock.sendall(chunk)
            sent += len(chunk)
        sock.settimeout(5)
        answer = sock.recv(64)
    except OSError:
        answer = b""
    finally:
        sock.close()
    return sent, answer[9:12].decode() or "closed"

def client(i):
    end = time.monotonic() + seconds
    n = i
    while time.monotonic() < end:
        results.append(once(heads[n % len(heads)], chunks[n % len(heads)]))
        n += 1
        time.sleep(0.05)

threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(results))
"""


def _hold_long_polls(port: int, tokens: list[str]) -> list[socket.socket]:
    held = []
    for i in range(LONG_POLLS):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(
            f"GET /v1/agents/{AGENT}/changes?wait=20 HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {tokens[i % len(tokens)]}\r\n"
            f"Remem-Run: {json.dumps(MEMBER.to_json())}\r\n\r\n".encode()
        )
        held.append(sock)
    return held


def _recall_p50(mem: Memory, n: int = 40) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        mem.recall(MEMBER, "what units")
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def test_unauthenticated_floods_leave_memory_and_recall_alone(servers: dict[str, Any]) -> None:
    server, tokens = servers["httptools"], servers["tokens"]
    port = _port(server)
    owner = Memory.open(server.url, token=tokens["owner"])
    member = Memory.open(server.url, token=tokens["poll0"])
    try:
        for i in range(20):
            owner.remember(OWNER, f"Uses metric units, note {i}.", scope="agent")
        _recall_p50(member, 20)  # warm up
        idle_rss, idle_p50 = _rss(server), _recall_p50(member)
        polls = _hold_long_polls(port, [tokens[f"poll{i}"] for i in range(POLL_TOKENS)])
        attack = subprocess.Popen(
            [sys.executable, "-c", _ATTACK, str(port), "3"], stdout=subprocess.PIPE, text=True
        )
        peak, stop = [idle_rss], threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak.append(_rss(server))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            time.sleep(0.5)  # the attack is under way (it lasts 3 s)
            busy_p50 = _recall_p50(member)
            out, _ = attack.communicate(timeout=60)
            answered = select.select(polls, [], [], 0)[0]
        finally:
            stop.set()
            sampler.join()
            for sock in polls:
                sock.close()
            owner.remember(OWNER, "Ends the long polls.", scope="agent")
        results = json.loads(out)
        assert answered == []  # every long poll was held throughout
        assert len(results) >= 8
        assert all(sent < SENT_BOUND for sent, _ in results)
        # /mcp authenticates before it reads a body: 401, its connection closed.
        assert {status for _, status in results} <= {"401", "413", "431", "closed"}
        assert max(peak) - idle_rss <= 64 << 20, (idle_rss, max(peak))
        assert busy_p50 <= 2 * idle_p50 + 0.002, (idle_p50, busy_p50)
    finally:
        owner.close()
        member.close()

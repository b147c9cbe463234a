"""Server-Sent Events (``GET /v1/agents/{agent}/events``) against real ``remem serve``
processes on 127.0.0.1: a reader with ``http.client`` sees its own writes made through
another client, never another member's user note; ``Last-Event-ID`` resumes; a write
served by a second process on the same data directory reaches a subscriber of the first
(the log is the bus); heartbeats; envelopes checked like every route."""

from __future__ import annotations

import http.client
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from http_server import Server, serve
from remem import Memory, RunContext

AGENT = "yuko"
HOST_ARGS = ("--name", "bot", "--agent", AGENT, "--channel", "discord:*", "--actor", "*")
ME = RunContext.dm(AGENT, "discord:1", "discord:7")
OTHER = RunContext.dm(AGENT, "discord:2", "discord:8")


@contextmanager
def _heartbeat_env(seconds: str) -> Iterator[None]:
    os.environ["REMEM_SERVE_HEARTBEAT"] = seconds
    try:
        yield
    finally:
        os.environ.pop("REMEM_SERVE_HEARTBEAT", None)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server, str]]:
    """Two ``remem serve`` processes on one data directory, and a host token."""
    data = tmp_path_factory.mktemp("sse") / "data"
    with _heartbeat_env("1"), serve(data) as first, serve(data) as second:
        yield first, second, first.token(*HOST_ARGS)


class Events:
    """One SSE connection read line by line (every read bounded by the socket timeout)."""

    def __init__(
        self, server: Server, token: str, ctx: RunContext, headers: dict[str, str] | None = None
    ) -> None:
        port = int(server.url.rsplit(":", 1)[1])
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        sent = {
            "Authorization": f"Bearer {token}",
            "Remem-Run": json.dumps(ctx.to_json()),
            **(headers or {}),
        }
        self.conn.request("GET", f"/v1/agents/{ctx.agent}/events", headers=sent)
        self.response = self.conn.getresponse()
        self.comments: list[str] = []

    def next(self) -> dict[str, Any]:
        """The next event: its id, event and data (comments are kept in ``comments``)."""
        fields: dict[str, Any] = {}
        while True:
            raw = self.response.readline()
            if not raw:  # a closed stream reads b"" forever: fail, don't spin
                raise AssertionError("the event stream ended")
            line = raw.decode().rstrip("\n")
            if not line and "data" in fields:
                fields["data"] = json.loads(fields["data"])
                return fields
            if not line:  # the end of a block without data (e.g. retry:)
                fields = {}
            if line.startswith(":"):
                self.comments.append(line)
            elif line:
                name, _, value = line.partition(": ")
                fields[name] = value

    def until(self, note_id: str, deadline: float = 15.0) -> list[dict[str, Any]]:
        """Every event up to and including the first about ``note_id``."""
        seen, end = [], time.monotonic() + deadline
        while time.monotonic() < end:
            event = self.next()
            seen.append(event)
            if event["data"].get("id") == note_id:
                return seen
        raise AssertionError(f"no event for {note_id} in {deadline}s: {seen}")

    def close(self) -> None:
        self.conn.close()


def _client(server: Server, token: str) -> Memory:
    return Memory.open(server.url, token=token)


def test_a_subscriber_sees_its_own_writes_and_never_another_members(
    pair: tuple[Server, Server, str],
) -> None:
    first, _, token = pair
    events = Events(first, token, ME)
    try:
        assert events.response.status == 200
        assert events.response.getheader("content-type", "").startswith("text/event-stream")
        mem = _client(first, token)
        theirs = mem.remember(OTHER, "I am allergic to peanuts", scope="user")
        mine = mem.remember(ME, "I prefer short answers", scope="user")
        seen = events.until(mine.id)
        assert seen[-1]["event"] == "note.changed"
        assert seen[-1]["id"] == str(seen[-1]["data"]["seq"])
        assert seen[-1]["data"]["op"] == "remember"
        assert "text" not in seen[-1]["data"]
        assert theirs.id not in {e["data"].get("id") for e in seen}
    finally:
        events.close()


def test_last_event_id_resumes_after_that_event(pair: tuple[Server, Server, str]) -> None:
    first, _, token = pair
    events = Events(first, token, ME)
    mem = _client(first, token)
    try:
        one = mem.remember(ME, "call me Yu", scope="user")
        two = mem.remember(ME, "I live in Osaka", scope="user")
        seen = events.until(two.id)
    finally:
        events.close()
    last_of_one = [e["id"] for e in seen if e["data"].get("id") == one.id][-1]
    again = Events(first, token, ME, {"Last-Event-ID": last_of_one})
    try:
        replay = again.until(two.id)
        assert one.id not in {e["data"].get("id") for e in replay}
        assert all(int(e["id"]) > int(last_of_one) for e in replay)
    finally:
        again.close()


def test_a_write_through_a_second_process_reaches_a_subscriber_of_the_first(
    pair: tuple[Server, Server, str],
) -> None:
    first, second, token = pair
    events = Events(first, token, ME)
    try:
        note = _client(second, token).remember(ME, "my cat is called Mochi", scope="user")
        assert events.until(note.id)[-1]["data"]["version"] == note.version
    finally:
        events.close()


def test_a_quiet_stream_sends_heartbeats(pair: tuple[Server, Server, str]) -> None:
    first, _, token = pair
    events = Events(first, token, ME, {"Last-Event-ID": "999999999"})
    try:
        deadline = time.monotonic() + 10
        while len(events.comments) < 2 and time.monotonic() < deadline:
            events.comments.append(events.response.readline().decode().strip())
            events.comments = [c for c in events.comments if c.startswith(":")]
        assert ": heartbeat" in events.comments
    finally:
        events.close()


@pytest.mark.parametrize(
    ("ctx", "headers", "status"),
    [
        (RunContext.dm("hana", "discord:1", "discord:7"), {}, 403),
        (RunContext.dm(AGENT, "slack:1", "discord:7"), {}, 403),
        (ME, {"Last-Event-ID": "not-a-number"}, 422),
        (ME, {"Authorization": "Bearer nope"}, 401),
    ],
)
def test_events_check_the_token_and_envelope_like_every_route(
    pair: tuple[Server, Server, str], ctx: RunContext, headers: dict[str, str], status: int
) -> None:
    first, _, token = pair
    port = int(first.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = {"Authorization": f"Bearer {token}", "Remem-Run": json.dumps(ctx.to_json())}
    conn.request("GET", f"/v1/agents/{AGENT}/events", headers={**sent, **headers})
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    assert response.status == status, body
    if status == 403:
        assert body["rule"]


def test_the_stream_closes_its_subscription_when_the_client_goes(tmp_path: Path) -> None:
    from remem.app.subscription import LocalSubscription
    from remem.http.events import stream
    from remem.http.waits import Waiter

    mem = Memory.open(tmp_path / "data")
    sub = mem.subscribe(ME)
    assert isinstance(sub, LocalSubscription)
    polls, released = 0, []

    async def gone() -> bool:
        nonlocal polls
        polls += 1
        return polls >= 2

    async def still_signed_in() -> None:
        pass

    async def drain() -> list[bytes]:
        waiter = Waiter(sub, still_signed_in, lambda: released.append(True))
        return [chunk async for chunk in stream(waiter, gone, heartbeat=60)]

    chunks = anyio.run(drain)
    assert chunks[0].startswith(b": subscribed")
    assert sub.closed and released

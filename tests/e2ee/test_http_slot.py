"""The slot routes on the wire, against a real ``remem serve``: ``GET``/``PUT
/v1/agents/{agent}/dm-slot`` with ``If-Match``, ``409`` with the current slot, the
refusals with their rules, and a server that stores the blob as it was sent."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from http_server import Server, serve
from remem import RunContext

AGENT = "yuko"
PATH = f"/v1/agents/{AGENT}/dm-slot"
BLOB = "QUJD" * 12


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("slot") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def token(server: Server) -> str:
    return server.token("--name", "dm-bot", "--agent", AGENT, "--channel", "*", "--actor", "*")


def call(
    server: Server, verb: str, token: str, ctx: RunContext, body: Any = None, **headers: str
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=30)
    sent = {"Authorization": f"Bearer {token}", "Remem-Run": json.dumps(ctx.to_json())}
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    raw = None if body is None else json.dumps(body).encode()
    if raw is not None:
        sent["Content-Type"] = "application/json"
    conn.request(verb, PATH, body=raw, headers=sent)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, json.loads(data) if data else None


def test_get_and_put_a_slot_over_http(server: Server, token: str) -> None:
    ctx = RunContext.dm(AGENT, "discord:dm-wire", "discord:wire")
    assert call(server, "GET", token, ctx) == (
        200,
        {"thread": "discord:dm-wire", "version": 0, "blob": None},
    )
    status, body = call(server, "PUT", token, ctx, {"blob": BLOB})
    assert status == 422 and "If-Match" in body["message"]
    status, body = call(server, "PUT", token, ctx, {"blob": BLOB}, If_Match='"0"')
    assert (status, body) == (200, {"thread": "discord:dm-wire", "version": 1, "blob": BLOB})
    status, body = call(server, "PUT", token, ctx, {"blob": BLOB[::-1]}, If_Match='"0"')
    assert status == 409 and body["code"] == "conflict"
    assert body["current"] == {"thread": "discord:dm-wire", "version": 1, "blob": BLOB}
    status, body = call(server, "PUT", token, ctx, {"blob": "not base64url!" * 4}, If_Match='"1"')
    assert status == 422
    status, body = call(server, "PUT", token, ctx, {"blob": "A" * 70_000}, If_Match='"1"')
    assert status == 422


def test_the_slot_is_refused_outside_its_dm(server: Server, token: str) -> None:
    """A group run, even in a channel of the same id (whose kind is recorded as a DM:
    rule ``channel_kind``), or in another channel: 403 with the rule that decided."""
    for channel, rule in (
        ("discord:dm-wire", "channel_kind"),
        ("discord:general", "dm_slot_thread"),
    ):
        ctx = RunContext.group(AGENT, channel, "discord:wire")
        status, body = call(server, "GET", token, ctx)
        assert (status, body["code"], body["rule"]) == (403, "denied", rule)
        status, body = call(server, "PUT", token, ctx, {"blob": BLOB}, If_Match='"1"')
        assert (status, body["rule"]) == (403, rule)

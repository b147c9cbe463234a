"""Small leaks and confusions of a real ``remem serve``, each through the surface it was
found on: a policy value told by ``POST /status``, a member link replacing another
member's session, the ``Host`` header echoed by ``/mcp``, denials logged without the
token's name, and a member cookie accepted on ``/mcp``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, request, serve
from remem import Memory, RunContext
from remem.schema import to_json

AGENT = "yuko"
PUBLIC = "https://memory.example.com"
GENERAL = "discord:general"
ALICE = RunContext.dm(AGENT, "discord:dm-alice", "discord:alice")
BOB = RunContext.dm(AGENT, "discord:dm-bob", "discord:bob")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("leaks") / "data", "--public-url", PUBLIC) as srv:
        yield srv


@pytest.fixture(scope="module")
def host_token(server: Server) -> str:
    """A member-capped host of yuko's discord channels, named ``leaky-bot``."""
    return server.token(
        "--name", "leaky-bot", "--agent", AGENT, "--channel", "discord:*", "--actor", "*"
    )


@pytest.fixture(scope="module")
def host(server: Server, host_token: str) -> Iterator[Memory]:
    with Memory.open(server.url, token=host_token) as mem:
        yield mem


def signed_in(server: Server, token: str, cookie: str | None = None, **body: Any) -> Any:
    """``POST /pad/session`` as the member page sends it (with ``cookie``, if any)."""
    headers = {"Origin": server.url, "Remem_Pad": "1"}
    if cookie:
        headers["Cookie"] = cookie
    return request(server, "POST", "/pad/session", {"token": token, **body}, **headers)


def cookie_of(headers: dict[str, str]) -> str:
    return headers["set-cookie"].split(";")[0]


def envelope(ctx: RunContext) -> str:
    return json.dumps(ctx.to_json())


def access_lines(server: Server) -> list[dict[str, Any]]:
    lines = Path(server.log).read_text().splitlines()
    return [json.loads(line) for line in lines if line.startswith('{"method"')]


def test_status_of_a_crafted_note_does_not_tell_a_refused_channels_retention(
    server: Server, host: Memory, host_token: str
) -> None:
    owner_token = server.token("--name", "status-owner", "--owner")
    with Memory.open(server.url, token=owner_token) as owner:
        owner.set_channel_policy(RunContext.owner(AGENT), GENERAL, retention_days=3)
    note = host.remember(ALICE, "Prefers tea.", scope="user")
    auth = {"Authorization": f"Bearer {host_token}", "Remem_Run": envelope(ALICE)}
    policy = request(server, "GET", f"/v1/agents/{AGENT}/channels/{GENERAL}/policy", **auth)
    assert policy[0] == 403  # Alice's DM run may not read #general's policy ...
    crafted = to_json(note)
    crafted.update(scope="channel", scope_id=GENERAL, said_at="2030-01-01T00:00:00Z")
    for now in ("2030-01-03T00:00:00Z", "2030-01-05T00:00:00Z"):
        # ... so whether a note of #general said 2 or 4 days ago has expired is hers
        # to learn neither: one answer for both, the policy route's.
        status, _, body = request(
            server, "POST", f"/v1/agents/{AGENT}/status", {"note": crafted, "now": now}, **auth
        )
        assert status == 403 and body["code"] == "denied", (now, body)
    # Her own notes, and notes of her own channel, still answer.
    status, _, body = request(
        server, "POST", f"/v1/agents/{AGENT}/status", {"note": to_json(note)}, **auth
    )
    assert (status, body) == (200, "active")
    crafted.update(scope_id=ALICE.channel)
    status, _, body = request(
        server, "POST", f"/v1/agents/{AGENT}/status", {"note": crafted}, **auth
    )
    assert (status, body) == (200, "active")


def test_another_members_link_does_not_silently_replace_the_session(
    server: Server, host: Memory
) -> None:
    status, headers, _ = signed_in(server, host.member_link(ALICE).token)
    assert status == 201
    alice = cookie_of(headers)
    bobs_link = host.member_link(BOB).token
    status, headers, body = signed_in(server, bobs_link, alice)
    assert status == 409, body
    assert "set-cookie" not in headers
    assert body["code"] == "conflict" and "replace" in body["message"]
    assert body["signed_in"]["member"] == ALICE.actor and body["link"]["member"] == BOB.actor
    # Nothing changed: Alice is still signed in, and the link is still unused.
    assert request(server, "GET", "/pad/session", Cookie=alice)[2]["member"] == ALICE.actor
    status, headers, body = signed_in(server, bobs_link, alice, replace=True)
    assert (status, body["member"]) == (201, BOB.actor)
    bob = cookie_of(headers)
    assert request(server, "GET", "/pad/session", Cookie=bob)[2]["member"] == BOB.actor
    assert request(server, "GET", "/pad/session", Cookie=alice)[0] == 401  # replaced: ended
    # A link of the member signed in already needs no question; a bad flag is a 422.
    assert signed_in(server, host.member_link(BOB).token, bob)[0] == 201
    assert signed_in(server, host.member_link(BOB).token, bob, replace="yes")[0] == 422


def test_a_link_to_another_agent_for_the_same_member_id_does_not_silently_switch(
    server: Server, host: Memory
) -> None:
    """Another agent's host can mint a link for the same member id: signed in to yuko,
    the person would type into that agent's memory. A session is one member of one
    agent in one DM: a link naming anything else asks first."""
    status, headers, _ = signed_in(server, host.member_link(ALICE).token)
    assert status == 201
    alice = cookie_of(headers)
    other = server.token("--name", "other-bot", "--agent", "otherbot", "--actor", "*",
                         "--channel", "*")  # fmt: skip
    with Memory.open(server.url, token=other) as elsewhere:
        lure = elsewhere.member_link(RunContext.dm("otherbot", ALICE.channel, ALICE.actor))
    status, headers, body = signed_in(server, lure.token, alice)
    assert status == 409, body
    assert "set-cookie" not in headers
    assert body["signed_in"]["agent"] == AGENT and body["link"]["agent"] == "otherbot"
    assert request(server, "GET", "/pad/session", Cookie=alice)[2]["agent"] == AGENT


def test_mcp_names_the_public_url_whatever_the_host_header(server: Server) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    status, headers, _ = request(
        server, "POST", "/mcp", body, Host="evil.example", Content_Type="application/json"
    )
    assert status == 401
    metadata = f"{PUBLIC}/.well-known/oauth-protected-resource/mcp"
    assert headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
    status, _, document = request(
        server, "GET", "/.well-known/oauth-protected-resource/mcp", Host="evil.example"
    )
    assert (status, document["resource"]) == (200, f"{PUBLIC}/mcp")


def test_no_redirect_names_the_host_header(server: Server) -> None:
    """A path with a trailing slash was redirected to ``http://<Host header>/path``."""
    for path in ("/pad/", "/v1/agents/", "/mcp/", "/healthz/", "/v1/agents/yuko/notes/"):
        status, headers, body = request(server, "GET", path, Host="evil.example")
        assert "evil.example" not in json.dumps([headers, str(body)]), (path, status, headers)


def test_a_wildcard_bind_without_a_public_url_names_no_metadata(tmp_path: Path) -> None:
    with serve(tmp_path / "data", "--host", "0.0.0.0") as server:
        status, headers, _ = request(server, "POST", "/mcp", {}, Host="evil.example")
        assert (status, headers["www-authenticate"]) == (401, "Bearer")
        path = "/.well-known/oauth-protected-resource/mcp"
        status, _, body = request(server, "GET", path, Host="evil.example")
        assert status == 404 and "--public-url" in body["message"]
        assert "evil.example" not in json.dumps(body)
        assert "--public-url" in Path(server.log).read_text()  # warned at start


def test_denials_after_authentication_log_who_was_refused(
    server: Server, host: Memory, host_token: str
) -> None:
    auth = {"Authorization": f"Bearer {host_token}", "Remem_Run": envelope(ALICE)}
    foreign = RunContext.dm("someone-else", "discord:dm-alice", "discord:alice")
    refused = [
        ("GET", f"/v1/agents/{AGENT}/channels/{GENERAL}/policy", auth),  # 403 by a rule
        ("GET", f"/v1/agents/{AGENT}/notes/note_nope", auth),  # 422: not an id
        ("GET", "/v1/agents/someone-else/notes", {**auth, "Remem_Run": envelope(foreign)}),
        ("GET", "/v1/agents/someone-else/events", {**auth, "Remem_Run": envelope(foreign)}),
    ]
    for method, path, headers in refused:
        assert request(server, method, path, **headers)[0] in (403, 404, 422), path
    assert request(server, "GET", "/v1/agents", Authorization=f"Bearer {host_token}")[0] == 200
    _, headers, _ = signed_in(server, host.member_link(ALICE).token)
    cookie = cookie_of(headers)
    path = f"/v1/agents/{AGENT}/channels/{GENERAL}/policy"
    assert request(server, "GET", path, Cookie=cookie)[0] == 403
    assert request(server, "GET", path, Authorization="Bearer rmm_nobody_" + "x" * 43)[0] == 401
    lines = access_lines(server)
    failed = [line for line in lines if line["status"] >= 400]
    named = {(line["route"], line["status"], line["token"]) for line in failed}
    policy = "/v1/agents/{agent}/channels/{channel}/policy"
    assert (policy, 403, "leaky-bot") in named
    assert ("/v1/agents/{agent}/notes/{note_id}", 422, "leaky-bot") in named
    assert ("/v1/agents/{agent}/notes", 403, "leaky-bot") in named
    assert ("/v1/agents/{agent}/events", 403, "leaky-bot") in named
    assert (policy, 403, "member-session") in named
    assert (policy, 401, "-") in named  # no principal: nobody to name
    assert any(line["route"] == "/v1/agents" and line["token"] == "leaky-bot" for line in lines)
    # (A link exchange refused for its body before any session is known names nobody.)
    v1 = [line for line in failed if line["route"].startswith("/v1")]
    assert all(line["token"] != "-" for line in v1 if line["status"] != 401)
    assert host_token not in Path(server.log).read_text()


def test_a_member_cookie_is_no_credential_on_mcp(server: Server, host: Memory) -> None:
    _, headers, _ = signed_in(server, host.member_link(ALICE).token)
    cookie = cookie_of(headers)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    # Even with the page's own Origin and header, which the cookie's routes require.
    status, _, answer = request(
        server,
        "POST",
        "/mcp",
        body,
        Cookie=cookie,
        Origin=server.url,
        Remem_Pad="1",
        Content_Type="application/json",
        Accept="application/json, text/event-stream",
    )
    assert status == 401, answer
    assert answer["code"] == "unauthenticated" and "host token" in answer["message"]


def test_mcp_requests_log_the_token_that_asked(server: Server, host_token: str) -> None:
    foreign = RunContext.dm("someone-else", "discord:dm-alice", "discord:alice")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {"_meta": {"remem/run": foreign.to_json()}},
    }
    headers = {"Content_Type": "application/json", "Accept": "application/json"}
    auth = {"Authorization": f"Bearer {host_token}", **headers}
    status, _, answer = request(server, "POST", "/mcp", body, **auth)
    assert status == 200 and answer["error"]["data"]["code"] == "denied", answer  # refused
    assert request(server, "POST", "/mcp", body, **headers)[0] == 401
    lines = [line for line in access_lines(server) if line["route"] == "/mcp"]
    assert {(line["method"], line["status"], line["token"]) for line in lines} >= {
        ("POST", 200, "leaky-bot"),
        ("POST", 401, "-"),
    }


def test_member_session_requests_log_the_session(server: Server, host: Memory) -> None:
    _, headers, _ = signed_in(server, host.member_link(ALICE).token)
    cookie = cookie_of(headers)
    assert request(server, "GET", "/pad/session", Cookie=cookie)[0] == 200
    assert signed_in(server, host.member_link(ALICE).token, cookie, replace="yes")[0] == 422
    # Another member's link while Alice is signed in: refused after her session was known.
    assert signed_in(server, host.member_link(BOB).token, cookie)[0] == 409
    assert request(server, "DELETE", "/pad/session", Cookie=cookie)[0] == 401  # no Origin
    lines = [line for line in access_lines(server) if line["route"] == "/pad/session"]
    assert {(line["method"], line["status"], line["token"]) for line in lines} >= {
        ("POST", 201, "member-session"),
        ("GET", 200, "member-session"),
        ("POST", 422, "member-session"),
        ("POST", 409, "member-session"),
        ("DELETE", 401, "-"),
    }

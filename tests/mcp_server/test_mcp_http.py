"""MCP over streamable HTTP at /mcp of a running ``remem serve``, with the real MCP client:
the token authenticates, the envelope rides in ``_meta["remem/run"]`` of every request
and is checked against the token's grants."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from http_server import Server, serve
from remem import RunContext

AGENT = "yuko"
BOB, CAROL = "discord:bob", "discord:carol"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("mcp") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def token(server: Server) -> str:
    """A host that may speak for discord DMs of any member of yuko."""
    return server.token(
        "--name", "mcp-bot", "--agent", AGENT, "--channel", "discord:*", "--actor", "*"
    )


def envelope(ctx: RunContext) -> dict[str, Any]:
    return {"remem/run": ctx.to_json()}


def client(server: Server, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(server.url + "/mcp", http_client=http))


def run(coro: Any) -> Any:
    return anyio.run(lambda: coro)


def test_tools_over_http_act_in_the_envelope_of_each_request(server: Server, token: str) -> None:
    bobs = RunContext.dm(AGENT, "discord:dm-bob", BOB)
    carols = RunContext.dm(AGENT, "discord:dm-carol", CAROL)
    group = RunContext.group(AGENT, "discord:general", BOB)

    async def go() -> None:
        async with client(server, token) as mcp:
            group_tools = await mcp.list_tools(meta=envelope(group))
            assert [t.name for t in group_tools.tools] == ["recall"]
            # Listed last in Bob's envelope: the client checks a call against its last list.
            listed = await mcp.list_tools(meta=envelope(bobs))
            assert [t.name for t in listed.tools] == ["remember", "forget", "recall"]
            for tool in listed.tools:
                assert not {"user_id", "scope_id", "agent", "channel"} & set(
                    tool.input_schema["properties"]
                )
            said = await mcp.call_tool(
                "remember", {"fact": "Prefers green tea."}, meta=envelope(bobs)
            )
            assert not said.is_error and said.structured_content is not None
            (written,) = said.structured_content["writes"]
            assert written["note"]["scope_id"] == BOB
            assert written["note"]["source"]["via"] == "tool"
            assert said.structured_content["notices"] == [written["receipt"]]
            smuggled = await mcp.call_tool(
                "recall", {"query": "tea", "user_id": BOB}, meta=envelope(carols)
            )
            assert smuggled.is_error and smuggled.structured_content["code"] == "identity_argument"
            seen = await mcp.call_tool("recall", {"query": "green tea"}, meta=envelope(carols))
            assert not seen.is_error and "green tea" not in seen.content[0].text
            own = await mcp.call_tool("recall", {"query": "green tea"}, meta=envelope(bobs))
            assert "Prefers green tea." in own.content[0].text
            prompt = await mcp.get_prompt("memory", {"message": "tea"}, meta=envelope(bobs))
            assert "Prefers green tea." in prompt.messages[0].content.text

    anyio.run(go)


def test_every_request_needs_an_envelope_the_token_covers(server: Server, token: str) -> None:
    other_agent = RunContext.dm("someone-else", "discord:dm-bob", BOB)
    slack = RunContext.dm(AGENT, "slack:dm-bob", BOB)

    async def go() -> None:
        async with client(server, token) as mcp:
            for request in (mcp.list_tools(), mcp.list_prompts()):
                with pytest.raises(MCPError, match="_meta") as missing:
                    await request
                assert missing.value.code == -32602
            for outside in (other_agent, slack):
                with pytest.raises(MCPError) as denied:
                    await mcp.call_tool("recall", {}, meta=envelope(outside))
                assert denied.value.code == -32001, denied.value.message
            with pytest.raises(MCPError):
                await mcp.list_tools(meta={"remem/run": {"agent": AGENT}})

    anyio.run(go)


@pytest.mark.parametrize("header", [None, "Bearer rmm_nobody_" + "x" * 43, "Basic abc"])
def test_a_missing_or_bad_token_is_401_with_the_resource_metadata(
    server: Server, header: str | None
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    request = urllib.request.Request(
        server.url + "/mcp",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    if header is not None:
        request.add_header("Authorization", header)
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(request, timeout=30)
    assert failed.value.code == 401
    challenge = failed.value.headers["WWW-Authenticate"]
    assert (
        challenge.startswith('Bearer resource_metadata="')
        and "oauth-protected-resource" in challenge
    )
    url = challenge.split('"')[1]
    with urllib.request.urlopen(url, timeout=30) as meta:
        document = json.loads(meta.read())
    assert document["resource"] == server.url + "/mcp"


@pytest.mark.parametrize(
    ("header", "status"),
    [({"Host": "evil.example:80"}, 421), ({"Origin": "http://evil.example"}, 403)],
)
def test_a_foreign_host_or_origin_is_refused(
    server: Server, token: str, header: dict[str, str], status: int
) -> None:
    """DNS rebinding protection: only the allowed hosts and origins reach the transport."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    request = urllib.request.Request(
        server.url + "/mcp",
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            **header,
        },
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as failed:
        urllib.request.urlopen(request, timeout=30)
    assert failed.value.code == status


def test_get_opens_no_stream(server: Server, token: str) -> None:
    # A stateless service has nothing to send on a GET stream: one held open would escape
    # the per-principal count of waits and streams, and outlive a revoked token.
    request = urllib.request.Request(
        server.url + "/mcp",
        headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=3)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "POST"
    assert json.loads(refused.value.read())["error"]["code"] == -32600

"""The MCP server with the real MCP client: in memory (the server object in this process)
and over stdio (``remem mcp`` as a subprocess). Identity is fixed at launch: no
argument and no ``_meta`` reaches another member's notes."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from remem import InvalidInput, Memory, RunContext
from remem.mcp.stdio import fixed_server, launch_envelope
from tools.test_tool_isolation import OTHER_TEXTS, random_call

AGENT = "yuko"
BOB, CAROL = "discord:bob", "discord:carol"
BOB_DM, CAROL_DM = "discord:dm-bob", "discord:dm-carol"


def test_in_memory_the_tools_act_for_the_launch_envelope_only(mem: Memory) -> None:
    carols = [
        mem.remember(RunContext.dm(AGENT, CAROL_DM, CAROL), t, scope="user") for t in OTHER_TEXTS
    ]
    others = {n.id for n in carols}
    ctx = launch_envelope(AGENT, dm=BOB_DM, user=BOB)
    rng = random.Random(41)
    outcomes: dict[bool, int] = {True: 0, False: 0}

    async def go() -> None:
        async with Client(fixed_server(mem, ctx)) as mcp:
            listed = await mcp.list_tools()
            assert [t.name for t in listed.tools] == ["remember", "forget", "recall"]
            said = await mcp.call_tool("remember", {"fact": "Prefers green tea."})
            assert not said.is_error and said.content[0].text.startswith("remembered")
            assert said.structured_content["writes"][0]["note"]["scope_id"] == BOB
            carol_meta = {"remem/run": RunContext.dm(AGENT, CAROL_DM, CAROL).to_json()}
            seen = await mcp.call_tool("recall", {"query": "Lisbon"}, meta=carol_meta)
            assert not any(t in seen.content[0].text for t in OTHER_TEXTS)
            prompt = await mcp.get_prompt("memory", {"message": "tea"})
            assert "Prefers green tea." in prompt.messages[0].content.text
            for _ in range(1_000):  # random calls naming, quoting and numbering Carol's notes
                tool, args = random_call(rng, carols)
                if tool == "remember_all":
                    tool = "remember"
                result = await mcp.call_tool(tool, args if isinstance(args, dict) else {"x": args})
                outcomes[bool(result.is_error)] += 1
                for written in result.structured_content["writes"]:
                    assert written["note"]["scope_id"] in (BOB, BOB_DM)
                if tool == "recall" and not result.is_error:
                    shown = {
                        i for i, _ in mem.explain(RunContext.owner(AGENT), ctx.run_id).selected
                    }
                    assert not shown & others
            with pytest.raises(MCPError):
                await mcp.get_prompt("other", {})

    anyio.run(go)
    owner = RunContext.owner(AGENT)
    assert [(n.version, n.status.value) for n in (mem.get(owner, c.id) for c in carols)] == [
        (1, "active")
    ] * len(carols)
    assert outcomes[True] > 100 and outcomes[False] > 100, outcomes


def test_an_owner_server_offers_recall_only(mem: Memory) -> None:
    async def go() -> None:
        async with Client(fixed_server(mem, launch_envelope(AGENT, owner=True))) as mcp:
            assert [t.name for t in (await mcp.list_tools()).tools] == ["recall"]

    anyio.run(go)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"dm": BOB_DM}, {"user": BOB}, {"owner": True, "dm": BOB_DM, "user": BOB}],
)
def test_a_launch_without_a_whole_envelope_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        launch_envelope(AGENT, **kwargs)


def stdio(data: Path, *identity: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "remem.cli", "mcp", "--data", str(data), "--agent", AGENT, *identity],
        env={**os.environ, "REMEM_EMBEDDINGS": "0"},
    )
    return Client(params)


def test_over_stdio_a_desktop_client_gets_the_launch_identity(data_dir: Path) -> None:
    with Memory.open(data_dir, embedder=None) as mem:
        carols = mem.remember(RunContext.dm(AGENT, CAROL_DM, CAROL), "Is moving to Lisbon.")

    async def go() -> None:
        async with stdio(data_dir, "--dm", BOB_DM, "--user", BOB) as mcp:
            listed = await mcp.list_tools()
            assert [t.name for t in listed.tools] == ["remember", "forget", "recall"]
            carol_meta = {"remem/run": RunContext.dm(AGENT, CAROL_DM, CAROL).to_json()}
            said = await mcp.call_tool("remember", {"fact": "Prefers green tea."}, meta=carol_meta)
            assert not said.is_error and said.structured_content["notices"]
            smuggled = await mcp.call_tool("forget", {"quote": "Lisbon", "user_id": CAROL})
            assert smuggled.is_error and smuggled.structured_content["code"] == "identity_argument"
            by_quote = await mcp.call_tool("forget", {"quote": "Lisbon"})
            assert by_quote.is_error and by_quote.structured_content["code"] == "not_found"
            seen = await mcp.call_tool("recall", {"query": "Lisbon"})
            assert "Lisbon" not in seen.content[0].text
        async with stdio(data_dir, "--owner") as mcp:
            owner_view = await mcp.call_tool("recall", {"query": "Lisbon moving"})
            assert "Is moving to Lisbon." in owner_view.content[0].text

    anyio.run(go)
    with Memory.open(data_dir, embedder=None) as mem:
        owner = RunContext.owner(AGENT)
        notes = {n.text: n for n in mem.list(owner)}
        assert notes["Prefers green tea."].scope_id == BOB  # Bob's, though _meta named Carol
        assert notes["Prefers green tea."].source.via == "tool"
        assert mem.get(owner, carols.id).status.value == "active"


def test_remem_mcp_without_an_identity_exits_with_one_clear_line(data_dir: Path) -> None:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "remem.cli", "mcp", "--data", str(data_dir), "--agent", AGENT],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2 and "--dm CHANNEL --user USER" in out.stderr
    assert "Traceback" not in out.stderr

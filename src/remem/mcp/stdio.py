"""The MCP server over stdio, for a desktop client: ``remem mcp``.

The envelope is fixed when the server is launched (a DM: agent, DM channel and member;
or the owner's own tooling) and holds for every request: no request, argument or
``_meta`` can change whose memory the tools touch. The whole process is one run (one
``run_id``), so ``forget`` takes the numbers of the last memory block this server
showed, and ``Memory.writes`` of that run lists what the conversation wrote.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from remem.context import RunContext
from remem.errors import InvalidInput
from remem.mcp.server import build_server
from remem.service import Memory


def launch_envelope(
    agent: str, *, dm: str | None = None, user: str | None = None, owner: bool = False
) -> RunContext:
    """The one envelope a stdio server acts in (``InvalidInput`` for an incomplete one)."""
    if owner:
        if dm is not None or user is not None:
            raise InvalidInput("--owner runs as the owner: leave out --dm and --user")
        return RunContext.owner(agent)
    if dm is None or user is None:
        raise InvalidInput(
            "name the conversation the server acts in: --dm CHANNEL --user USER (or --owner)"
        )
    return RunContext.dm(agent, dm, user)


def fixed_server(mem: Memory, ctx: RunContext) -> Server[Any]:
    """The MCP server whose every request acts in ``ctx`` on ``mem``, whatever it says."""
    return build_server(lambda _request: (ctx, mem))


def serve_stdio(mem: Memory, ctx: RunContext) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    server = fixed_server(mem, ctx)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


__all__ = ["fixed_server", "launch_envelope", "serve_stdio"]

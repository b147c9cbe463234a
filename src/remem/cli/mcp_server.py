"""``remem mcp``: the MCP server over stdio for a desktop client (needs remem[mcp])."""

from __future__ import annotations

import click

from remem.cli.main import Ctx, handle_errors, main, pass_ctx


@main.command("mcp")
@click.option("--data", "data_opt", metavar="DIR", help="Data directory (default: --data above).")
@click.option("--agent", required=True, help="The agent whose memory this is.")
@click.option("--dm", "dm", metavar="CHANNEL", help="The DM channel the server acts in.")
@click.option("--user", metavar="USER", help="The member of that DM.")
@click.option("--owner", is_flag=True, help="Act as the owner (recall only: inspection).")
@pass_ctx
@handle_errors
def mcp_cmd(
    obj: Ctx, data_opt: str | None, agent: str, dm: str | None, user: str | None, owner: bool
) -> None:
    """Serve memory tools over MCP on stdin/stdout, for a desktop client.

    Whose memory the tools touch is fixed here, at launch: a DM (--dm and --user:
    remember, forget and recall for that member) or --owner (recall only). No tool
    argument can change it. The server is one run: forget takes the numbers of the last
    memory block it showed.

    \b
    Example:
      remem mcp --data ~/remem-data --agent yuko --dm discord:456 --user discord:123
    """
    from remem.mcp import require_sdk

    require_sdk()
    from remem.mcp.stdio import launch_envelope, serve_stdio

    ctx = launch_envelope(agent, dm=dm, user=user, owner=owner)
    if data_opt:
        obj.data = data_opt
    serve_stdio(obj.mem, ctx)

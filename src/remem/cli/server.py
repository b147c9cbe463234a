"""CLI commands of the HTTP service: ``remem serve`` and ``remem tokens create|ls|revoke``."""

from __future__ import annotations

import json
import os

import click

from remem.cli.main import Ctx, handle_errors, main, pass_ctx
from remem.errors import InvalidInput
from remem.http import tokens


@main.group("tokens")
def tokens_group() -> None:
    """Host tokens for `remem serve` (only their hashes are stored).

    \b
    Example:
      remem tokens create --name discord-bot --agent yuko --channel 'discord:*' --actor '*'
    """


@tokens_group.command("create")
@click.option("--name", required=True, help="A name for the host (letters, digits, '-').")
@click.option("--agent", "agents", multiple=True, help="Agent pattern ('*' wildcard); repeat.")
@click.option("--channel", "channels", multiple=True, help="Channel pattern; repeat.")
@click.option("--actor", "actors", multiple=True, help="Actor (user id) pattern; repeat.")
@click.option("--max-role", type=click.Choice(["admin", "member"]), default="member")
@click.option("--system", default="", help="System principals it may run as: cron,sop,webhook.")
@click.option(
    "--kinds",
    default="",
    help="Run kinds it may assume: dm,group,task,agent_only,knowledge,system,owner "
    "(default: every kind).",
)
@click.option("--owner", is_flag=True, help="An owner token: every grant (no patterns).")
@click.option("--json", "as_json", is_flag=True, help="Print {name, token} as JSON.")
@pass_ctx
@handle_errors
def tokens_create(
    obj: Ctx,
    name: str,
    agents: tuple[str, ...],
    channels: tuple[str, ...],
    actors: tuple[str, ...],
    max_role: str,
    system: str,
    kinds: str,
    owner: bool,
    as_json: bool,
) -> None:
    """Create a token and print it once (it is not stored: keep it). Pattern options
    repeat; '*' is the only wildcard and '*' alone means all.

    \b
    Examples:
      remem tokens create --name discord-bot --agent yuko --channel 'discord:*' --actor '*'
      remem tokens create --name dm-bot --agent yuko --channel 'dm:*' --actor '*' --kinds dm
    """
    token = tokens.create_token(
        obj.mem.backend,
        name,
        agents=agents,
        channels=channels,
        actors=actors,
        max_role=max_role,
        system=[s.strip() for s in system.split(",") if s.strip()],
        owner=owner,
        kinds=[k.strip() for k in kinds.split(",") if k.strip()],
    )
    if as_json:
        click.echo(json.dumps({"name": name, "token": token}))
    else:
        click.echo(token)
        click.echo("(shown once: only its hash is stored)", err=True)


@tokens_group.command("ls")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@handle_errors
def tokens_ls(obj: Ctx, as_json: bool) -> None:
    """List tokens and their grants (never the tokens).

    \b
    Example:
      remem tokens ls --json
    """
    infos = tokens.list_tokens(obj.mem.backend)
    if as_json:
        click.echo(json.dumps([i.to_json() for i in infos], indent=2))
        return
    for i in infos:
        grants = (
            "owner (every grant)"
            if i.owner
            else (
                f"agents={','.join(i.agents)} channels={','.join(i.channels) or '-'} "
                f"actors={','.join(i.actors) or '-'} max_role={i.max_role} "
                f"system={','.join(i.system) or '-'} kinds={','.join(i.kinds) or 'all'}"
            )
        )
        click.echo(f"{i.name:<20} {i.created_at}  {grants}")


@tokens_group.command("revoke")
@click.argument("name")
@pass_ctx
@handle_errors
def tokens_revoke(obj: Ctx, name: str) -> None:
    """Revoke a token: the next request with it gets 401.

    \b
    Example:
      remem tokens revoke discord-bot
    """
    tokens.revoke_token(obj.mem.backend, name)
    click.echo(f"revoked {name}")


@main.command("serve")
@click.option("--data", "data_opt", metavar="DIR", help="Data directory (default: --data above).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8700, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--public-url",
    metavar="URL",
    envvar="REMEM_SERVE_PUBLIC_URL",
    help="The address clients reach this service at, for member links and MCP's metadata "
    "(default: http://HOST:PORT; none for a wildcard --host such as 0.0.0.0).",
)
@click.option(
    "--link-minutes",
    default=15,
    show_default=True,
    type=click.IntRange(1, 1440),
    help="How long a member link works.",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    metavar="ORIGIN",
    help="A browser origin allowed to call the API with a token (repeatable; default none).",
)
@click.option(
    "--max-waits-per-principal",
    default=8,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Long polls and event streams one token or member session may hold at once in "
    "each process (past it: 429 with Retry-After).",
)
@click.option(
    "--stream-max-seconds",
    default=3600,
    show_default=True,
    type=click.IntRange(1, 86_400),
    help="An event stream ends after this long; clients resume with Last-Event-ID.",
)
@click.option(
    "--max-connections",
    default=1000,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="Open connections a process keeps; past it new ones are closed at once.",
)
@click.option(
    "--header-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="Seconds a request's line and headers may take to arrive before the connection is closed.",
)
@click.option(
    "--http-parser",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "httptools", "h11"]),
    help="uvicorn's HTTP/1.1 parser (auto: httptools when installed); the limits hold for either.",
)
@click.option("--test-clock", is_flag=True, hidden=True)
@pass_ctx
@handle_errors
def serve_cmd(
    obj: Ctx,
    data_opt: str | None,
    host: str,
    port: int,
    workers: int,
    public_url: str | None,
    link_minutes: int,
    cors_origins: tuple[str, ...],
    max_waits_per_principal: int,
    stream_max_seconds: int,
    max_connections: int,
    header_timeout: float,
    http_parser: str,
    test_clock: bool,
) -> None:
    """Serve every governed action over HTTP (needs remem[server]).

    \b
    Example:
      remem serve --data ./remem-data --port 8700 --public-url https://memory.example.com
    """
    data = data_opt or obj.data
    if not data:
        raise InvalidInput("no data directory: pass --data DIR or set REMEM_DATA")
    try:
        import uvicorn
    except ImportError:
        raise InvalidInput(
            "remem serve needs the server extra: pip install 'remem[server]'"
        ) from None
    _set_public_url(public_url, host, port)
    # A URL (postgresql://, jsonl://) is passed as it is; a path is made absolute.
    os.environ["REMEM_SERVE_DATA"] = data if "://" in data else os.path.abspath(data)
    os.environ["REMEM_SERVE_LINK_MINUTES"] = str(link_minutes)
    from remem.http.app import check_origin  # a bad origin is an error now
    from remem.http.protocols import protocol_for

    os.environ["REMEM_SERVE_CORS_ORIGINS"] = " ".join(check_origin(o) for o in cors_origins)
    os.environ["REMEM_SERVE_MAX_WAITS"] = str(max_waits_per_principal)
    os.environ["REMEM_SERVE_STREAM_MAX_SECONDS"] = str(stream_max_seconds)
    protocol = protocol_for(http_parser)  # the request-head limits hold for either parser
    os.environ["REMEM_SERVE_MAX_CONNECTIONS"] = str(max_connections)
    os.environ["REMEM_SERVE_HEADER_TIMEOUT"] = str(header_timeout)
    if test_clock:  # tests only: clients set the time with a header
        os.environ["REMEM_SERVE_TEST_CLOCK"] = "1"
        click.echo("remem serve: --test-clock: clients set the time (tests only)", err=True)
    uvicorn.run(
        "remem.http.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        http=protocol,
        ws="none",  # no route takes a WebSocket; an upgrade would skip remem.http.bounds
        access_log=False,
        server_header=False,
        log_level="warning",
    )


def _set_public_url(public_url: str | None, host: str, port: int) -> None:
    """``REMEM_SERVE_PUBLIC_URL``: the given address (checked now, not at the first link),
    else the bound one; none for a wildcard bind, with a warning."""
    if public_url:
        from remem.app.member_links import LinkSettings

        LinkSettings(public_url)
    public_url = public_url or bound_url(host, port)
    if public_url:
        os.environ["REMEM_SERVE_PUBLIC_URL"] = public_url
        return
    os.environ.pop("REMEM_SERVE_PUBLIC_URL", None)
    click.echo(
        f"remem serve: warning: --host {host} binds every address and no --public-url "
        "is set: member links are relative (/pad#token=…) and /mcp's 401 names no "
        "resource metadata. Pass --public-url https://<the address clients use>.",
        err=True,
    )


def bound_url(host: str, port: int) -> str | None:
    """The service's address from its bind: ``http://HOST:PORT`` for one address (a
    loopback one, or a named host), ``None`` for a wildcard bind (``0.0.0.0``, ``::``) or
    an unknown port (0), which name no address a client could use."""
    bare = host.strip("[]")
    if port == 0 or bare in ("", "0.0.0.0", "::", "0:0:0:0:0:0:0:0"):
        return None
    return f"http://[{bare}]:{port}" if ":" in bare else f"http://{bare}:{port}"


@main.command("quickstart")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8700, show_default=True, type=click.IntRange(1, 65535))
@click.option("--keep", is_flag=True, help="Keep the data directory and print its path.")
@handle_errors
def quickstart_cmd(host: str, port: int, keep: bool) -> None:
    """The service's first run (`make run`): serve a temporary data directory, run the
    scripted demo through the HTTP client, print a curl line, serve until Ctrl-C.

    \b
    Example:
      remem quickstart --port 8700
    """
    from remem.cli.quickstart import run_quickstart

    run_quickstart(host=host, port=port, keep=keep)

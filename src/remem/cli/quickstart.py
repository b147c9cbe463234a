"""``remem quickstart`` (``make run``): the service's first run.

It makes a temporary data directory, creates a demo host token there (owner, every
grant), starts ``remem serve`` on it (the embedded default store) as a child process,
runs the scripted demo (:mod:`remem.demo`) through the HTTP client
(``Memory.open(url, token=...)``), prints a ``curl`` line to try against the running
service, and keeps serving until Ctrl-C; then it stops the server and removes the
directory (unless ``keep``).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from remem.cli.serving import stop, wait_healthy
from remem.context import RunContext
from remem.demo import AGENT, STEPS
from remem.errors import StoreError
from remem.http.tokens import create_token
from remem.service import Memory


def demo_token(root: Path) -> str:
    """A token for the demo: the owner and every envelope the scripted demo uses."""
    with Memory.open(root) as mem:
        return create_token(mem.backend, "demo", max_role="admin", owner=True)


def start_server(root: Path, host: str, port: int) -> subprocess.Popen[bytes]:
    """``remem serve`` on ``root`` as a child process, once it answers ``/healthz``."""
    command = [sys.executable, "-m", "remem.cli", "serve", "--data", str(root)]
    proc = subprocess.Popen([*command, "--host", host, "--port", str(port)])
    if not wait_healthy(f"http://{host}:{port}", proc):
        stop(proc)
        raise StoreError(f"remem serve did not start on {host}:{port} (is the port free?)")
    return proc


def curl_line(url: str, token: str) -> str:
    """A ``curl`` that lists the demo agent's notes as the owner."""
    envelope = json.dumps(RunContext.owner(AGENT).to_json(), separators=(",", ":"))
    return (
        f"curl -s -H {shlex.quote('Authorization: Bearer ' + token)} "
        f"-H {shlex.quote('Remem-Run: ' + envelope)} "
        f"{shlex.quote(url + f'/v1/agents/{AGENT}/notes?status=all')}"
    )


def run_quickstart(*, host: str = "127.0.0.1", port: int = 8700, keep: bool = False) -> None:
    root = Path(tempfile.mkdtemp(prefix="remem-quickstart-"))
    url = f"http://{host}:{port}"
    proc = None
    try:
        token = demo_token(root)
        proc = start_server(root, host, port)
        click.secho(f"remem serve on {url} (data: {root})", bold=True)
        click.echo("The scripted demo, through the HTTP client (Memory.open(url, token=...)):")
        with Memory.open(url, token=token) as remote:
            for step in STEPS:
                step(remote, root)
        click.echo()
        click.secho("The demo ran over HTTP. Try the service yourself:", bold=True)
        click.echo(f"  {curl_line(url, token)}")
        click.echo("Serving until Ctrl-C.", nl=True)
        sys.stdout.flush()
        while proc.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        click.echo("\nStopping.")
    finally:
        if proc is not None:
            stop(proc)
        if keep:
            click.echo(f"Data kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


__all__ = ["curl_line", "run_quickstart"]

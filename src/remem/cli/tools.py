"""CLI commands that show or mend the whole system: demo, repair (``remem doctor`` is
:mod:`remem.cli.doctor`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from remem.cli.main import Ctx, handle_errors, main, pass_ctx
from remem.core.text import display
from remem.errors import InvalidInput, StoreError
from remem.store.open import POSTGRES_SCHEMES
from remem.store.permissions import data_owner, find_exposed, fix_exposed
from remem.store.repair import cut_damage, find_damage


@main.command("demo")
@click.option("--keep", is_flag=True, help="Keep the demo's data directory and print its path.")
def demo_cmd(keep: bool) -> None:
    """Run a scripted multi-party scenario end to end in a temporary data directory.

    \b
    Example:
      remem demo
    """
    from remem.demo import run_demo

    run_demo(keep=keep)


@main.command("repair")
@click.option("--agent", help="The agent whose log is damaged.")
@click.option(
    "--permissions",
    is_flag=True,
    help="Make every file 0600 and every directory 0700, owned by the data directory's "
    "owner (remem.toml is left alone).",
)
@click.option("--yes", is_flag=True, help="Go ahead without asking for confirmation.")
@pass_ctx
@handle_errors
def repair_cmd(obj: Ctx, agent: str | None, permissions: bool, yes: bool) -> None:
    """Cut damaged lines out of an agent's log (--agent), or make the data readable by
    the service's user only (--permissions).

    --agent: a complete line of the log that fails its checksum or does not parse makes
    remem refuse the log. This lists such lines, asks for confirmation (unless --yes),
    saves them in memory.jsonl.damaged-<time>-<pid> next to the log (kept until you
    delete it), and replaces the log with a copy without them, under the writer lock.
    A valid record that ends a damaged line is kept. Nothing else is changed: the notes
    in the cut lines are lost unless you restore them from the saved file or a backup.

    --permissions: every file and directory of every agent (and the config records,
    the trash, and $REMEM_KEY_FILE when set) that group or others can reach gets mode
    0600 (files) or 0700 (directories); run as root, it also gives every path owned by
    another user to the data directory's owner. It lists them and asks first (unless
    --yes). remem.toml, the operator's file, is left alone. Run remem doctor afterwards.

    \b
    Examples:
      remem --data ./remem-data repair --agent yuko
      sudo remem --data /var/lib/remem repair --permissions --yes
    """
    if not obj.data:
        raise InvalidInput("no data directory: pass --data DIR or set REMEM_DATA")
    if not agent and not permissions:
        raise InvalidInput(
            "say what to repair: --agent NAME (cut damaged lines out of its log) or "
            "--permissions (make every file readable by the service's user only)"
        )
    if permissions:
        _repair_permissions(obj.data, yes)
    if agent:
        _repair_log(Path(obj.data).expanduser(), agent, yes)


def _repair_permissions(data: str, yes: bool) -> None:
    root = None if data.startswith(POSTGRES_SCHEMES) else Path(data).expanduser()
    key_file = os.environ.get("REMEM_KEY_FILE")
    if root is not None and not root.is_dir():
        raise StoreError(f"no data directory at {root}")
    try:
        found = find_exposed(root, (Path(key_file),) if key_file else ())
    except OSError as exc:
        raise StoreError(f"cannot read the permissions of {data}: {exc.strerror}") from None
    if not found:
        click.echo("every file is readable by the service's user only; nothing to do")
        return
    owner = data_owner(root) if root is not None else os.geteuid()
    for item in found:
        click.echo(display(item.describe(owner)))
    if not yes:
        click.confirm(
            f"Make these {len(found)} path(s) 0600 (files) or 0700 (directories)"
            + (" and give them to the data directory's owner" if os.geteuid() == 0 else "")
            + "?",
            abort=True,
        )
    left = fix_exposed(root, found)
    for line in left:
        click.echo(f"remem: warning: {display(line)}", err=True)
    click.echo(f"fixed {len(found) - len(left)} of {len(found)} path(s)")
    if left:
        sys.exit(1)


def _repair_log(root: Path, agent: str, yes: bool) -> None:
    path = root / "agents" / agent / "memory.jsonl"
    if not (root / "agents" / agent).is_dir():
        raise StoreError(f"no agent named {agent!r} in {root}")
    damaged = find_damage(path)
    if not damaged:
        click.echo(f"{path} has no damaged line; nothing to do")
        return
    for line in damaged:
        kept = " (a valid record at its end is kept)" if line.salvaged else ""
        click.echo(
            f"line {line.lineno} (byte {line.offset}, {line.size} bytes): {line.reason}{kept}"
        )
    if not yes:
        click.confirm(
            f"Save {len(damaged)} damaged line(s) aside and cut them out of {path}?", abort=True
        )
    cut, aside = cut_damage(path)
    click.echo(f"cut {len(cut)} damaged line(s) from {path}; saved in {aside}")

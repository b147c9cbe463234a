"""CLI commands over notes: ls, show, history, rm, correct, pin, unpin, disable, enable,
remember, compact, agents."""

from __future__ import annotations

from pathlib import Path

import click

from remem.cli.main import (
    Ctx,
    awaiting_lines,
    emit_json,
    event_line,
    handle_errors,
    main,
    note_line,
    pass_ctx,
)
from remem.core.text import display
from remem.errors import InvalidInput
from remem.schema import to_json
from remem.store.open import POSTGRES_SCHEMES
from remem.store.rename import rename_agent_dir


@main.command("ls")
@click.option("--agent", help="Only this agent (default: every agent).")
@click.option("--scope", type=click.Choice(["agent", "channel", "user"]))
@click.option("--scope-id", help="Only this channel or user id.")
@click.option("--all", "show_all", is_flag=True, help="Every status, not only active notes.")
@click.option("--tag", help="Only notes with this tag.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of notes.")
@pass_ctx
@handle_errors
def ls_cmd(
    obj: Ctx,
    agent: str | None,
    scope: str | None,
    scope_id: str | None,
    show_all: bool,
    tag: str | None,
    as_json: bool,
) -> None:
    """List notes.

    \b
    Example:
      remem ls --agent yuko --scope user --scope-id discord:123
    """
    agents = [agent] if agent else obj.mem.agents()
    notes = []
    for name in agents:
        notes.extend(
            obj.mem.list(
                obj.owner(name),
                scope=scope,
                scope_id=scope_id,
                status=None if show_all else "active",
                tag=tag,
            )
        )
    _warn_awaiting_erasure(obj, agents)
    if as_json:
        emit_json(notes)
        return
    if not notes:
        click.echo("no notes")
    for note in notes:
        click.echo(note_line(note))


def _warn_awaiting_erasure(obj: Ctx, agents: list[str]) -> None:
    """A status line on stderr per agent whose forgotten notes' content is still on disk."""
    for line in awaiting_lines(obj.mem, agents):
        click.echo(f"remem: {display(line)}", err=True)


@main.command("show")
@click.argument("note_id")
@click.option("--json", "as_json", is_flag=True, help="Print the note as JSON.")
@pass_ctx
@handle_errors
def show_cmd(obj: Ctx, note_id: str, as_json: bool) -> None:
    """Show one note.

    \b
    Example:
      remem show note_01JABCDEF...
    """
    _, note = obj.locate(note_id)
    if as_json:
        emit_json(note)
        return
    for key, value in to_json(note).items():
        click.echo(f"{key:>13}: {display(value)}")


@main.command("history")
@click.argument("note_id")
@click.option("--json", "as_json", is_flag=True, help="Print the events as JSON.")
@pass_ctx
@handle_errors
def history_cmd(obj: Ctx, note_id: str, as_json: bool) -> None:
    """Show every event of a note, oldest first (old text survives corrections).

    \b
    Example:
      remem history note_01JABCDEF...
    """
    ctx, _ = obj.locate(note_id)
    events = obj.mem.history(ctx, note_id)
    if as_json:
        emit_json(events)
        return
    for event in events:
        click.echo(event_line(event))


def _note_action(name: str, method: str, summary: str, example: str) -> None:
    @main.command(name, help=f"{summary}\n\n\b\nExample:\n  {example}")
    @click.argument("note_id")
    @pass_ctx
    @handle_errors
    def command(obj: Ctx, note_id: str) -> None:
        ctx, _ = obj.locate(note_id)
        note = getattr(obj.mem, method)(ctx, note_id)
        click.echo(f"{name}: {note_line(note)}")


_note_action(
    "rm", "forget", "Forget a note (tombstone; `compact` erases it).", "remem rm note_01J..."
)
_note_action("pin", "pin", "Pin a note: it ranks first in recall.", "remem pin note_01J...")
_note_action("unpin", "unpin", "Unpin a note.", "remem unpin note_01J...")
_note_action("disable", "disable", "Stop recalling a note (kept).", "remem disable note_01J...")
_note_action("enable", "enable", "Recall a disabled note again.", "remem enable note_01J...")


@main.command("correct")
@click.argument("note_id")
@click.argument("text")
@pass_ctx
@handle_errors
def correct_cmd(obj: Ctx, note_id: str, text: str) -> None:
    """Replace a note's text (the old text stays in its history).

    \b
    Example:
      remem correct note_01J... "Prefers weekly updates."
    """
    ctx, _ = obj.locate(note_id)
    note = obj.mem.correct(ctx, note_id, text)
    click.echo(f"corrected: {note_line(note)}")


@main.command("remember")
@click.option("--agent", required=True, help="The agent whose memory this is.")
@click.option("--scope", type=click.Choice(["agent", "channel", "user"]), default="agent")
@click.option("--scope-id", help="Channel or user id (for channel and user scope).")
@click.option(
    "--kind", type=click.Choice(["preference", "fact", "decision", "interaction", "procedure"])
)
@click.option("--subject", help="Subject key, e.g. report.source.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--pin", is_flag=True, help="Pin the note.")
@click.argument("text")
@pass_ctx
@handle_errors
def remember_cmd(
    obj: Ctx,
    agent: str,
    scope: str,
    scope_id: str | None,
    kind: str | None,
    subject: str | None,
    tags: tuple[str, ...],
    pin: bool,
    text: str,
) -> None:
    """Remember a note as the owner.

    \b
    Example:
      remem remember --agent yuko --kind procedure "Weekly reports use the sales_db warehouse."
    """
    note = obj.mem.remember(
        obj.owner(agent),
        text,
        scope=scope,
        scope_id=scope_id,
        kind=kind,
        subject=subject,
        tags=tags,
        pinned=pin,
    )
    click.echo(f"remembered: {note_line(note)}")


@main.command("compact")
@click.option("--agent", help="Only this agent (default: every agent).")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@handle_errors
def compact_cmd(obj: Ctx, agent: str | None, as_json: bool) -> None:
    """Physically erase forgotten, rejected and expired notes.

    \b
    Example:
      remem compact --agent yuko
    """
    reports = [obj.mem.compact(obj.owner(a)) for a in ([agent] if agent else obj.mem.agents())]
    if as_json:
        emit_json(reports)
        return
    for rep in reports:
        click.echo(
            f"{rep.agent}: erased {len(rep.notes_erased)} notes; events "
            f"{rep.events_before} -> {rep.events_after}; files removed {len(rep.files_removed)}"
        )


@main.group("agents")
def agents_group() -> None:
    """List, trash or rename agents.

    \b
    Example:
      remem agents ls
    """


@agents_group.command("ls")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@handle_errors
def agents_ls(obj: Ctx, as_json: bool) -> None:
    """List agents that have memory here.

    \b
    Example:
      remem agents ls
    """
    names = obj.mem.agents()
    if as_json:
        emit_json(names)
        return
    click.echo("\n".join(map(display, names)) if names else "no agents")


@agents_group.command("trash")
@click.argument("name")
@pass_ctx
@handle_errors
def agents_trash(obj: Ctx, name: str) -> None:
    """Move an agent's memory to .trash/NAME-<time> (restorable by moving it back).

    \b
    Example:
      remem agents trash yuko
    """
    where = obj.mem.trash_agent(obj.owner(name), name)
    click.echo(display(f"moved {name} to {where}"))


@agents_group.command("rename")
@click.argument("old")
@click.argument("new")
@pass_ctx
@handle_errors
def agents_rename(obj: Ctx, old: str, new: str) -> None:
    """Rename agent OLD to NEW in a JSONL data directory (stop remem serve first).

    Also the way out for an agent an older remem let take a name of the service's own
    (starting with '#'), which remem now refuses to open. Host tokens, member links and
    sessions that name OLD keep naming it: create them again for NEW.

    \b
    Example:
      remem agents rename '#config' config-bot
    """
    if not obj.data or obj.data.startswith(POSTGRES_SCHEMES):
        raise InvalidInput(
            "agents rename works on a JSONL data directory (--data DIR); a PostgreSQL "
            "database keeps agent names in its rows"
        )
    dest = rename_agent_dir(Path(obj.data).expanduser(), old, new)
    click.echo(display(f"renamed agent {old} to {new} ({dest})"))

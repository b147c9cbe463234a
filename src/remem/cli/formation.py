"""CLI commands for formation and belief revision: revisions, consolidate, relearn."""

from __future__ import annotations

import click

from remem.cli.main import Ctx, emit_json, handle_errors, main, note_line, pass_ctx
from remem.context import OWNER_ACTOR, Role, RunContext
from remem.core.model import format_ts
from remem.core.text import display
from remem.errors import InvalidInput


@main.group("revisions")
def revisions_group() -> None:
    """Retirements of notes (subject rule, consolidation, manual) and their undo.

    \b
    Example:
      remem revisions ls --agent yuko
    """


@revisions_group.command("ls")
@click.option("--agent", required=True)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@handle_errors
def revisions_ls(obj: Ctx, agent: str, as_json: bool) -> None:
    """List revisions, oldest first.

    \b
    Example:
      remem revisions ls --agent yuko
    """
    revs = obj.mem.revisions(RunContext.owner(agent))
    if as_json:
        emit_json(revs)
        return
    for rev in revs:
        state = "undone" if rev.undone else "in force"
        click.echo(
            f"{rev.id}  {format_ts(rev.ts)}  {rev.how:<13} {rev.retired} -> {rev.replacement}"
            f"  ({state}; run {rev.run_id})"
        )
    if not revs:
        click.echo("no revisions")


@revisions_group.command("undo")
@click.option("--agent", required=True)
@click.option("--run", "run_id", help="Undo every revision of this run.")
@click.argument("revision_id", required=False)
@pass_ctx
@handle_errors
def revisions_undo(obj: Ctx, agent: str, run_id: str | None, revision_id: str | None) -> None:
    """Undo a revision (or a whole run's): the retired note returns; the pair is vetoed.

    \b
    Examples:
      remem revisions undo --agent yuko rev_01J...
      remem revisions undo --agent yuko --run run_01J...
    """
    ctx = RunContext.owner(agent)
    if (run_id is None) == (revision_id is None):
        raise InvalidInput("give either a REVISION_ID or --run RUN_ID")
    revs = obj.mem.undo_run(ctx, run_id) if run_id else [obj.mem.undo(ctx, str(revision_id))]
    for rev in revs:
        click.echo(f"undone {rev.id}: {rev.retired} is back; {rev.replacement} may not retire it")


@main.command("consolidate")
@click.option("--agent", required=True)
@click.option("--dry-run", is_flag=True, help="Only show what would be merged.")
@pass_ctx
@handle_errors
def consolidate_cmd(obj: Ctx, agent: str, dry_run: bool) -> None:
    """Merge live notes of one scope that say the same thing.

    \b
    Example:
      remem consolidate --agent yuko --dry-run
    """
    report = obj.mem.consolidate(RunContext.owner(agent), dry_run=dry_run)
    for group in report.groups:
        click.echo(f"merge {len(group.sources)} notes -> {display(group.text)!r}")
        for note in group.sources:
            click.echo(f"    {note_line(note)}")
    verb = "would merge" if dry_run else "merged"
    click.echo(f"{verb} {len(report.groups)} group(s) in run {report.run_id}")


@main.command("relearn")
@click.option("--agent", required=True)
@click.option("--channel", help="The channel the archive comes from.")
@click.argument("archive", type=click.Path(exists=True, dir_okay=False))
@pass_ctx
@handle_errors
def relearn_cmd(obj: Ctx, agent: str, channel: str | None, archive: str) -> None:
    """Learn from an archived session (JSONL of messages plus a trust line).

    \b
    Example:
      remem relearn --agent yuko --channel discord:team session.jsonl
    """
    ctx = (
        RunContext.group(agent, channel, OWNER_ACTOR, role=Role.OWNER)
        if channel
        else RunContext.owner(agent)
    )
    report = obj.mem.relearn(ctx, archive)
    for note in report.learned:
        click.echo(f"learned    {note_line(note)}")
    for note in report.pending:
        click.echo(f"review     {note_line(note)}")
    for item, reason in report.dropped:
        click.echo(f"dropped    {reason:<28} {display(item.text)}")

"""CLI commands for recall and its governance: recall, explain, rules, review, approve,
reject, channel, reload."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from remem.cli.main import Ctx, emit_json, handle_errors, main, note_line, pass_ctx
from remem.context import RunContext
from remem.core.text import display
from remem.errors import InvalidInput


@main.command("recall")
@click.option("--agent", required=True, help="The agent whose memory to preview.")
@click.option("--dm", "dm_channel", metavar="CHANNEL", help="Preview a DM turn in this channel.")
@click.option("--user", help="The DM's user (with --dm), or the speaker (with --channel).")
@click.option(
    "--channel", help="Preview a turn in this shared channel (a channel task without --user)."
)
@click.option("--max-chars", type=int, help="Lower the character budget for this preview.")
@click.option("--tag", help="Only notes with this tag.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print run_id, retrieval, notes, text, rules."
)
@click.argument("query", default="")
@pass_ctx
@handle_errors
def recall_cmd(
    obj: Ctx,
    agent: str,
    dm_channel: str | None,
    user: str | None,
    channel: str | None,
    max_chars: int | None,
    tag: str | None,
    as_json: bool,
    query: str,
) -> None:
    """Dry-run a recall: print exactly the block a turn would receive, and its trace.

    \b
    Examples:
      remem recall --agent yuko --dm discord:456 --user discord:123 "status report"
      remem recall --agent yuko --channel discord:789 "deploy"
    """
    ctx = _preview_context(agent, dm_channel, user, channel)
    result = obj.mem.recall(ctx, query, max_chars=max_chars, tag=tag)
    if as_json:
        emit_json(result)  # run_id, retrieval, notes, text, rules (and scores)
        return
    if result.rules:
        click.echo("--- rules (system prompt) ---")
        click.echo(display(result.rules, keep_newlines=True))
    click.echo("--- memory block ---")
    click.echo(display(result.text, keep_newlines=True))
    trace = obj.mem.explain(RunContext.owner(agent), result.run_id)
    click.echo(f"--- trace {result.run_id} (retrieval: {result.retrieval}) ---")
    _print_trace_summary(trace.selected, trace.excluded)


def _preview_context(
    agent: str, dm_channel: str | None, user: str | None, channel: str | None
) -> RunContext:
    if dm_channel and channel:
        raise InvalidInput("use either --dm CHANNEL --user U or --channel C, not both")
    if dm_channel:
        if not user:
            raise InvalidInput("--dm needs --user: whose DM is it?")
        return RunContext.dm(agent, dm_channel, user)
    if channel:
        return RunContext.group(agent, channel, user) if user else RunContext.task(agent, channel)
    if user:
        raise InvalidInput("--user needs --dm CHANNEL or --channel C")
    return RunContext.agent_only(agent)


def _print_trace_summary(
    selected: list[tuple[str, float]], excluded: list[tuple[str, str]]
) -> None:
    for note_id, score in selected:
        click.echo(f"  selected {note_id}  score={score:.4f}")
    for note_id, reason in excluded:
        click.echo(f"  excluded {note_id}  {reason}")


@main.command("explain")
@click.argument("run_id")
@click.option("--agent", help="The agent (default: search every agent).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored trace as JSON.")
@pass_ctx
@handle_errors
def explain_cmd(obj: Ctx, run_id: str, agent: str | None, as_json: bool) -> None:
    """Show what a run was shown and why (read from the stored trace).

    \b
    Example:
      remem explain run_01JABC...
    """
    from remem.errors import NotFound

    for name in [agent] if agent else obj.mem.agents():
        try:
            trace = obj.mem.explain(RunContext.owner(name), run_id)
        except NotFound:
            continue
        if as_json:
            emit_json(trace)
            return
        click.echo(display(f"run {trace.run_id} of {trace.agent} at {trace.ts} ({trace.run_kind})"))
        click.echo(display(f"  actor {trace.actor} ({trace.role}) in {trace.channel}"))
        click.echo(f"  query of {trace.query_chars} characters; retrieval {trace.retrieval}")
        click.echo(display(f"  scopes {', '.join(trace.scopes) or '(none)'}"))
        click.echo(
            f"  budget {trace.budget}; block {trace.text_len} chars sha256 {trace.text_sha256[:16]}"
        )
        _print_trace_summary(trace.selected, trace.excluded)
        return
    raise NotFound(f"no trace for run {run_id}")


@main.group("rules")
def rules_group() -> None:
    """Trusted rules injected whole into every prompt of an agent.

    \b
    Example:
      remem rules set yuko style "Answer in British English."
    """


@rules_group.command("ls")
@click.argument("agent")
@pass_ctx
@handle_errors
def rules_ls(obj: Ctx, agent: str) -> None:
    """List an agent's rules.

    \b
    Example:
      remem rules ls yuko
    """
    rules = obj.mem.rules(RunContext.owner(agent))
    for name, content in rules.items():
        click.echo(f"{display(name)}  ({len(content)} chars)")
    if not rules:
        click.echo("no rules")


@rules_group.command("show")
@click.argument("agent")
@click.argument("name")
@pass_ctx
@handle_errors
def rules_show(obj: Ctx, agent: str, name: str) -> None:
    """Print one rule.

    \b
    Example:
      remem rules show yuko style
    """
    rules = obj.mem.rules(RunContext.owner(agent))
    if name not in rules:
        from remem.errors import NotFound

        raise NotFound(f"agent {agent} has no rule {name!r}; see `remem rules ls {agent}`")
    click.echo(display(rules[name], keep_newlines=True))


@rules_group.command("set")
@click.argument("agent")
@click.argument("name")
@click.argument("content")
@pass_ctx
@handle_errors
def rules_set(obj: Ctx, agent: str, name: str, content: str) -> None:
    """Write a rule (empty CONTENT removes it).

    \b
    Example:
      remem rules set yuko style "Never start replies with 'Certainly'."
    """
    obj.mem.set_rule(RunContext.owner(agent), name, content)
    click.echo(f"rule {name} {'removed' if not content else 'saved'} for {agent}")


@main.command("review")
@click.option("--agent", help="Only this agent (default: every agent).")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@handle_errors
def review_cmd(obj: Ctx, agent: str | None, as_json: bool) -> None:
    """List notes awaiting review (pending or unverified).

    \b
    Example:
      remem review --agent yuko
    """
    notes = []
    for name in [agent] if agent else obj.mem.agents():
        notes.extend(obj.mem.pending(RunContext.owner(name)))
    if as_json:
        emit_json(notes)
        return
    click.echo("\n".join(note_line(n) for n in notes) if notes else "nothing awaits review")


def _review_action(name: str, summary: str) -> None:
    @main.command(name, help=f"{summary}\n\n\b\nExample:\n  remem {name} note_01J...")
    @click.argument("note_id")
    @pass_ctx
    @handle_errors
    def command(obj: Ctx, note_id: str) -> None:
        ctx, _ = obj.locate(note_id)
        note = getattr(obj.mem, name)(ctx, note_id)
        click.echo(f"{name.removesuffix('e')}ed: {note_line(note)}")


_review_action("approve", "Approve a pending or unverified note.")
_review_action("reject", "Reject a pending or unverified note.")

_CHANNEL_SETTINGS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "memory": ("memory", lambda v: _on_off(v)),
    "memory-inferred": ("inferred", str),
    "memory-kinds": ("kinds", lambda v: [k.strip() for k in v.split(",") if k.strip()]),
    "memory-retention": ("retention_days", lambda v: int(v)),
    "recall-max-notes": ("recall_max_notes", lambda v: int(v)),
    "recall-max-chars": ("recall_max_chars", lambda v: int(v)),
    "stewards": ("stewards", lambda v: [s.strip() for s in v.split(",") if s.strip()]),
}


def _on_off(value: str) -> bool:
    if value.lower() in ("on", "true", "yes"):
        return True
    if value.lower() in ("off", "false", "no"):
        return False
    raise InvalidInput(f"expected on or off, not {value!r}")


@main.group("channel")
def channel_group() -> None:
    """Channel policy (memory on/off, inferred, kinds, retention, budgets, stewards) and a
    channel's recorded kind (dm or group).

    \b
    Examples:
      remem channel set yuko discord:789 memory off
      remem channel set-kind yuko discord:456 dm --member discord:123
    """


@channel_group.command("set")
@click.argument("agent")
@click.argument("channel")
@click.argument("setting", type=click.Choice(sorted(_CHANNEL_SETTINGS)))
@click.argument("value")
@pass_ctx
@handle_errors
def channel_set(obj: Ctx, agent: str, channel: str, setting: str, value: str) -> None:
    """Set one channel setting.

    \b
    Examples:
      remem channel set yuko discord:789 memory off
      remem channel set yuko discord:789 memory-inferred review
      remem channel set yuko discord:789 memory-kinds preference,decision
      remem channel set yuko discord:789 memory-retention 30
      remem channel set yuko discord:789 stewards discord:42,discord:43
    """
    key, convert = _CHANNEL_SETTINGS[setting]
    try:
        parsed = convert(value)
    except ValueError:
        raise InvalidInput(f"{setting} takes a whole number, not {value!r}") from None
    change = obj.mem.set_channel_policy(RunContext.owner(agent), channel, **{key: parsed})
    click.echo(display(f"{channel}: {setting} = {value}"))
    for notice in change.notices:
        click.echo(f"note: {display(notice)}")


@channel_group.command("show")
@click.argument("agent")
@click.argument("channel")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
@handle_errors
def channel_show(obj: Ctx, agent: str, channel: str, as_json: bool) -> None:
    """Show a channel's effective policy and the layer each value comes from.

    \b
    Example:
      remem channel show yuko discord:789
    """
    effective = obj.mem.effective_policy(RunContext.task(agent, channel))
    effective["stored"] = obj.mem.channel_policy(RunContext.owner(agent), channel)
    if as_json:
        emit_json(effective)
        return
    for key, item in effective["values"].items():
        click.echo(display(f"{key:>26} = {item['value']}  ({item['layer']})"))
    click.echo(display(f"{'stewards':>26} = {', '.join(effective['stewards']) or '(none)'}"))
    for line in effective["clamped"] + effective["warnings"]:
        click.echo(f"note: {display(line)}")


@channel_group.command("set-kind")
@click.argument("agent")
@click.argument("channel")
@click.argument("kind", type=click.Choice(["dm", "group"]))
@click.option("--member", help="The DM's one member (user id); required for dm.")
@pass_ctx
@handle_errors
def channel_set_kind(obj: Ctx, agent: str, channel: str, kind: str, member: str | None) -> None:
    """Record or correct a channel's kind (the owner's command). Every dm or group turn
    there must match it; the first call naming a channel records it from that call's
    envelope, and `remem doctor` lists kinds a member-capped host recorded.

    \b
    Examples:
      remem channel set-kind yuko discord:456 dm --member discord:123
      remem channel set-kind yuko discord:789 group
    """
    fact = obj.mem.set_channel_kind(RunContext.owner(agent), channel, kind, member=member)
    who = f" of {fact['member']}" if fact["member"] else ""
    click.echo(display(f"{channel}: {fact['kind']}{who} (recorded by the owner)"))

"""CLI commands that check or show the whole system: doctor, demo."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from remem import health
from remem.cli.main import (
    Ctx,
    awaiting_lines,
    handle_errors,
    main,
    pass_ctx,
)
from remem.context import RunContext
from remem.core.text import display
from remem.errors import InvalidInput, RememError, StoreError
from remem.service import Memory
from remem.store.repair import cut_damage, find_damage

DOCTOR_AGENT = "remem-doctor"


@main.command("doctor")
@pass_ctx
@handle_errors
def doctor_cmd(obj: Ctx) -> None:
    """Check the data directory: every agent's log end to end (checksums, ids, order),
    saved torn tails, caches, the policy file, the LLM and embedding endpoints, and a real
    save → recall → forget → compact round trip.

    Exits 1 on damage. Torn tails cut after a crash, stale caches and unreachable
    endpoints are printed as "warn" lines (exit 0: clean but repaired, or degraded).
    The round trip uses a separate agent named remem-doctor, left compacted afterwards.

    \b
    Example:
      remem --data ./remem-data doctor
    """
    mem = obj.mem
    ctx = RunContext.owner(DOCTOR_AGENT)
    steps: list[tuple[str, bool, str]] = []
    warnings: list[tuple[str, str]] = []
    token = f"doctor check {time.time_ns()}"
    # Every agent's log end to end, its saved tails and caches, then the endpoints.
    root = Path(mem.backend.url.removeprefix("jsonl://"))
    try:
        agents = mem.agents()
    except RememError as exc:
        agents = []
        steps.append(("agents", False, str(exc)))
    findings = [f for agent in agents for f in health.check_agent(root, agent)]
    findings += _channel_kind_findings(mem, agents)
    for finding in [*findings, *health.check_endpoints(mem.classifier)]:
        if finding.level == "warn":
            warnings.append((finding.name, finding.detail))
        else:
            steps.append((finding.name, finding.level == "ok", finding.detail))
    try:
        policy = mem.effective_policy(ctx)
        steps.append(("policy", not policy["warnings"], "; ".join(policy["warnings"]) or "ok"))
        note = mem.remember(ctx, token, scope="agent", kind="fact")
        steps.append(("save", True, note.id))
        found = mem.recall(ctx, token)
        hit = any(n.id == note.id for n in found.notes)
        steps.append(("recall", hit, f"retrieval={found.retrieval}"))
        mem.forget(ctx, note.id)
        report = mem.compact(ctx)
        steps.append(("forget+compact", note.id in report.notes_erased, "content erased"))
    except RememError as exc:
        steps.append(("error", False, str(exc)))
    for name, ok, detail in steps:
        click.echo(f"{'ok ' if ok else 'FAIL'} {name:<15} {display(detail)}")
    for name, detail in warnings:
        click.echo(f"warn {name:<15} {display(detail)}")
    if not all(ok for _, ok, _ in steps):
        sys.exit(1)
    _print_awaiting_erasure(obj)  # only over logs that read clean (checked above)
    where = display(str(obj.data))
    if warnings:
        click.echo(f"remem is clean but repaired or degraded at {where} (see warn lines)")
    else:
        click.echo(f"remem is healthy at {where}")


def _channel_kind_findings(mem: Memory, agents: list[str]) -> list[health.Finding]:
    """Each agent's channel kinds to confirm or set (:func:`remem.health.check_channel_kinds`);
    an agent whose log cannot be read is reported by its own check above."""
    out: list[health.Finding] = []
    for agent in agents:
        try:
            out += health.check_channel_kinds(agent, mem.channel_kinds(RunContext.owner(agent)))
        except RememError:
            continue
    return out


def _print_awaiting_erasure(obj: Ctx) -> None:
    """What waits for physical erasure (forgotten notes still on disk): a note, not a
    failure; ``remem compact`` completes it."""
    agents = [name for name in obj.mem.agents() if name != DOCTOR_AGENT]
    for line in awaiting_lines(obj.mem, agents):
        click.echo(f"note erasure         {display(line)}")


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
@click.option("--agent", required=True, help="The agent whose log is damaged.")
@click.option("--yes", is_flag=True, help="Cut without asking for confirmation.")
@pass_ctx
@handle_errors
def repair_cmd(obj: Ctx, agent: str, yes: bool) -> None:
    """Cut damaged lines out of an agent's log, after saving them aside.

    A complete line of the log that fails its checksum or does not parse makes remem
    refuse the log. This command lists such lines, asks for confirmation (unless
    --yes), saves them in memory.jsonl.damaged-<time>-<pid> next to the log (kept until
    you delete it), and replaces the log with a copy without them, under the writer
    lock. A valid record that ends a damaged line is kept. Nothing else is changed:
    the notes in the cut lines are lost unless you restore them from the saved file
    or a backup. Run remem doctor afterwards.

    \b
    Example:
      remem --data ./remem-data repair --agent yuko
    """
    if not obj.data:
        raise InvalidInput("no data directory: pass --data DIR or set REMEM_DATA")
    root = Path(obj.data).expanduser()
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

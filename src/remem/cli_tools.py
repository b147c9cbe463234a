"""CLI commands that check or show the whole system: doctor, demo."""

from __future__ import annotations

import sys
import time

import click

from remem.cli import Ctx, handle_errors, main, pass_ctx
from remem.context import RunContext
from remem.core.text import display
from remem.errors import RememError

DOCTOR_AGENT = "remem-doctor"


@main.command("doctor")
@pass_ctx
@handle_errors
def doctor_cmd(obj: Ctx) -> None:
    """Check the data directory with a real save → recall → forget → compact round trip.

    Uses a separate agent named remem-doctor, left compacted (no content) afterwards.

    \b
    Example:
      remem --data ./remem-data doctor
    """
    mem = obj.mem
    ctx = RunContext.owner(DOCTOR_AGENT)
    steps: list[tuple[str, bool, str]] = []
    token = f"doctor check {time.time_ns()}"
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
    _print_awaiting_erasure(obj)
    if not all(ok for _, ok, _ in steps):
        sys.exit(1)
    click.echo(f"remem is healthy at {display(str(obj.data))}")


def _print_awaiting_erasure(obj: Ctx) -> None:
    """What waits for physical erasure (forgotten notes still on disk): a note, not a
    failure; ``remem compact`` completes it."""
    from remem.erasure import awaiting_lines

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

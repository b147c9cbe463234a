"""``remem doctor``: a list of checks (:data:`CHECKS`), each giving findings.

A check is a function of the opened data location that returns
:class:`~remem.health.Finding`\\ s: ``fail`` (damage: exit 1), ``warn`` (something the
owner should know and may fix: exit 0) or ``ok``. Another check is one more entry in
:data:`CHECKS`. After the findings, agents that older doctors left behind are offered
for removal.

The round trip runs as a fresh agent of the service's own (``#doctor-<random>``, which
no input can name: :mod:`remem.core.names`), removed completely afterwards, even when
a step fails: its directory on JSONL, every row and key on PostgreSQL.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from remem import health
from remem.cli.main import Ctx, awaiting_lines, handle_errors, main, pass_ctx
from remem.context import RunContext
from remem.core.names import (
    adopt_service_agent,
    is_reserved,
    mint_service_agent,
    minted_for,
    release_service_agent,
)
from remem.core.text import display
from remem.errors import NotFound, RememError
from remem.service import Memory
from remem.store.jsonl import JsonlBackend
from remem.store.location import redact
from remem.store.permissions import data_owner, find_exposed

#: What the probe agents are minted for (their names: ``#doctor-<16 hex digits>``).
PROBE_PURPOSE = "doctor"
#: The probe agent of doctors before 0.x: a plain agent, left behind after every run.
LEGACY_PROBE = "remem-doctor"

Check = Callable[[Ctx], Iterable[health.Finding]]


def jsonl_root(mem: Memory) -> Path | None:
    """The data directory when the store is a JSONL one (``None`` for a database)."""
    backend = mem.backend
    return backend.root if isinstance(backend, JsonlBackend) else None


def check_logs(obj: Ctx) -> list[health.Finding]:
    """Every agent's log end to end, its saved tails and caches."""
    root = jsonl_root(obj.mem)
    try:
        agents = obj.mem.agents()
    except RememError as exc:
        return [health.Finding("fail", "agents", str(exc))]
    if root is None:
        return []
    return [f for agent in agents for f in health.check_agent(root, agent)]


def check_channel_kinds(obj: Ctx) -> list[health.Finding]:
    """Each agent's channel kinds to confirm or set (:func:`remem.health.check_channel_kinds`);
    an agent whose log cannot be read is reported by :func:`check_logs`."""
    out: list[health.Finding] = []
    try:
        agents = obj.mem.agents()
    except RememError:
        return out
    for agent in agents:
        try:
            kinds = obj.mem.channel_kinds(RunContext.owner(agent))
        except RememError:
            continue
        out += health.check_channel_kinds(agent, kinds)
    return out


def check_endpoints(obj: Ctx) -> Iterable[health.Finding]:
    return health.check_endpoints(obj.mem.classifier)


def check_permissions(obj: Ctx) -> list[health.Finding]:
    """Files and directories that group or others can reach, or that another user than
    the data directory's owns (see :mod:`remem.store.permissions`)."""
    root = jsonl_root(obj.mem)
    key_file = os.environ.get("REMEM_KEY_FILE")
    if root is None and not key_file:
        return []  # a database without a key file: no file of remem's to check
    try:
        found = find_exposed(root, (Path(key_file),) if key_file else ())
    except OSError as exc:
        return [health.Finding("warn", "permissions", f"cannot check: {exc.strerror}")]
    if not found:
        return [health.Finding("ok", "permissions", "readable by the service's user only")]
    owner = data_owner(root) if root is not None else os.geteuid()
    fix = f"fix them all with `remem --data {obj.data} repair --permissions`"
    shown = [health.Finding("warn", "permissions", f.describe(owner)) for f in found[:10]]
    more = f"{len(found) - 10} more such paths; " if len(found) > 10 else ""
    return [*shown, health.Finding("warn", "permissions", f"{more}{fix}")]


def check_reserved_names(obj: Ctx) -> list[health.Finding]:
    """Agents stored under a name of the service's own (an older remem accepted them):
    unusable until renamed. Doctor probes left behind are :func:`leftover_probes`."""
    findings = []
    for name in _stored_agents(obj.mem):
        if is_reserved(name) and not _is_probe(name):
            findings.append(
                health.Finding(
                    "warn",
                    "reserved name",
                    f"agent {name!r} has a name of the service's own (names starting with "
                    "'#'): it cannot be opened; rename it with "
                    f"`remem --data {obj.data} agents rename '{name}' NEW-NAME`",
                )
            )
    return findings


def check_leftover_probes(obj: Ctx) -> list[health.Finding]:
    return [
        health.Finding("warn", "leftover probe", f"agent {name!r} was left by an earlier doctor")
        for name in leftover_probes(obj.mem)
    ]


def round_trip(obj: Ctx) -> list[health.Finding]:
    """The policy, then save → recall → forget → compact as a fresh probe agent, which
    is removed afterwards whatever happened."""
    mem = obj.mem
    probe = mint_service_agent(PROBE_PURPOSE)
    ctx = RunContext.owner(probe)
    findings: list[health.Finding] = []
    try:
        policy = mem.effective_policy(ctx)
        problems = "; ".join(policy["warnings"])
        findings.append(health.Finding("fail" if problems else "ok", "policy", problems or "ok"))
        token = f"doctor check {time.time_ns()}"
        note = mem.remember(ctx, token, scope="agent", kind="fact")
        findings.append(health.Finding("ok", "save", note.id))
        found = mem.recall(ctx, token)
        hit = any(n.id == note.id for n in found.notes)
        findings.append(
            health.Finding("ok" if hit else "fail", "recall", f"retrieval={found.retrieval}")
        )
        mem.forget(ctx, note.id)
        report = mem.compact(ctx)
        erased = note.id in report.notes_erased
        findings.append(health.Finding("ok" if erased else "fail", "forget+compact", "erased"))
    except RememError as exc:
        findings.append(health.Finding("fail", "error", str(exc)))
    finally:
        try:
            remove_agent(mem, probe)
        except RememError as exc:
            findings.append(health.Finding("fail", "probe removal", f"{probe}: {exc}"))
        except OSError as exc:
            findings.append(health.Finding("fail", "probe removal", f"{probe}: {exc.strerror}"))
        release_service_agent(probe)
    return findings


#: Every check doctor runs, in order. Add a check here.
CHECKS: list[Check] = [
    check_logs,
    check_endpoints,
    check_channel_kinds,
    check_permissions,
    check_reserved_names,
    check_leftover_probes,
    round_trip,
]


def remove_agent(mem: Memory, name: str) -> None:
    """Remove agent ``name`` completely: every row and key of it in a database; in a
    data directory, its directory (moved to the trash, then deleted there)."""
    try:
        where = mem.trash_agent(RunContext.owner(name), name)
    except NotFound:
        return  # nothing of it was ever stored
    root = jsonl_root(mem)
    if root is not None:
        shutil.rmtree(where)
        with contextlib.suppress(OSError):
            os.rmdir(root / ".trash")  # only when nothing else is in the trash


def leftover_probes(mem: Memory) -> list[str]:
    """The probe agents earlier doctors left behind: ``remem-doctor`` (every run before
    probes were removed) and ``#doctor-…`` (a run killed midway)."""
    return [n for n in _stored_agents(mem) if n == LEGACY_PROBE or _is_probe(n)]


def _is_probe(name: str) -> bool:
    return minted_for(name, PROBE_PURPOSE)


def _stored_agents(mem: Memory) -> list[str]:
    """Every agent name the store holds, reserved ones included."""
    try:
        return mem.backend.agents()
    except RememError:
        return []  # check_logs reports it


def _offer_removal(obj: Ctx, yes: bool) -> None:
    leftovers = leftover_probes(obj.mem)
    if not leftovers:
        return
    names = ", ".join(repr(n) for n in leftovers)
    if not yes:
        try:
            yes = click.confirm(f"Remove the probe agents left by earlier doctors ({names})?")
        except click.Abort:  # no answer (stdin closed): keep them
            click.echo()
            yes = False
    if not yes:
        click.echo(f"kept {display(names)}; `remem doctor --yes` removes them")
        return
    for name in leftovers:
        if name != LEGACY_PROBE:
            adopt_service_agent(name, PROBE_PURPOSE)
        try:
            remove_agent(obj.mem, name)
        finally:
            if name != LEGACY_PROBE:
                release_service_agent(name)
        click.echo(f"removed agent {display(name)}")


@main.command("doctor")
@click.option("--yes", is_flag=True, help="Remove probe agents left by earlier doctors unasked.")
@pass_ctx
@handle_errors
def doctor_cmd(obj: Ctx, yes: bool) -> None:
    """Check the data directory: every agent's log end to end (checksums, ids, order),
    saved torn tails, caches, file permissions, agents with reserved names, the policy
    file, the LLM and embedding endpoints, and a real save → recall → forget → compact
    round trip.

    Exits 1 on damage. Torn tails cut after a crash, stale caches, files other users
    can read, and unreachable endpoints are printed as "warn" lines (exit 0: clean but
    repaired, or degraded). The round trip runs as a fresh agent #doctor-<random>,
    removed completely afterwards. Probe agents left by earlier doctors (remem-doctor)
    are listed and their removal offered (--yes: removed without asking).

    \b
    Example:
      remem --data ./remem-data doctor
    """
    findings = [finding for check in CHECKS for finding in check(obj)]
    for f in findings:
        if f.level != "warn":
            click.echo(f"{'ok ' if f.level == 'ok' else 'FAIL'} {f.name:<15} {display(f.detail)}")
    for f in findings:
        if f.level == "warn":
            click.echo(f"warn {f.name:<15} {display(f.detail)}")
    if any(f.level == "fail" for f in findings):
        sys.exit(1)
    _offer_removal(obj, yes)
    agents = [a for a in obj.mem.agents() if a != LEGACY_PROBE]
    for line in awaiting_lines(obj.mem, agents):  # only over logs that read clean
        click.echo(f"note erasure         {display(line)}")
    where = display(redact(str(obj.data)))  # a PostgreSQL URL's password stays out
    if any(f.level == "warn" for f in findings):
        click.echo(f"remem is clean but repaired or degraded at {where} (see warn lines)")
    else:
        click.echo(f"remem is healthy at {where}")

"""The read use cases: get, list, status, history, explain, writes, tags.

Each answers only with what the envelope may see (:meth:`Kernel.can_read`); a note it
may not see is ``NotFound``, the same answer as a missing id.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from remem.app.kernel import Kernel
from remem.context import RunKind
from remem.core.events import Corrected, Event, Remembered, Superseded
from remem.core.model import Note, Scope, Status, parse_enum, parse_ts
from remem.core.projection import State
from remem.core.text import check_id, check_optional_id
from remem.errors import InvalidInput, NotFound
from remem.policy.authz import Action, Target

if TYPE_CHECKING:
    from remem.recall.trace import Trace
    from remem.runwrites import Written


def get(k: Kernel, note_id: str) -> Note:
    """One note visible to the envelope; ``NotFound`` otherwise."""
    return k.visible(k.state(), note_id)


def list_notes(
    k: Kernel,
    *,
    scope: Scope | str | None = None,
    scope_id: str | None = None,
    status: Status | str | None = "active",
    tag: str | None = None,
) -> list[Note]:
    """Notes visible to the envelope, oldest first. ``status=None`` lists every status."""
    state = k.state()
    check_optional_id(tag, "tag")
    check_optional_id(scope_id, "scope_id")
    want = parse_enum(Status, status, "status") if status is not None else None
    now = k.now()
    out = []
    for note in _listable(k, state, scope, scope_id):
        if want is not None and k.status_of(note, now) is not want:
            continue
        if tag is not None and tag not in note.tags:
            continue
        out.append(note)
    out.sort(key=lambda n: n.id)
    return out


def status_of(k: Kernel, note: Note, now: datetime | None = None) -> Status:
    """A note's status as of ``now``, counting ``expires_at`` and retention policy.

    The note is the caller's (it may be made up), so the answer reveals the retention of
    the channel it names: ``Denied``, as for that channel's policy, unless the envelope
    may read that channel (its own channel always)."""
    if not isinstance(note, Note):
        raise InvalidInput("note must be a remem.Note (from get, list or recall)")
    if now is not None and not isinstance(now, datetime):
        raise InvalidInput("now must be a datetime or None")
    channel = note.scope_id if note.scope is Scope.CHANNEL else None
    if note.status is Status.ACTIVE and channel is not None and channel != k.ctx.channel:
        k.require(k.state(), Action.READ, Target(Scope.CHANNEL, check_id(channel, "scope_id")))
    return k.status_of(note, parse_ts(now, "now"))  # a naive time is UTC, as everywhere


def _listable(
    k: Kernel, state: State, scope: Scope | str | None, scope_id: str | None
) -> list[Note]:
    ctx = k.ctx
    if scope is None:
        if scope_id is not None:
            raise InvalidInput("scope_id needs scope: pass scope='user' or scope='channel'")
        return [n for n in state.notes.values() if k.can_read(state, n)]
    parsed = parse_enum(Scope, scope, "scope")
    if parsed is Scope.AGENT and scope_id is not None:
        raise InvalidInput("agent scope has no scope_id")
    if scope_id is None and parsed is not Scope.AGENT:
        if ctx.kind is RunKind.OWNER or ctx.role.is_admin:
            return [n for n in state.notes.values() if n.scope is parsed]
        scope_id = k.resolve_scope_id(parsed, None)
    k.require(state, Action.READ, Target(parsed, scope_id))
    return state.in_scope(parsed, scope_id)


def history(k: Kernel, note_id: str) -> list[Event]:
    """The note's events, oldest first. A forgotten note's events no longer show its text."""
    agent = k.agent
    note = k.visible(agent.sync(), note_id)
    events = agent.log.history(note_id)
    if note.status is Status.FORGOTTEN:
        events = [
            replace(ev, text="") if isinstance(ev, Remembered | Corrected) and ev.text else ev
            for ev in events
        ]
    return hide_unseen_replacements(k, agent.state, events)


def hide_unseen_replacements(k: Kernel, state: State, events: list[Event]) -> list[Event]:
    """``events`` of a note the envelope may see, without naming a replacing note it may
    not (a retirement's ``by`` is ``""`` then, as in revisions)."""
    out = []
    for ev in events:
        if isinstance(ev, Superseded) and ev.by:
            by = state.notes.get(ev.by)
            if by is None or not k.can_read(state, by):
                ev = replace(ev, by="")
        out.append(ev)
    return out


def explain(k: Kernel, run_id: str) -> Trace:
    """The stored trace of a run (nothing is recomputed), as far as the envelope may see
    it: the rule ``trace_reader`` of :func:`remem.policy.authz.decide` (a refusal is
    ``NotFound``, the same answer as a run without a trace)."""
    from remem.recall.trace import Trace

    agent = k.agent
    check_id(run_id, "run_id")
    state = agent.sync()
    records = [r for r in agent.traces.find(run_id) if r.get("type") == "recall"]
    if not records:
        raise NotFound(f"no trace for run {run_id} is visible here")
    trace = Trace.from_dict(records[-1], agent.traces.shared)
    target = Target(Scope.CHANNEL, trace.channel or None, trace.actor)
    decision = k.decide(state, Action.READ_TRACE, target)
    if not decision.allowed:
        raise NotFound(f"no trace for run {run_id} is visible here")
    if decision.rule == "admin":
        return trace
    ids = {i for i in trace.candidates if i in state.notes and k.can_read(state, state.notes[i])}
    return trace.visible_to(ids)


def writes(k: Kernel, run_id: str) -> list[Written]:
    """The notes run ``run_id`` changed, as far as the envelope may see them, in the order
    the run first wrote each."""
    from remem.runwrites import Written, receipt_for

    agent = k.agent
    check_id(run_id, "run_id")
    state = agent.sync()
    out = []
    for note_id, ops in agent.run_writes.of(run_id):
        note = state.notes.get(note_id)
        if note is not None and k.can_read(state, note):
            out.append(Written(note, ops, receipt_for(ops[-1], note)))
    return out


def tags(k: Kernel) -> dict[str, int]:
    """Tag counts over live notes visible to the envelope."""
    counts: dict[str, int] = {}
    for note in list_notes(k):
        for tag in note.tags:
            counts[tag] = counts.get(tag, 0) + 1
    return dict(sorted(counts.items()))

"""A member's erasure: what is about them, and physically erasing what they forgot.

"What do you remember about me?" and "Forget everything about me" cover everything the
member's own DM recall can show them about themselves (:func:`about_member`): their
user notes and, in their DM, the notes of that DM channel.

After a member's erase-all, the forgotten notes' content is physically removed at once
(:func:`erase_forgotten`): the same rewrite as the owner's ``compact``, limited to the
notes this member forgot and may erase, under the named rule ``member_erasure`` of
:func:`remem.policy.authz.decide` (the owner's full ``compact`` stays owner-only). If
that fails (the disk, a lock), the notes stay forgotten (never shown) and their content
waits on disk: it is erased again at the member's next "forget everything about me" or
"what do you remember about me?", and by the owner's next ``remem compact``;
``remem doctor`` and ``remem ls`` show what waits (:func:`awaiting_erasure`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remem.compaction import CompactionReport, compact_events, finish_erasure
from remem.context import RunKind
from remem.core.model import Note, Scope, Status
from remem.errors import Denied
from remem.policy.authz import Action

if TYPE_CHECKING:
    from remem.context import RunContext
    from remem.core.events import Event
    from remem.core.projection import State
    from remem.service import Memory

#: The rule under which a member's erase-all is physically completed.
MEMBER_ERASURE = "member_erasure"


def about_member(mem: Memory, ctx: RunContext, status: str | None = None) -> list[Note]:
    """The notes about ``ctx``'s speaker that their own DM recall could show them: their
    user notes and, in a DM run, that DM channel's notes (``status=None``: every status)."""
    notes = mem.list(ctx, scope=Scope.USER, scope_id=ctx.actor, status=status)
    if ctx.kind is RunKind.DM and ctx.channel is not None:
        notes += mem.list(ctx, scope=Scope.CHANNEL, scope_id=ctx.channel, status=status)
    return notes


def awaiting_erasure(mem: Memory, ctx: RunContext) -> list[Note]:
    """Notes visible to ``ctx`` that are forgotten but whose content is still on disk
    (compaction, or a member's erasure, has not removed it yet)."""
    return mem.list(ctx, status=Status.FORGOTTEN.value)


def erase_forgotten(mem: Memory, ctx: RunContext, note_ids: list[str]) -> CompactionReport:
    """Physically remove the content of the forgotten notes among ``note_ids`` that
    ``ctx`` may erase (rule ``member_erasure``; owners and admins by their own rule);
    notes that are not forgotten are left alone. Raises what the store raises."""
    agent = mem._agent(ctx)
    counts: dict[str, Any] = {}

    def build(state: State, events: list[Event]) -> list[Event]:
        dead = {}
        for note_id in note_ids:
            note = state.notes.get(note_id)
            if note is None or note.status is not Status.FORGOTTEN:
                continue
            decision = mem._decide(ctx, state, Action.ERASE, mem._target(note))
            if not decision.allowed:
                raise Denied(f"denied ({decision.rule}): {decision.reason}", rule=decision.rule)
            dead[note_id] = Status.FORGOTTEN
        counts.update(erased=sorted(dead), before=len(events))
        if not dead:
            counts["after"] = len(events)
            return events
        kept = compact_events(events, dead, mem._envelope(ctx))
        counts["after"] = len(kept)
        return kept

    if not note_ids:
        return CompactionReport(agent=ctx.agent)
    agent.rewrite(build)
    removed: list[str] = []
    if counts["erased"]:
        removed = finish_erasure(mem, ctx)
    return CompactionReport(
        agent=ctx.agent,
        notes_erased=counts["erased"],
        events_before=counts["before"],
        events_after=counts["after"],
        files_removed=removed,
    )


def awaiting_lines(mem: Memory, agents: list[str]) -> list[str]:
    """One line per agent with forgotten notes whose content is still on disk, saying
    how to erase it (for ``remem ls`` and ``remem doctor``)."""
    from remem.context import RunContext

    lines = []
    for name in agents:
        waiting = awaiting_erasure(mem, RunContext.owner(name))
        if waiting:
            lines.append(
                f"{len(waiting)} forgotten note(s) of agent {name} still on disk, waiting for "
                f"physical erasure: run `remem compact --agent {name}`"
            )
    return lines

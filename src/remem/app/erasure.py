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
``remem doctor`` and ``remem ls`` show what waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remem.app.compaction import CompactionReport, compact_events, finish_erasure, report_of
from remem.app.kernel import Kernel
from remem.app.reading import list_notes
from remem.context import RunKind
from remem.core.model import Note, Scope, Status
from remem.policy.authz import Action, require

if TYPE_CHECKING:
    from remem.core.events import Event
    from remem.core.projection import State

#: The rule under which a member's erase-all is physically completed.
MEMBER_ERASURE = "member_erasure"


def about_member(k: Kernel, status: str | None = None) -> list[Note]:
    """The notes about the envelope's speaker that their own DM recall could show them:
    their user notes and, in a DM run, that DM channel's notes (``status=None``: every
    status)."""
    ctx = k.ctx
    notes = list_notes(k, scope=Scope.USER, scope_id=ctx.actor, status=status)
    if ctx.kind is RunKind.DM and ctx.channel is not None:
        notes += list_notes(k, scope=Scope.CHANNEL, scope_id=ctx.channel, status=status)
    return notes


def erase_forgotten(k: Kernel, note_ids: list[str]) -> CompactionReport:
    """Physically remove the content of the forgotten notes among ``note_ids`` that
    the envelope may erase (rule ``member_erasure``; owners and admins by their own rule);
    notes that are not forgotten are left alone. Raises what the store raises."""
    agent = k.agent
    counts: dict[str, Any] = {}

    def build(state: State, events: list[Event]) -> list[Event]:
        dead = {}
        for note_id in note_ids:
            note = state.notes.get(note_id)
            if note is None or note.status is not Status.FORGOTTEN:
                continue
            require(k.decide(state, Action.ERASE, k.target(note)))
            dead[note_id] = Status.FORGOTTEN
        counts.update(erased=sorted(dead), before=len(events))
        if not dead:
            counts["after"] = len(events)
            return events
        kept = compact_events(events, dead, k.envelope())
        counts["after"] = len(kept)
        return kept

    if not note_ids:
        return CompactionReport(agent=k.ctx.agent)
    agent.rewrite(build)
    return report_of(k, counts, finish_erasure(k) if counts["erased"] else [])

"""Belief revision: supersession by subject, manual supersession, revisions and undo.

Every retirement of a note is a :class:`~remem.core.events.Superseded` event
that doubles as a revision row (retired note, replacing note, how, reason,
actor, run). Undoing a revision restores the retired note and records the
pair as a veto: the same note never retires the same note again, whichever
rule proposes it. Pinned notes are never retired by an automatic path.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from remem.core.events import Disabled, Event, Restored, Superseded
from remem.core.ids import new_id
from remem.core.model import Note, Scope, Status
from remem.core.projection import State

SUBJECT_RULE = "subject_rule"
BELIEF_REVISION = "belief_revision"
CONSOLIDATION = "consolidation"
MANUAL = "manual"


def retire(
    state: State,
    retired: Note,
    replacement_id: str,
    how: str,
    reason: str,
    envelope: dict[str, Any],
) -> list[Event]:
    """A ``Superseded`` event, unless vetoed or (for automatic paths) the note is pinned."""
    if (replacement_id, retired.id) in state.vetoes or retired.id == replacement_id:
        return []
    if retired.pinned and how != MANUAL:
        return []
    # A fresh event id each: one envelope may retire several notes in one write, and the
    # log drops a repeated event id as a retried duplicate.
    return [
        Superseded(
            note_id=retired.id,
            by=replacement_id,
            revision_id=new_id("rev"),
            how=how,
            reason=reason,
            **{**envelope, "eid": new_id("ev")},
        )
    ]


def same_subject(state: State, scope: Scope, scope_id: str | None, subject: str) -> list[Note]:
    """Active notes of one scope on ``subject``."""
    return [
        n
        for n in state.in_scope(scope, scope_id)
        if n.subject == subject and n.status is Status.ACTIVE
    ]


def subject_rule(
    state: State,
    *,
    note_id: str,
    scope: Scope,
    scope_id: str | None,
    subject: str,
    said_at: datetime,
    envelope: dict[str, Any],
) -> list[Event]:
    """Supersede by ``said_at``: a newer statement retires older ones on the same subject
    (those its writer may change); a statement older than the live one is itself retired
    (dated history stays searchable)."""
    events: list[Event] = []
    live = same_subject(state, scope, scope_id, subject)
    newer = [n for n in live if n.said_at > said_at]
    reason = f"newer statement on {subject}"
    if newer:
        latest = max(newer, key=lambda n: (n.said_at, n.id))
        placeholder = Note(
            id=note_id,
            agent=state.agent,
            scope=scope,
            scope_id=scope_id,
            kind=latest.kind,
            text="",
            basis=latest.basis,
            status=Status.ACTIVE,
            created_at=said_at,
            said_at=said_at,
            updated_at=said_at,
        )
        return retire(state, placeholder, latest.id, SUBJECT_RULE, reason, envelope)
    for old in live:
        if may_change(state, old, envelope):
            events += retire(state, old, note_id, SUBJECT_RULE, reason, envelope)
    return events


def may_change(state: State, note: Note, envelope: dict[str, Any]) -> bool:
    """Whether the principal of ``envelope`` may change ``note`` (the CHANGE rule of
    :mod:`remem.policy.authz`), so that a rule acting on their write may retire it:
    owners and admins anything; others what they wrote, a person their own user notes,
    a steward their channel's notes. A newer statement by someone who may not change
    a note leaves it live rather than retiring it behind their back."""
    role: str | None = envelope.get("role")
    actor: str | None = envelope.get("actor")
    if role in ("owner", "admin"):
        return True
    if actor is None:
        return False
    if note.created_by == actor:
        return True
    if role != "member":
        return False
    if note.scope is Scope.USER:
        return note.scope_id == actor
    if note.scope is Scope.CHANNEL:
        stewards = state.channel_policies.get(note.scope_id or "", {}).get("stewards", ())
        return actor in stewards
    return False


def undo_events(state: State, revision_ids: Iterable[str], envelope: dict[str, Any]) -> list[Event]:
    """Restore the retired notes of the given (not yet undone) revisions.

    A replacing note that no longer replaces anything once these are undone is
    disabled (not forgotten: ``enable`` brings it back), so the restored note
    is what recall shows again.
    """
    events: list[Event] = []
    undone = set()
    for rev_id in revision_ids:
        rev = state.revisions.get(rev_id)
        if rev is None or rev.undone:
            continue
        note = state.notes.get(rev.retired)
        if note is None or note.status is not Status.SUPERSEDED:
            continue
        undone.add(rev_id)
        events.append(
            Restored(note_id=rev.retired, revision_id=rev_id, **{**envelope, "eid": new_id("ev")})
        )
    replacements = {state.revisions[r].replacement for r in undone}
    for replacement in sorted(replacements):
        still = [
            r
            for r in state.revisions.values()
            if r.replacement == replacement and not r.undone and r.id not in undone
        ]
        note = state.notes.get(replacement)
        if not still and note is not None and note.status is Status.ACTIVE:
            events.append(Disabled(note_id=replacement, **{**envelope, "eid": new_id("ev")}))
    return events

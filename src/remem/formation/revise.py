"""Belief revision: supersession by subject, manual supersession, revisions and undo.

Every retirement of a note is a :class:`~remem.core.events.Superseded` event
that doubles as a revision row (retired note, replacing note, how, reason,
actor, run). Undoing a revision restores the retired note, leaves the
replacing note in place and records the pair as a veto (by ids and by keyed
hashes of what the two notes say, see :mod:`remem.core.veto`): the same note
never retires the same note again, whichever rule proposes it. Pinned notes
are never retired by an automatic path.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from remem.core.events import Event, Restored, Superseded
from remem.core.ids import new_id
from remem.core.model import Note, Scope, Status
from remem.core.projection import State
from remem.core.veto import Said, Vetoes

SUBJECT_RULE = "subject_rule"
BELIEF_REVISION = "belief_revision"
CONSOLIDATION = "consolidation"
MANUAL = "manual"


def retire(
    vetoes: Vetoes,
    retired: Note,
    replacement: Said,
    how: str,
    reason: str,
    envelope: dict[str, Any],
) -> list[Event]:
    """A ``Superseded`` event, unless vetoed or (for automatic paths) the note is pinned."""
    if retired.pinned and how != MANUAL:
        return []
    if vetoes.forbids(replacement, Said.of(retired)):
        return []
    # A fresh event id each: one envelope may retire several notes in one write, and the
    # log drops a repeated event id as a retried duplicate.
    return [
        Superseded(
            note_id=retired.id,
            by=replacement.id,
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
    text: str,
    vetoes: Vetoes,
) -> list[Event]:
    """Supersede by ``said_at``: a newer statement retires older ones on the same subject
    (those its writer may change); a statement older than the live one is itself retired
    (dated history stays searchable). ``text``: what the new note says; no retirement
    ``vetoes`` forbids is made."""
    events: list[Event] = []
    said = Said(note_id, text, subject)
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
            text=text,
            basis=latest.basis,
            status=Status.ACTIVE,
            created_at=said_at,
            said_at=said_at,
            updated_at=said_at,
            subject=subject,
        )
        return retire(vetoes, placeholder, Said.of(latest), SUBJECT_RULE, reason, envelope)
    for old in live:
        if may_change(state, old, envelope):
            events += retire(vetoes, old, said, SUBJECT_RULE, reason, envelope)
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


def undo_events(
    state: State, vetoes: Vetoes, revision_ids: Iterable[str], envelope: dict[str, Any]
) -> list[Event]:
    """Restore the retired notes of the given (not yet undone) revisions.

    The replacing note stays as it is (an undo takes back a retirement, not the
    other statement). Each restore carries the keyed hashes of what the two
    notes say, so the veto also holds against a new note saying the same.
    """
    events: list[Event] = []
    for rev_id in revision_ids:
        rev = state.revisions.get(rev_id)
        if rev is None or rev.undone:
            continue
        note = state.notes.get(rev.retired)
        if note is None or note.status is not Status.SUPERSEDED:
            continue
        replacement = state.notes.get(rev.replacement)
        veto: tuple[str, ...] = ()
        if replacement is not None and replacement.status is not Status.FORGOTTEN:
            veto = vetoes.pair(Said.of(replacement), Said.of(note))
        events.append(
            Restored(
                note_id=rev.retired,
                revision_id=rev_id,
                veto=veto,
                **{**envelope, "eid": new_id("ev")},
            )
        )
    return events

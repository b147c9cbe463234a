"""The change use cases: forget, correct, move, disable, enable, pin, unpin.

Each builds its event against the state under the agent's writer lock: the note must
be visible, changeable by the envelope (:meth:`Kernel.require`), at ``if_version`` when
given (``Conflict`` otherwise) and live. Inside :func:`remem.app.idempotency.idempotent`
(an HTTP ``Idempotency-Key``) the event's id comes from the key, so the same request sent
again is answered with the note instead of being applied twice (or refused by its own
first attempt's new version), and the key sent with another request is refused. The note
a change answers with passes the check of a read (:meth:`Kernel.given`): ``NotFound``
if the envelope may no longer see it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from remem.app.idempotency import current, replayed, stamp
from remem.app.kernel import Kernel
from remem.core.events import (
    Corrected,
    Disabled,
    Enabled,
    Event,
    Forgotten,
    NoteEvent,
    Pinned,
    Unpinned,
)
from remem.core.model import LIVE_STATUSES, Note, Scope, Status, parse_enum
from remem.core.projection import State
from remem.core.text import canonical_text
from remem.errors import Conflict, InvalidInput
from remem.policy.authz import Action, Target
from remem.policy.guard import check_note_text

#: Makes a change's event for a note and the call's envelope (``None``: nothing to do).
MakeEvent = Callable[[Note, dict[str, Any]], NoteEvent | None]
_FORGETTABLE = (*LIVE_STATUSES, Status.SUPERSEDED, Status.EXPIRED, Status.REJECTED)


def change(
    k: Kernel,
    note_id: str,
    if_version: int | None,
    make: MakeEvent,
    *,
    allowed: Iterable[Status] = LIVE_STATUSES,
) -> Note:
    """Apply ``make``'s event to note ``note_id`` under the writer lock; returns the note,
    if the envelope may see it now."""
    agent = k.agent  # write() catches up under the lock before build()
    allowed_set = frozenset(allowed)
    if if_version is not None and (type(if_version) is not int or if_version < 1):
        raise InvalidInput("if_version must be a note version (a whole number from 1) or None")

    keyed = current()  # read in the caller's thread (build may run on another)

    def build(state: State) -> tuple[list[Event], str]:
        if keyed is not None:
            done = replayed(agent.log, keyed)  # InvalidInput: another request's key
            if done is not None:  # applied already: the same request sent again
                return [], done
        note = _changeable(k, state, note_id, if_version, allowed_set)
        envelope = k.envelope()
        if keyed is not None:  # the event a retry finds by its id
            envelope.update(stamp(keyed))
        event = make(note, envelope)
        return ([event] if event else []), note.id

    return k.given(agent.write(build))


def _changeable(
    k: Kernel, state: State, note_id: str, if_version: int | None, allowed: frozenset[Status]
) -> Note:
    """The note, if this envelope may change it at ``if_version`` in its status."""
    note = k.visible(state, note_id)
    k.require(state, Action.CHANGE, k.target(note))
    if if_version is not None and note.version != if_version:
        raise Conflict(
            f"note {note_id} is at version {note.version}, not {if_version}; "
            "read it again and retry",
            current=note,
        )
    if note.status not in allowed:
        raise InvalidInput(f"note {note_id} is {note.status.value}; this change needs a live note")
    return note


def forget(k: Kernel, note_id: str, *, if_version: int | None = None) -> Note:
    """Tombstone a note: it leaves recall and listings; compaction erases its content."""
    return change(
        k,
        note_id,
        if_version,
        lambda n, env: Forgotten(note_id=n.id, **env),
        allowed=_FORGETTABLE,
    )


def correct(k: Kernel, note_id: str, text: str, *, if_version: int | None = None) -> Note:
    """Replace a note's text; the old text stays in ``history`` (until forgotten)."""
    text = canonical_text(text)  # the same stored form as remember()
    check_note_text(text, max_chars=k.limits().max_note_chars)

    def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
        k.require_plaintext()  # under the writer lock, after the note's own checks
        k.require_plaintext_into(note.scope, note.scope_id)
        if note.text == text:
            return None
        return Corrected(note_id=note.id, text=text, **env)

    return change(k, note_id, if_version, make)


def move(
    k: Kernel,
    note_id: str,
    *,
    scope: Scope | str,
    scope_id: str | None = None,
    if_version: int | None = None,
) -> Note:
    """Move a note to another scope (a correction event); the target is authorized too."""
    new_scope = parse_enum(Scope, scope, "scope")
    state = k.state()
    target_id = k.resolve_scope_id(new_scope, scope_id)
    k.require(state, Action.CREATE, Target(new_scope, target_id, k.ctx.actor))

    def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
        if note.scope is new_scope and note.scope_id == target_id:
            return None
        k.require_plaintext_into(new_scope, target_id)  # no plaintext into an encrypted DM
        return Corrected(note_id=note.id, scope=new_scope, scope_id=target_id, **env)

    return change(k, note_id, if_version, make)


def disable(k: Kernel, note_id: str, *, if_version: int | None = None) -> Note:
    """Keep the note but stop recalling it."""

    def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
        return None if note.status is Status.DISABLED else Disabled(note_id=note.id, **env)

    return change(k, note_id, if_version, make)


def enable(k: Kernel, note_id: str, *, if_version: int | None = None) -> Note:
    """Return a disabled note to recall."""

    def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
        if note.status is not Status.DISABLED:
            return None
        return Enabled(note_id=note.id, **env)

    return change(k, note_id, if_version, make)


def pin(k: Kernel, note_id: str, *, if_version: int | None = None) -> Note:
    """Pinned notes rank first and are never retired by an automatic path."""
    return change(
        k, note_id, if_version, lambda n, env: None if n.pinned else Pinned(note_id=n.id, **env)
    )


def unpin(k: Kernel, note_id: str, *, if_version: int | None = None) -> Note:
    """Pinned no more."""
    return change(
        k, note_id, if_version, lambda n, env: Unpinned(note_id=n.id, **env) if n.pinned else None
    )

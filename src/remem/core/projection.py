"""The projection: a deterministic fold from events to notes and policy state.

:func:`fold_note` is a pure function from (previous note, event) to the next
note. :class:`State` applies events in log order and keeps the derived lookups
(notes by scope, live notes by normalized text, channel policies, participant
preferences, revisions and vetoes). The same events always give the same state;
nothing here reads a clock, a file or the network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from remem.core.events import (
    Approved,
    ChannelPolicySet,
    Corrected,
    Disabled,
    Enabled,
    Erased,
    Event,
    Forgotten,
    NoteEvent,
    Pinned,
    PreferencesSet,
    Refused,
    Reinforced,
    Remembered,
    Restored,
    Superseded,
    Unpinned,
)
from remem.core.model import LIVE_STATUSES, Note, Scope, Status, normalize_text

ScopeKey = tuple[Scope, str | None]


def scope_key(scope: Scope, scope_id: str | None) -> ScopeKey:
    return (scope, None if scope is Scope.AGENT else scope_id)


@dataclass(slots=True)
class Revision:
    """One retirement of a note in favour of another, and whether it was undone."""

    id: str
    retired: str
    replacement: str
    how: str
    reason: str
    actor: str | None
    run_id: str | None
    ts: datetime
    undone: bool = False
    undone_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        from remem.core.model import format_ts

        return {
            "id": self.id,
            "retired": self.retired,
            "replacement": self.replacement,
            "how": self.how,
            "reason": self.reason,
            "actor": self.actor,
            "run_id": self.run_id,
            "ts": format_ts(self.ts),
            "undone": self.undone,
            "undone_at": format_ts(self.undone_at) if self.undone_at else None,
        }


def _remembered(agent: str, ev: Remembered) -> Note:
    return Note(
        id=ev.note_id,
        agent=agent,
        scope=ev.scope,
        scope_id=ev.scope_id,
        kind=ev.kind,
        text=ev.text,
        basis=ev.basis,
        status=ev.status,
        created_at=ev.ts,
        said_at=ev.said_at or ev.ts,
        updated_at=ev.ts,
        created_by=ev.actor,
        pinned=ev.pinned,
        subject=ev.subject,
        tags=ev.tags,
        source=ev.source,
        expires_at=ev.expires_at,
    )


def _corrected(note: Note, ev: Corrected) -> Note:
    return note.evolve(
        text=ev.text if ev.text is not None else note.text,
        scope=ev.scope if ev.scope is not None else note.scope,
        scope_id=ev.scope_id if ev.scope is not None else note.scope_id,
        kind=ev.kind if ev.kind is not None else note.kind,
        updated_at=ev.ts,
        version=note.version + 1,
    )


_STATUS_AFTER: dict[type[NoteEvent], Status] = {
    Disabled: Status.DISABLED,
    Enabled: Status.ACTIVE,
    Forgotten: Status.FORGOTTEN,
    Approved: Status.ACTIVE,
    Refused: Status.REJECTED,
}


def fold_note(agent: str, note: Note | None, event: NoteEvent) -> Note | None:
    """The note after ``event``; ``None`` when the event creates nothing and no note exists.

    Pure: depends only on its arguments. A forgotten note keeps its id and
    status but loses its text, so nothing downstream can show it again.
    """
    if isinstance(event, Remembered):
        return note if note is not None else _remembered(agent, event)
    if note is None:
        return None
    if isinstance(event, Reinforced):
        return note.evolve(
            evidence=note.evidence + 1, updated_at=event.ts, version=note.version + 1
        )
    if isinstance(event, Corrected):
        return _corrected(note, event)
    if isinstance(event, Pinned | Unpinned):
        return note.evolve(
            pinned=isinstance(event, Pinned), updated_at=event.ts, version=note.version + 1
        )
    if isinstance(event, Superseded):
        return note.evolve(
            status=Status.SUPERSEDED,
            superseded_by=event.by,
            updated_at=event.ts,
            version=note.version + 1,
        )
    if isinstance(event, Restored):
        return note.evolve(
            status=Status.ACTIVE, superseded_by=None, updated_at=event.ts, version=note.version + 1
        )
    status = _STATUS_AFTER.get(type(event))
    if status is None:
        return note
    text = "" if status is Status.FORGOTTEN else note.text
    return note.evolve(status=status, text=text, updated_at=event.ts, version=note.version + 1)


def _index_changed(before: Note, after: Note) -> bool:
    return (
        before.scope is not after.scope
        or before.scope_id != after.scope_id
        or before.text != after.text
        or (before.status in LIVE_STATUSES) != (after.status in LIVE_STATUSES)
    )


@dataclass(slots=True)
class State:
    """Everything derived from one agent's log."""

    agent: str
    notes: dict[str, Note] = field(default_factory=dict)
    scopes: dict[ScopeKey, dict[str, None]] = field(default_factory=dict)
    # normalized text → ids of live notes, built per scope on first use (dedupe on
    # write), then kept in step.
    by_text: dict[ScopeKey, dict[str, list[str]]] = field(default_factory=dict)
    channel_policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    preferences: dict[str, dict[str, Any]] = field(default_factory=dict)
    revisions: dict[str, Revision] = field(default_factory=dict)
    vetoes: set[tuple[str, str]] = field(default_factory=set)
    erased: dict[str, str] = field(default_factory=dict)
    events: int = 0

    def apply(self, event: Event) -> Note | None:
        """Fold one event in; returns the note it changed, if any."""
        self.events += 1
        if isinstance(event, ChannelPolicySet):
            merged = dict(self.channel_policies.get(event.target, {}))
            merged.update(event.settings)
            self.channel_policies[event.target] = merged
            return None
        if isinstance(event, PreferencesSet):
            prefs = dict(self.preferences.get(event.user, {}))
            prefs.update(event.settings)
            self.preferences[event.user] = prefs
            return None
        if isinstance(event, Erased):
            self._drop(event.note_id)
            self.erased[event.note_id] = event.final_status
            return None
        if not isinstance(event, NoteEvent):
            return None
        return self._apply_note(event)

    def _apply_note(self, event: NoteEvent) -> Note | None:
        before = self.notes.get(event.note_id)
        after = fold_note(self.agent, before, event)
        if after is None or after is before:
            return after
        self._track_revision(event)
        if before is None or _index_changed(before, after):
            self._unindex(before)
            self._index(after)
        self.notes[after.id] = after
        return after

    def _track_revision(self, event: NoteEvent) -> None:
        if isinstance(event, Superseded):
            self.revisions[event.revision_id] = Revision(
                id=event.revision_id,
                retired=event.note_id,
                replacement=event.by,
                how=event.how,
                reason=event.reason,
                actor=event.actor,
                run_id=event.run_id,
                ts=event.ts,
            )
        elif isinstance(event, Restored):
            rev = self.revisions.get(event.revision_id)
            if rev is not None:
                rev.undone = True
                rev.undone_at = event.ts
                self.vetoes.add((rev.replacement, rev.retired))

    def _index(self, note: Note) -> None:
        key = scope_key(note.scope, note.scope_id)
        self.scopes.setdefault(key, {})[note.id] = None
        texts = self.by_text.get(key)
        if texts is not None and note.status in LIVE_STATUSES:
            texts.setdefault(normalize_text(note.text), []).append(note.id)

    def _unindex(self, note: Note | None) -> None:
        if note is None:
            return
        key = scope_key(note.scope, note.scope_id)
        members = self.scopes.get(key)
        if members is not None:
            members.pop(note.id, None)
        texts = self.by_text.get(key)
        if texts is not None:
            norm = normalize_text(note.text)
            ids = texts.get(norm)
            if ids is not None and note.id in ids:
                ids.remove(note.id)
                if not ids:
                    del texts[norm]

    def _drop(self, note_id: str) -> None:
        note = self.notes.pop(note_id, None)
        self._unindex(note)

    def in_scope(self, scope: Scope, scope_id: str | None) -> list[Note]:
        """Notes whose home is the given scope, in id (creation) order."""
        ids = self.scopes.get(scope_key(scope, scope_id), {})
        return [self.notes[i] for i in ids]

    def find_same(
        self,
        scope: Scope,
        scope_id: str | None,
        text: str,
        statuses: frozenset[Status] = LIVE_STATUSES,
    ) -> Note | None:
        """The oldest note in the same scope, with one of ``statuses``, whose normalized
        text equals ``text``'s."""
        key = scope_key(scope, scope_id)
        texts = self.by_text.get(key)
        if texts is None:
            texts = self.by_text[key] = {}
            for note in self.in_scope(scope, scope_id):
                if note.status in LIVE_STATUSES:
                    texts.setdefault(normalize_text(note.text), []).append(note.id)
        for note_id in sorted(texts.get(normalize_text(text), ())):
            match = self.notes.get(note_id)
            if match is not None and match.status in statuses:
                return match
        return None

"""The projection: a deterministic, pure fold from events to notes and policy state.

:func:`fold_note` is a pure function from (previous note, event) to the next
note. :class:`State` applies events in log order and keeps the derived lookups
(notes by scope, live notes by normalized text, channel policies, participant
preferences, revisions and vetoes). The same events always give the same state;
nothing here reads a clock, a file or the network, nor knows how events are
stored. (The embedded store folds lazily, a scope at a time, and keeps a catalog
snapshot: that is :class:`remem.store.catalog.CatalogState`, a subclass.)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from remem.core.events import (
    Approved,
    ChannelKindSet,
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
from remem.core.model import LIVE_STATUSES, Note, Scope, Status, normalize_text, parse_ts

ScopeKey = tuple[Scope, str | None]
_SERIALS = itertools.count(1)


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Revision:
        ts = parse_ts(data["ts"])
        assert ts is not None
        return cls(
            id=data["id"],
            retired=data["retired"],
            replacement=data["replacement"],
            how=data["how"],
            reason=data["reason"],
            actor=data.get("actor"),
            run_id=data.get("run_id"),
            ts=ts,
            undone=bool(data.get("undone")),
            undone_at=parse_ts(data.get("undone_at")),
        )

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


@dataclass(frozen=True, slots=True)
class ChannelKind:
    """A channel's recorded kind (``dm`` or ``group``), a DM's one ``member``, and who
    recorded it: ``how`` (first_use, backfill, set), the recording principal's role
    ceiling, the run's actor and role (see :class:`~remem.core.events.ChannelKindSet`)."""

    kind: str
    member: str | None
    how: str
    ceiling: str | None
    actor: str | None
    role: str | None

    @classmethod
    def of(cls, ev: ChannelKindSet) -> ChannelKind:
        return cls(ev.run_kind, ev.member, ev.how, ev.ceiling, ev.actor, ev.role)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "member": self.member,
            "how": self.how,
            "ceiling": self.ceiling,
            "actor": self.actor,
            "role": self.role,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChannelKind:
        return cls(
            data["kind"],
            data.get("member"),
            data["how"],
            data.get("ceiling"),
            data.get("actor"),
            data.get("role"),
        )


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
        last_change="move" if ev.text is None and ev.scope is not None else ev.op,
    )


def _changed(note: Note, event: NoteEvent) -> dict[str, Any]:
    """What every change sets: when, the next version, and what it was (for receipts)."""
    return {"updated_at": event.ts, "version": note.version + 1, "last_change": event.op}


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
        return note.evolve(evidence=note.evidence + 1, **_changed(note, event))
    if isinstance(event, Corrected):
        return _corrected(note, event)
    if isinstance(event, (Pinned, Unpinned)):
        return note.evolve(pinned=isinstance(event, Pinned), **_changed(note, event))
    if isinstance(event, Superseded):
        return note.evolve(
            status=Status.SUPERSEDED, superseded_by=event.by, **_changed(note, event)
        )
    if isinstance(event, Restored):
        return note.evolve(status=Status.ACTIVE, superseded_by=None, **_changed(note, event))
    status = _STATUS_AFTER.get(type(event))
    if status is None:
        return note
    text = "" if status is Status.FORGOTTEN else note.text
    return note.evolve(status=status, text=text, **_changed(note, event))


def _index_changed(before: Note, after: Note) -> bool:
    return (
        before.scope is not after.scope
        or before.scope_id != after.scope_id
        or before.text != after.text
        or (before.status in LIVE_STATUSES) != (after.status in LIVE_STATUSES)
    )


class Notes(Mapping[str, Note]):
    """The notes of a :class:`State` by id. ``loaded`` looks a note up without making a
    lazily folded state (a subclass) load anything; here every note is always folded."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Note]) -> None:
        self._data = data

    def __getitem__(self, note_id: str) -> Note:
        return self._data[note_id]

    def get(self, note_id: str, default: Note | None = None) -> Note | None:  # type: ignore[override]
        return self._data.get(note_id, default)

    def __contains__(self, note_id: object) -> bool:
        return note_id in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)

    def loaded(self, note_id: str) -> Note | None:
        """The note if it is folded, without loading anything."""
        return self._data.get(note_id)


class State:
    """Everything derived from one agent's events (see the module docstring).

    ``scopes`` and ``home`` say which note lives in which scope; :meth:`ensure`
    materializes a scope's notes (a no-op here: every note is folded as its events
    are applied; a lazily folded subclass loads them).
    """

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self._notes: dict[str, Note] = {}
        self.notes: Notes = Notes(self._notes)
        self.scopes: dict[ScopeKey, dict[str, None]] = {}
        self.home: dict[str, ScopeKey] = {}
        # normalized text → ids of live notes, built per scope on first use (dedupe on
        # write), then kept in step.
        self.by_text: dict[ScopeKey, dict[str, list[str]]] = {}
        self.channel_policies: dict[str, dict[str, Any]] = {}
        #: Each channel's recorded kind, the one fact a run's envelope is checked against.
        self.channel_kinds: dict[str, ChannelKind] = {}
        self.preferences: dict[str, dict[str, Any]] = {}
        self.preferences_version = 0
        #: Bumped whenever channel policy or participant choices change: authorization and
        #: limits depend on nothing else in the state.
        self.policy_version = 0
        #: Unique per state object (derived caches must never mistake one state for another).
        self.serial = next(_SERIALS)
        self.revisions: dict[str, Revision] = {}
        self.vetoes: set[tuple[str, str]] = set()
        #: The same vetoes keyed by what the notes say (see remem.core.veto).
        self.veto_keys: set[tuple[str, str]] = set()
        self.erased: dict[str, str] = {}
        self.events = 0
        #: Bumped whenever a note of that scope changes: derived caches key on it.
        self.scope_versions: dict[ScopeKey, int] = {}

    def ensure(self, key: ScopeKey) -> None:
        """Materialize every note of one scope (here they always are)."""

    def ensure_all(self) -> None:
        for key in list(self.scopes):
            self.ensure(key)

    # -- membership: which scope each note lives in ------------------------------------------

    def _place(self, note: Note) -> None:
        """Keep ``home``/``scopes`` in step with a folded note (a lazily folded state
        knows membership from its catalog instead, and overrides this)."""
        self._move(note.id, scope_key(note.scope, note.scope_id))

    def _move(self, note_id: str, key: ScopeKey) -> None:
        old = self.home.get(note_id)
        if old == key:
            return
        if old is not None:
            self.scopes.get(old, {}).pop(note_id, None)
        self.home[note_id] = key
        self.scopes.setdefault(key, {})[note_id] = None

    def _unplace(self, note_id: str) -> None:
        key = self.home.pop(note_id, None)
        if key is not None:
            members = self.scopes.get(key)
            if members is not None:
                members.pop(note_id, None)
                if not members:
                    del self.scopes[key]

    # -- folding -------------------------------------------------------------------------------

    def apply(self, event: Event) -> Note | None:
        """Fold one event in; returns the note it changed, if any."""
        self.events += 1
        if isinstance(event, ChannelPolicySet):
            merged = dict(self.channel_policies.get(event.target, {}))
            merged.update(event.settings)
            self.channel_policies[event.target] = merged
            self.policy_version += 1
            return None
        if isinstance(event, ChannelKindSet):
            self.channel_kinds[event.target] = ChannelKind.of(event)
            self.policy_version += 1
            return None
        if isinstance(event, PreferencesSet):
            prefs = dict(self.preferences.get(event.user, {}))
            prefs.update(event.settings)
            self.preferences[event.user] = prefs
            self.preferences_version += 1
            self.policy_version += 1
            return None
        if isinstance(event, Erased):
            self._drop(event.note_id)
            self._unplace(event.note_id)
            self.erased[event.note_id] = event.final_status
            return None
        if not isinstance(event, NoteEvent):
            return None
        return self._apply_note(event)

    def _apply_note(self, event: NoteEvent) -> Note | None:
        data = self._notes
        before = data.get(event.note_id)
        after = fold_note(self.agent, before, event)
        self._track_revision(event)
        if after is None or after is before:
            return after
        if before is None or _index_changed(before, after):
            self._unindex(before)
            self._index(after)
        if before is not None and (before.scope, before.scope_id) != (after.scope, after.scope_id):
            self._bump(scope_key(before.scope, before.scope_id))
        self._bump(scope_key(after.scope, after.scope_id))
        data[after.id] = after
        self._place(after)
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
                if len(event.veto) == 2:
                    self.veto_keys.add((event.veto[0], event.veto[1]))

    def _bump(self, key: ScopeKey) -> None:
        self.scope_versions[key] = self.scope_versions.get(key, 0) + 1

    def _index(self, note: Note) -> None:
        key = scope_key(note.scope, note.scope_id)
        texts = self.by_text.get(key)
        if texts is not None and note.status in LIVE_STATUSES:
            texts.setdefault(normalize_text(note.text), []).append(note.id)

    def _unindex(self, note: Note | None) -> None:
        if note is None:
            return
        key = scope_key(note.scope, note.scope_id)
        texts = self.by_text.get(key)
        if texts is not None:
            norm = normalize_text(note.text)
            ids = texts.get(norm)
            if ids is not None and note.id in ids:
                ids.remove(note.id)
                if not ids:
                    del texts[norm]

    def _drop(self, note_id: str) -> None:
        note = self._notes.pop(note_id, None)
        self._unindex(note)
        if note is not None:
            self._bump(scope_key(note.scope, note.scope_id))

    def in_scope(self, scope: Scope, scope_id: str | None) -> list[Note]:
        """Notes whose home is the given scope (materializing it on first use)."""
        key = scope_key(scope, scope_id)
        self.ensure(key)
        data = self._notes
        return [data[i] for i in list(self.scopes.get(key, ())) if i in data]

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

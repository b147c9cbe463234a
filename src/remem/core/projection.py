"""The projection: a deterministic fold from events to notes and policy state.

:func:`fold_note` is a pure function from (previous note, event) to the next
note. :class:`State` applies events in log order and keeps the derived lookups
(notes by scope, live notes by normalized text, channel policies, participant
preferences, revisions and vetoes). The same events always give the same state;
nothing here reads a clock, a file or the network.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

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
    from_dict,
)
from remem.core.model import LIVE_STATUSES, Note, Scope, Status, normalize_text, parse_ts

ScopeKey = tuple[Scope, str | None]
_SERIALS = itertools.count(1)
#: How many notes a lazily folded state keeps in memory before evicting whole scopes.
MAX_LOADED_NOTES = 250_000
_SCOPES = {m.value: m for m in Scope}


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


def _moved_key(data: dict[str, Any]) -> ScopeKey | None:
    """The new home of a note when a raw ``correct`` record moves it."""
    if data.get("op") != "correct" or data.get("scope") is None:
        return None
    return scope_key(_SCOPES[data["scope"]], data.get("scope_id"))


def _event_home(event: NoteEvent) -> ScopeKey | None:
    """The scope an event puts its note in (a new note, or a move), else None."""
    if isinstance(event, (Remembered, Corrected)) and event.scope is not None:
        return scope_key(event.scope, event.scope_id)
    return None


def _index_changed(before: Note, after: Note) -> bool:
    return (
        before.scope is not after.scope
        or before.scope_id != after.scope_id
        or before.text != after.text
        or (before.status in LIVE_STATUSES) != (after.status in LIVE_STATUSES)
    )


class LazyNotes(Mapping[str, Note]):
    """The notes of a :class:`State`, materialized one scope at a time on first access.

    Looking a note up folds its whole scope from the log (through the state's
    loader); iterating folds every scope. With no loader every note is always
    materialized.
    """

    __slots__ = ("_data", "_state")

    def __init__(self, state: State) -> None:
        self._data: dict[str, Note] = {}
        self._state = state

    def __getitem__(self, note_id: str) -> Note:
        note = self.get(note_id)
        if note is None:
            raise KeyError(note_id)
        return note

    def get(self, note_id: str, default: Note | None = None) -> Note | None:  # type: ignore[override]
        note = self._data.get(note_id)
        if note is not None:
            return note
        key = self._state.home.get(note_id)
        if key is None or key in self._state.loaded:
            return default
        self._state.ensure(key)
        return self._data.get(note_id, default)

    def __contains__(self, note_id: object) -> bool:
        return note_id in self._data or note_id in self._state.home

    def __iter__(self) -> Iterator[str]:
        # Scope by scope, so that reading every note (``values()``) folds each scope once
        # even when older scopes are evicted along the way.
        state = self._state
        for key in list(state.scopes):
            yield from list(state.scopes.get(key, ()))

    def __len__(self) -> int:
        return len(self._state.home)

    def values(self) -> ValuesView[Note]:
        """Every note; one another thread is still writing (cataloged, not yet folded)
        or has just erased is left out rather than raising ``KeyError``."""
        return _PresentValues(self)

    def items(self) -> ItemsView[str, Note]:
        """As :meth:`values`, with ids."""
        return _PresentItems(self)

    def present(self) -> Iterator[tuple[str, Note]]:
        """(id, note) for every note that can be read now (see :meth:`values`)."""
        for note_id in self:
            note = self.get(note_id)
            if note is not None:
                yield note_id, note

    def loaded(self, note_id: str) -> Note | None:
        """The note if it is materialized, without loading anything."""
        return self._data.get(note_id)


class _PresentValues(ValuesView[Note]):
    _mapping: LazyNotes

    def __iter__(self) -> Iterator[Note]:
        return (note for _, note in self._mapping.present())


class _PresentItems(ItemsView[str, Note]):
    _mapping: LazyNotes

    def __iter__(self) -> Iterator[tuple[str, Note]]:
        return self._mapping.present()


Loader = Callable[[Sequence[int]], list[Event]]


class State:
    """Everything derived from one agent's log.

    Membership (which note lives in which scope, and where its events are in
    the log) is known for every note from a cheap scan of the log; the notes
    themselves are folded per scope when first needed (``loader`` reads events
    back by position). Channel policies, preferences and revisions are always
    folded. ``on_load`` is told the events folded by a lazy load, so indexes
    can follow.
    """

    def __init__(self, agent: str, loader: Loader | None = None) -> None:
        self.agent = agent
        self.notes = LazyNotes(self)
        self.scopes: dict[ScopeKey, dict[str, None]] = {}
        self.home: dict[str, ScopeKey] = {}
        self.positions: dict[str, int | list[int]] = {}
        self.loaded: set[ScopeKey] = set()
        self.loader = loader
        #: Folded scopes, least recently used first, and how many notes they hold; past
        #: ``max_loaded`` notes the oldest scopes are dropped from memory (folded again
        #: from the log when next needed) and ``on_evict`` is told.
        self.max_loaded = MAX_LOADED_NOTES
        self.on_evict: Callable[[ScopeKey], None] | None = None
        self._lru: OrderedDict[ScopeKey, int] = OrderedDict()
        self._loaded_notes = 0
        self._keys: dict[tuple[str, str | None], ScopeKey] = {}
        self.on_load: Callable[[list[Event]], None] | None = None
        # normalized text → ids of live notes, built per scope on first use (dedupe on
        # write), then kept in step.
        self.by_text: dict[ScopeKey, dict[str, list[str]]] = {}
        self.channel_policies: dict[str, dict[str, Any]] = {}
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

    # -- the catalog: membership and positions of every note --------------------------------

    def _is_loaded(self, key: ScopeKey) -> bool:
        return self.loader is None or key in self.loaded

    def _record(self, note_id: str, pos: int | None, key: ScopeKey | None) -> None:
        if pos is not None:
            seen = self.positions.get(note_id)
            if seen is None:
                self.positions[note_id] = pos
            elif isinstance(seen, int):
                self.positions[note_id] = [seen, pos]
            else:
                seen.append(pos)
        if key is None:
            return
        old = self.home.get(note_id)
        if old == key:
            return
        if old is not None:
            self.scopes.get(old, {}).pop(note_id, None)
        self.home[note_id] = key
        self.scopes.setdefault(key, {})[note_id] = None

    def _forget_catalog(self, note_id: str) -> None:
        key = self.home.pop(note_id, None)
        self.positions.pop(note_id, None)
        if key is not None:
            members = self.scopes.get(key)
            if members is not None:
                members.pop(note_id, None)
                if not members:
                    del self.scopes[key]

    def observe(self, data: dict[str, Any], pos: int) -> list[Event]:
        """Take one raw log record at ``pos``; fold it only if its note is materialized.

        Returns the events folded (for index listeners). This runs once per log line
        when a store opens, so the common case (a new note in a scope nobody has
        looked at) is kept to a few dictionary operations.
        """
        op = data["op"]
        if op == "remember":
            note_id = data["id"]
            raw = (data["scope"], data.get("scope_id"))
            key = self._keys.get(raw)
            if key is None:
                key = self._keys[raw] = scope_key(_SCOPES[raw[0]], raw[1])
            if note_id in self.home:
                self._record(note_id, pos, key)
            else:
                self.positions[note_id] = pos
                self.home[note_id] = key
                members = self.scopes.get(key)
                if members is None:
                    members = self.scopes[key] = {}
                members[note_id] = None
            if self.loader is None or key in self.loaded:
                return self._fold_now(data)
            return []
        note_id = data.get("note_id")
        if note_id is None or op == "erased":
            return self._fold_now(data)
        self._record(note_id, pos, _moved_key(data))
        if self.notes.loaded(note_id) is not None:
            return self._fold_now(data)
        home = self.home.get(note_id)
        if home is not None and self._is_loaded(home):
            return self._load_notes([note_id])
        if op in ("supersede", "restore"):
            self._track_revision(cast(NoteEvent, from_dict(data)))
        return []

    def _fold_now(self, data: dict[str, Any]) -> list[Event]:
        event = from_dict(data)
        self.apply(event)
        return [event]

    def record(self, event: Event, pos: int | None) -> None:
        """Fold an event this process wrote (at ``pos`` in the log) and catalog it."""
        if isinstance(event, NoteEvent) and not isinstance(event, Erased):
            self._record(event.note_id, pos, _event_home(event))
        if (
            isinstance(event, NoteEvent)
            and not isinstance(event, (Erased, Remembered))
            and self.notes.loaded(event.note_id) is None
        ):
            key = self.home.get(event.note_id)
            if key is not None and not self._is_loaded(key):
                self._track_revision(event)
                return
        self.apply(event)

    def catalog(self) -> dict[str, Any]:
        """The catalog and the always-folded state as plain JSON data (see :meth:`adopt`)."""
        keys: dict[ScopeKey, int] = {}
        home_idx = []
        for key in self.home.values():
            idx = keys.get(key)
            if idx is None:
                idx = keys[key] = len(keys)
            home_idx.append(idx)
        return {
            "keys": [[k[0].value, k[1]] for k in keys],
            "ids": list(self.home),
            "home": home_idx,
            "positions": list(map(self.positions.get, self.home)),
            "channel_policies": self.channel_policies,
            "preferences": self.preferences,
            "revisions": [r.to_dict() for r in self.revisions.values()],
            "vetoes": sorted(self.vetoes),
            "veto_keys": sorted(self.veto_keys),
            "erased": self.erased,
            "events": self.events,
        }

    def adopt(self, data: dict[str, Any]) -> None:
        """Take a catalog written by :meth:`catalog` (into a fresh, empty state)."""
        keys = [scope_key(_SCOPES[scope], scope_id) for scope, scope_id in data["keys"]]
        self._keys = {(k[0].value, k[1]): k for k in keys}
        ids = data["ids"]
        homes = [keys[i] for i in data["home"]]
        self.home = dict(zip(ids, homes, strict=True))
        self.positions = dict(zip(ids, data["positions"], strict=True))
        scopes: dict[ScopeKey, dict[str, None]] = {}
        for note_id, key in zip(ids, homes, strict=True):
            members = scopes.get(key)
            if members is None:
                members = scopes[key] = {}
            members[note_id] = None
        self.scopes = scopes
        self.channel_policies = data["channel_policies"]
        self.preferences = data["preferences"]
        self.preferences_version += 1
        self.policy_version += 1
        self.revisions = {r["id"]: Revision.from_dict(r) for r in data["revisions"]}
        self.vetoes = {(a, b) for a, b in data["vetoes"]}
        self.veto_keys = {(a, b) for a, b in data.get("veto_keys", ())}
        self.erased = data["erased"]
        self.events = data["events"]

    def ensure(self, key: ScopeKey) -> None:
        """Materialize every note of one scope."""
        if self._is_loaded(key):
            if key in self._lru:
                self._lru.move_to_end(key)
            return
        self.loaded.add(key)
        # list() copies in one step: a writer in another thread may add to the scope.
        members = list(self.scopes.get(key, ()))
        ids = [i for i in members if self.notes.loaded(i) is None]
        count = len(members)
        self._lru[key] = count
        self._loaded_notes += count
        events = self._load_notes(ids)
        if events and self.on_load is not None:
            self.on_load(events)
        self._trim(key)

    def _trim(self, keep: ScopeKey) -> None:
        while self._loaded_notes > self.max_loaded and len(self._lru) > 1:
            oldest = next(iter(self._lru))
            if oldest == keep:
                self._lru.move_to_end(oldest)
                continue
            self.evict(oldest)

    def evict(self, key: ScopeKey) -> None:
        """Drop one folded scope from memory; it is folded again from the log when needed."""
        if self.loader is None or key not in self.loaded:
            return
        self.loaded.discard(key)
        self._loaded_notes -= self._lru.pop(key, 0)
        data = self.notes._data
        for note_id in self.scopes.get(key, ()):
            data.pop(note_id, None)
        self.by_text.pop(key, None)
        if self.on_evict is not None:
            self.on_evict(key)

    def ensure_all(self) -> None:
        for key in list(self.scopes):
            self.ensure(key)

    def _load_notes(self, note_ids: Sequence[str]) -> list[Event]:
        if self.loader is None:
            return []
        wanted: list[int] = []
        for note_id in note_ids:
            seen = self.positions.get(note_id)
            if isinstance(seen, int):
                wanted.append(seen)
            elif seen:
                wanted.extend(seen)
        if not wanted:
            return []
        wanted.sort()
        events = self.loader(wanted)
        for event in events:
            self.apply(event)
        return events

    def apply(self, event: Event) -> Note | None:
        """Fold one event in; returns the note it changed, if any."""
        self.events += 1
        if isinstance(event, ChannelPolicySet):
            merged = dict(self.channel_policies.get(event.target, {}))
            merged.update(event.settings)
            self.channel_policies[event.target] = merged
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
            self._forget_catalog(event.note_id)
            self.erased[event.note_id] = event.final_status
            return None
        if not isinstance(event, NoteEvent):
            return None
        return self._apply_note(event)

    def _apply_note(self, event: NoteEvent) -> Note | None:
        data = self.notes._data
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
        if self.loader is None:
            self._record(after.id, None, scope_key(after.scope, after.scope_id))
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
        note = self.notes._data.pop(note_id, None)
        self._unindex(note)
        if note is not None:
            self._bump(scope_key(note.scope, note.scope_id))

    def in_scope(self, scope: Scope, scope_id: str | None) -> list[Note]:
        """Notes whose home is the given scope (materializing it on first use)."""
        key = scope_key(scope, scope_id)
        self.ensure(key)
        data = self.notes._data
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

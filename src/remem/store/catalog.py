"""The lazily folded state of the embedded store, and its catalog snapshot.

:class:`CatalogState` is the pure fold of :mod:`remem.core.projection` made to
open a large log fast: a cheap scan of the log records, for every note, its
scope and the positions of its events (the *catalog*); the notes of a scope
are folded from the log (``loader`` reads events back by position) when first
needed, and whole scopes are evicted again past ``MAX_LOADED_NOTES``. Channel
policies, preferences and revisions are always folded. The catalog, with those,
is written as a snapshot (:meth:`CatalogState.catalog`, :meth:`CatalogState.adopt`)
that lets the next open skip the scan. This module knows the log records' field
names (``observe`` takes raw records, to fold lazily without building events).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, ItemsView, Iterator, Sequence, ValuesView
from typing import Any, cast

from remem.core.events import Corrected, Erased, Event, NoteEvent, Remembered, from_dict
from remem.core.model import Note, Scope
from remem.core.projection import ChannelKind, Notes, Revision, ScopeKey, State, scope_key

#: How many notes a lazily folded state keeps in memory before evicting whole scopes.
MAX_LOADED_NOTES = 250_000
_SCOPES = {m.value: m for m in Scope}

Loader = Callable[[Sequence[int]], list[Event]]


class LazyNotes(Notes):
    """The notes of a :class:`State`, materialized one scope at a time on first access.

    Looking a note up folds its whole scope from the log (through the state's
    loader); iterating folds every scope. With no loader every note is always
    materialized.
    """

    __slots__ = ("_state",)

    def __init__(self, state: CatalogState) -> None:
        super().__init__(state._notes)
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


class _PresentValues(ValuesView[Note]):
    _mapping: LazyNotes

    def __iter__(self) -> Iterator[Note]:
        return (note for _, note in self._mapping.present())


class _PresentItems(ItemsView[str, Note]):
    _mapping: LazyNotes

    def __iter__(self) -> Iterator[tuple[str, Note]]:
        return self._mapping.present()


class CatalogState(State):
    """A :class:`~remem.core.projection.State` folded lazily; see the module docstring.

    ``on_load`` is told the events folded by a lazy load, ``on_evict`` the scopes
    dropped from memory, so indexes can follow.
    """

    def __init__(self, agent: str, loader: Loader) -> None:
        super().__init__(agent)
        self.notes = LazyNotes(self)
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

    def _place(self, note: Note) -> None:
        pass  # membership comes from the catalog (observe, record), not from folding

    def _unplace(self, note_id: str) -> None:
        super()._unplace(note_id)
        self.positions.pop(note_id, None)

    # -- the catalog: membership and positions of every note --------------------------------

    def _is_loaded(self, key: ScopeKey) -> bool:
        return key in self.loaded

    def _record(self, note_id: str, pos: int | None, key: ScopeKey | None) -> None:
        if pos is not None:
            seen = self.positions.get(note_id)
            if seen is None:
                self.positions[note_id] = pos
            elif isinstance(seen, int):
                self.positions[note_id] = [seen, pos]
            else:
                seen.append(pos)
        if key is not None:
            self._move(note_id, key)

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
            if key in self.loaded:
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
            "channel_kinds": {c: k.to_dict() for c, k in self.channel_kinds.items()},
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
        kinds = data.get("channel_kinds", {})  # none in a snapshot from before kinds
        self.channel_kinds = {c: ChannelKind.from_dict(k) for c, k in kinds.items()}
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
        if key not in self.loaded:
            return
        self.loaded.discard(key)
        self._loaded_notes -= self._lru.pop(key, 0)
        data = self._notes
        for note_id in self.scopes.get(key, ()):
            data.pop(note_id, None)
        self.by_text.pop(key, None)
        if self.on_evict is not None:
            self.on_evict(key)

    def _load_notes(self, note_ids: Sequence[str]) -> list[Event]:
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

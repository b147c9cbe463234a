"""Which notes the recall indexes (lexical and vector) hold, and which a batch of events
touched: shared by :mod:`remem.recall.index` and :mod:`remem.recall.vectors`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from remem.core.events import Corrected, Erased, Event, NoteEvent
from remem.core.model import Note, Status
from remem.core.projection import ScopeKey, State, scope_key

#: Statuses whose notes are indexed (recall filters them further, with reasons).
INDEXED = frozenset(
    {
        Status.ACTIVE,
        Status.PENDING,
        Status.UNVERIFIED,
        Status.DISABLED,
        Status.SUPERSEDED,
    }
)


def indexable(note: Note | None) -> bool:
    """Whether ``note`` belongs in the recall indexes (lexical and vector)."""
    return note is not None and note.status in INDEXED and bool(note.text)


def changed_notes(events: Iterable[Event]) -> tuple[dict[str, None], set[str]]:
    """Ids of the notes ``events`` touch (in order), and those that may have changed scope.

    A note whose scope did not change can only be in its current scope's index;
    a moved or erased one may be anywhere, and indexes must look for it.
    """
    touched: dict[str, None] = {}
    moved: set[str] = set()
    for ev in events:
        if isinstance(ev, NoteEvent):
            touched[ev.note_id] = None
            if isinstance(ev, Erased) or (isinstance(ev, Corrected) and ev.scope is not None):
                moved.add(ev.note_id)
    return touched, moved


def materialized(state: State, note_id: str) -> Note | None:
    """The note if the projection holds it, without making a lazy state load anything."""
    notes = state.notes
    loaded = getattr(notes, "loaded", None)
    if loaded is not None:
        note: Note | None = loaded(note_id)
        return note
    return notes.get(note_id)


def homes(state: State) -> Mapping[str, ScopeKey]:
    """Note id → scope of every note, without materializing notes where the state allows."""
    home: Mapping[str, ScopeKey] | None = getattr(state, "home", None)
    if home is not None:
        return home
    return {n.id: scope_key(n.scope, n.scope_id) for n in state.notes.values()}


__all__ = ["INDEXED", "changed_notes", "homes", "indexable", "materialized"]

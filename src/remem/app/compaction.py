"""Compaction: physically remove the content of dead notes from the log.

A note that is forgotten, rejected or expired loses every event that refers
to it; one :class:`~remem.core.events.Erased` marker keeps its id, final status
and event ids (so the audit trail says it existed and a retried write stays
idempotent) but no content. An undo's veto hashes of what an erased note said
(see :mod:`remem.core.veto`) are dropped with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from remem.app.kernel import Kernel
from remem.core.events import Erased, Event, NoteEvent, Restored, Superseded
from remem.core.ids import new_id
from remem.core.model import Note, Scope, Status
from remem.core.projection import State
from remem.errors import StoreError
from remem.policy.authz import Action, Target

if TYPE_CHECKING:
    from remem.store.base import TraceLog

DEAD = frozenset({Status.FORGOTTEN, Status.REJECTED, Status.EXPIRED})


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What compaction physically removed from one agent's data."""

    agent: str
    notes_erased: list[str] = field(default_factory=list)
    events_before: int = 0
    events_after: int = 0
    files_removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "notes_erased": list(self.notes_erased),
            "events_before": self.events_before,
            "events_after": self.events_after,
            "files_removed": list(self.files_removed),
        }


def dead_notes(state: State, status_of: Callable[[Note], Status]) -> dict[str, Status]:
    """Notes whose content must go: forgotten, rejected, or expired (per ``status_of``)."""
    out = {}
    for note in state.notes.values():
        status = status_of(note)
        if status in DEAD:
            out[note.id] = status
    return out


def compact_events(
    events: list[Event], dead: dict[str, Status], envelope: dict[str, Any]
) -> list[Event]:
    """The log without any event of a dead note, plus one ``Erased`` marker per dead note."""
    kept: list[Event] = []
    erased_eids: dict[str, list[str]] = {nid: [] for nid in dead}
    replaced_by = {ev.revision_id: ev.by for ev in events if isinstance(ev, Superseded)}
    for ev in events:
        note_id = ev.note_id if isinstance(ev, NoteEvent) else None
        if note_id in dead:
            erased_eids[note_id].append(ev.eid)
            continue
        if isinstance(ev, Restored) and ev.veto and replaced_by.get(ev.revision_id) in dead:
            # The veto's hash of what the erased replacement said goes with it.
            ev = replace(ev, veto=())
        kept.append(ev)
    for nid, status in dead.items():
        kept.append(
            Erased(
                note_id=nid,
                eids=tuple(erased_eids[nid]),
                final_status=status.value,
                **{**envelope, "eid": new_id("ev")},
            )
        )
    return kept


def scrub_traces(traces: TraceLog) -> None:
    """Write the trace file again with only the fields a trace may keep (ids, numbers,
    reasons): a line an older version wrote with text (a query) loses it, and damaged
    lines (skipped by every read) go. Traces are derived data: a recall that appends
    while this runs may lose its trace, never a note."""
    from remem.recall.trace import scrub_record

    traces.rewrite([scrub_record(record) for record in traces.all()])


def finish_erasure(k: Kernel) -> list[str]:
    """After a rewrite that erased notes: scrub the derived files that may hold their
    content, write the caches again from memory and drop the agent's text memos.
    Returns the files removed. A failure here is a ``StoreError`` with ``applied=True``
    (the log no longer holds the erased notes; the next open finishes the clean-up)."""
    agent = k.agent
    try:
        scrub_traces(agent.traces)
        removed = k.backend.scrub(k.ctx.agent)
    except StoreError as exc:
        raise StoreError(
            f"compaction of {k.ctx.agent} was applied (the log no longer holds the erased "
            f"notes), but its clean-up failed: {exc.message}; the next open of the store "
            "finishes it",
            applied=True,
        ) from None
    agent.refresh_caches()  # from memory, which holds nothing of the erased notes
    agent.forget_texts()  # nor may the memos that keep words or text of notes
    return removed


def compact(k: Kernel) -> CompactionReport:
    """``Memory.compact``: rewrite the log without dead notes' content, scrub the derived
    files that may hold it, and write them again from memory (owner only)."""
    agent = k.agent
    k.require(agent.sync(), Action.COMPACT, Target(Scope.AGENT))
    counts: dict[str, Any] = {}

    def build(state: State, events: list[Event]) -> list[Event]:
        now = k.now()
        dead = dead_notes(state, lambda note: k.status_of(note, now))
        kept = compact_events(events, dead, k.envelope())
        counts.update(erased=sorted(dead), before=len(events), after=len(kept))
        return kept

    agent.rewrite(build)  # a StoreError says whether the new log is in place (applied)
    return report_of(k, counts, finish_erasure(k))


def report_of(k: Kernel, counts: dict[str, Any], removed: list[str]) -> CompactionReport:
    """The report of a rewrite whose ``build`` filled ``counts`` (erased, before, after)."""
    return CompactionReport(
        agent=k.ctx.agent,
        notes_erased=counts["erased"],
        events_before=counts["before"],
        events_after=counts["after"],
        files_removed=removed,
    )


def trash_agent(k: Kernel, agent: str) -> str:
    """``Memory.trash_agent``: move an agent's data to the trash (the owner of that
    agent only: rules ``other_agent`` and ``owner_only``); returns where it went."""
    from remem.core.names import check_agent

    check_agent(agent)
    k.require_envelope(Action.TRASH_AGENT, Target(Scope.AGENT, agent=agent))
    k.state()
    k.engine.drop_agent(agent)
    return k.backend.trash_agent(agent)

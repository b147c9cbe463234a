"""What one run wrote: the notes it changed and what it did to each, for a host's
"see what I remember" chip (:meth:`remem.Memory.writes`).

Each agent keeps, in memory, the note ids and ops of the writes made through this
process, per run, for the newest :data:`RUNS_KEPT` runs that wrote. It holds ids and
op names only, never note text, so forgetting and compaction need not touch it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from remem.core.events import Corrected, Erased, Event, NoteEvent
from remem.core.model import RECEIPTS, Note

#: Runs whose writes are kept per agent (the oldest are dropped first).
RUNS_KEPT = 4096
#: Notes kept per run (a run writing more keeps its first ones).
NOTES_PER_RUN = 1024


@dataclass(frozen=True, slots=True)
class Written:
    """One note a run wrote.

    ``ops`` are the run's changes to the note in order (``remember``, ``reinforce``,
    ``correct``, ``move``, ``forget``, ``disable``, ``enable``, ``pin``, ``unpin``,
    ``approve``, ``reject``, ``supersede``, ``restore``); ``note`` is the note as the
    asking context sees it now (a forgotten note has no text); ``receipt`` says what the
    run's last change to it did ("Noted …", "Corrected …", "Forgot …").
    """

    note: Note
    ops: tuple[str, ...]
    receipt: str

    @property
    def op(self) -> str:
        """The run's last change to the note."""
        return self.ops[-1]


def receipt_for(op: str, note: Note) -> str:
    """The receipt of ``op`` on ``note`` (a new note's depends on its status)."""
    said = RECEIPTS.get(op)
    return said if said is not None else note.evolve(last_change="remember").receipt


class RunWrites:
    """Note ids and ops per run id, for the newest runs (thread-safe)."""

    def __init__(self) -> None:
        self._runs: OrderedDict[str, dict[str, list[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, events: Sequence[Event]) -> None:
        """Take appended events (durable): each note event counts for its run."""
        with self._lock:
            for event in events:
                if not isinstance(event, NoteEvent) or isinstance(event, Erased):
                    continue
                if not event.run_id:
                    continue
                notes = self._runs.get(event.run_id)
                if notes is None:
                    notes = self._runs[event.run_id] = {}
                    if len(self._runs) > RUNS_KEPT:
                        self._runs.popitem(last=False)
                ops = notes.get(event.note_id)
                if ops is None:
                    if len(notes) >= NOTES_PER_RUN:
                        continue
                    ops = notes[event.note_id] = []
                moved = (
                    isinstance(event, Corrected) and event.text is None and event.scope is not None
                )
                ops.append("move" if moved else event.op)

    def of(self, run_id: str) -> list[tuple[str, tuple[str, ...]]]:
        """``(note id, ops)`` of the run, in the order it first wrote each note."""
        with self._lock:
            notes = self._runs.get(run_id, {})
            return [(note_id, tuple(ops)) for note_id, ops in notes.items()]


__all__ = ["NOTES_PER_RUN", "RUNS_KEPT", "RunWrites", "Written", "receipt_for"]

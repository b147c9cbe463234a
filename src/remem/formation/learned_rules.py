"""The ``learned`` rule: style rules approved from learned notes, each line linked to the
notes it came from, so that a rule goes with its note.

Each line of ``rules/learned.md`` ends with one marker per source note,
``<!-- from note_… -->`` (kept in the file, so the link survives a reopen and moves with
the line if a human edits around it). When a source note is forgotten, rejected or
expired its marker goes; a line left without any marker goes too (a line written before
markers existed goes when a note with exactly its text is forgotten). After a
compaction or a reopen (:func:`reconcile`), every marker naming a note that is no longer
live goes, with its line: a rule never outlives the notes it was learned from.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from remem.core.events import Event, Forgotten, Refused
from remem.core.model import Status
from remem.errors import RememError

if TYPE_CHECKING:
    from remem.core.projection import State
    from remem.store.base import Backend

log = logging.getLogger("remem.rules")

#: The tag of learned style-rule notes (the notes a learned rule line comes from).
LEARNED_RULE_TAG = "learned-rule"
#: The rule file the learned lines live in (``rules/learned.md``).
RULE_NAME = "learned"
_HEADER = "# Learned rules\n\n"
_MARKER = re.compile(r" ?<!-- from (note_[0-9A-Za-z]+) -->")
#: Statuses of notes whose content goes (and their rule lines with it).
_DEAD = frozenset({Status.FORGOTTEN, Status.REJECTED, Status.EXPIRED})


def _marker(note_id: str) -> str:
    return f" <!-- from {note_id} -->"


def _body(line: str) -> str:
    return _MARKER.sub("", line).rstrip()


def append(backend: Backend, agent: str, text: str, note_id: str | None) -> None:
    """Add ``- text`` linked to ``note_id`` (a line with that text gains the link)."""
    current = backend.read_rules(agent).get(RULE_NAME, "")
    wanted = f"- {text}"
    lines = current.splitlines()
    for i, line in enumerate(lines):
        if _body(line) == wanted:
            if note_id is None or note_id in _MARKER.findall(line):
                return
            lines[i] = line + _marker(note_id)
            break
    else:
        lines.append(wanted + (_marker(note_id) if note_id else ""))
    body = "\n".join(lines).strip("\n")
    backend.write_rule(agent, RULE_NAME, (body if current else _HEADER + body) + "\n")


def _drop(
    backend: Backend, agent: str, gone: Callable[[str], bool], texts: Collection[str]
) -> None:
    """Remove the markers whose note is ``gone``, lines left with none, and unmarked lines
    reading exactly ``- text`` for one of ``texts``."""
    current = backend.read_rules(agent).get(RULE_NAME)
    if not current:
        return
    kept = []
    for line in current.splitlines():
        ids = _MARKER.findall(line)
        if not ids:
            if _body(line) not in {f"- {t}" for t in texts}:
                kept.append(line)
            continue
        left = [i for i in ids if not gone(i)]
        if left:
            kept.append(_body(line) + "".join(_marker(i) for i in left))
    new = "\n".join(kept) + "\n"
    if new != current and new.strip() != _HEADER.strip():
        backend.write_rule(agent, RULE_NAME, new)
    elif new != current:
        backend.write_rule(agent, RULE_NAME, "")  # nothing learned is left: no rule at all


def follow(backend: Backend, agent: str) -> Callable[[State, Sequence[Event], bool], None]:
    """A listener for ``AgentLog.on_change``: the learned rule follows its notes (see the
    module docstring). A rules file that cannot be written is logged and tried again by
    the next reconcile (a compaction or a reopen), never an error of the forget."""

    def listener(state: State, events: Sequence[Event], reset: bool) -> None:
        try:
            if reset:
                reconcile(backend, agent, state)
                return
            gone: set[str] = set()
            for ev in events:
                if isinstance(ev, (Forgotten, Refused)):
                    note = state.notes.loaded(ev.note_id)
                    if (
                        note is not None
                        and LEARNED_RULE_TAG in note.tags
                        and not _live(state, note.id)
                    ):
                        gone.add(note.id)
            if gone:
                _drop(backend, agent, gone.__contains__, _texts(backend, agent, gone))
        except (RememError, OSError) as exc:
            log.warning("could not update the learned rule of %s: %s", agent, exc)

    return listener


def _texts(backend: Backend, agent: str, note_ids: Collection[str]) -> set[str]:
    """Every text the notes had (a forgotten note's text is gone from the projection but
    still in the log until compaction): for lines written before links existed."""
    events = backend.event_log(agent)
    texts = set()
    for note_id in note_ids:
        for ev in events.history(note_id):
            text = getattr(ev, "text", None)
            if isinstance(text, str) and text:
                texts.add(text)
    return texts


def _live(state: State, note_id: str) -> bool:
    note = state.notes.get(note_id)
    return note is not None and note.status not in _DEAD


def reconcile(backend: Backend, agent: str, state: State) -> None:
    """Drop every marker (and line) of the learned rule whose note is no longer live."""
    _drop(backend, agent, lambda nid: not _live(state, nid), ())

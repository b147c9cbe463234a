"""Consolidation: merge live notes of one scope that say the same thing.

Deterministic near-duplicate detection (normalized text equal, or token
overlap of at least :data:`THRESHOLD`), never across scopes (a merge can never
widen who sees a note), never touching pinned notes. Each group becomes one
merged note; each source is retired as superseded by it, under one run, as
revisions that ``undo`` / ``undo_run`` can reverse; an undone merge is a veto
(those notes are never merged together again, nor merged into a note saying what
the undone merge said; see :mod:`remem.core.veto`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from remem.core.model import Basis, Note, Status, normalize_text
from remem.core.projection import State
from remem.core.veto import Said, Vetoes
from remem.formation.revise import CONSOLIDATION
from remem.recall.tokens import tokens

THRESHOLD = 0.8


@dataclass(frozen=True, slots=True)
class MergeGroup:
    """Notes of one scope that say the same thing, and the text the merged note keeps."""

    sources: list[Note]
    text: str


@dataclass(slots=True)
class ConsolidationReport:
    run_id: str
    dry_run: bool
    groups: list[MergeGroup] = field(default_factory=list)
    merged: list[Note] = field(default_factory=list)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def find_groups(state: State, vetoes: Vetoes) -> list[MergeGroup]:
    """Groups of two or more unpinned active notes per scope that say the same thing, none
    of which an undo vetoed against another or against the merged text."""
    groups = []
    vetoed = _undone_merges(state)
    for key in sorted(state.scopes, key=lambda k: (k[0].value, k[1] or "")):
        notes = [
            n for n in state.in_scope(key[0], key[1]) if n.status is Status.ACTIVE and not n.pinned
        ]
        groups.extend(_cluster(sorted(notes, key=lambda n: n.id), vetoed, vetoes))
    return groups


def _undone_merges(state: State) -> set[frozenset[str]]:
    """Pairs of notes an undone consolidation merged: undo is a veto, so a later
    consolidation never merges them together again."""
    merged: dict[str, list[str]] = {}
    for rev in state.revisions.values():
        if rev.undone and rev.how == CONSOLIDATION:
            merged.setdefault(rev.replacement, []).append(rev.retired)
    return {frozenset((a, b)) for ids in merged.values() for a in ids for b in ids if a != b}


def _apart(a: Note, b: Note, vetoed: set[frozenset[str]], vetoes: Vetoes) -> bool:
    """Whether an undo keeps ``a`` and ``b`` from being merged: they were merged together,
    or one was vetoed as the other's replacement (by id or by what they say)."""
    if frozenset((a.id, b.id)) in vetoed:
        return True
    return bool(vetoes) and (
        vetoes.forbids(Said.of(a), Said.of(b)) or vetoes.forbids(Said.of(b), Said.of(a))
    )


def _cluster(notes: list[Note], vetoed: set[frozenset[str]], vetoes: Vetoes) -> list[MergeGroup]:
    terms = {n.id: frozenset(tokens(n.text)) for n in notes}
    used: set[str] = set()
    out = []
    for i, first in enumerate(notes):
        if first.id in used:
            continue
        members = [first]
        for other in notes[i + 1 :]:
            if other.id in used or other.kind is not first.kind or other.subject != first.subject:
                continue
            if any(_apart(m, other, vetoed, vetoes) for m in members):
                continue
            same = normalize_text(other.text) == normalize_text(first.text)
            if same or similarity(terms[first.id], terms[other.id]) >= THRESHOLD:
                members.append(other)
        members = _mergeable(members, vetoes)
        if len(members) > 1:
            used.update(n.id for n in members)
            out.append(MergeGroup(members, _best_text(members)))
    return out


def _mergeable(members: list[Note], vetoes: Vetoes) -> list[Note]:
    """The members a note saying the group's merged text may retire (each shrinking of the
    group may change that text, so until none is left out)."""
    while len(members) > 1 and vetoes:
        # The merged note is not written yet: it has no id.
        merged = Said("", _best_text(members), members[0].subject)
        kept = [m for m in members if not vetoes.forbids(merged, Said.of(m))]
        if len(kept) == len(members):
            break
        members = kept
    return members


def _best_text(notes: list[Note]) -> str:
    """Explicit over inferred, then the most recently said, then the longest."""
    best = min(
        notes,
        key=lambda n: (n.basis is not Basis.EXPLICIT, -n.said_at.timestamp(), -len(n.text), n.id),
    )
    return best.text

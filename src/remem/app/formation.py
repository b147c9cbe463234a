"""Formation and belief revision use cases: learn, relearn, supersede, revisions, undo,
consolidate (``Memory`` exposes each as a method)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from remem.app.kernel import Kernel
from remem.app.learn import Learner
from remem.core.events import Event, Remembered
from remem.core.ids import new_id
from remem.core.model import Basis, Note, Scope, Source, Status
from remem.core.projection import Revision, State
from remem.core.veto import Said, Vetoes
from remem.errors import InvalidInput, NotFound
from remem.formation.bounds import check_messages
from remem.formation.classify import Classifier
from remem.formation.consolidate import ConsolidationReport, find_groups
from remem.formation.extract import LearnReport, Message, normalize_messages
from remem.formation.revise import CONSOLIDATION, MANUAL, retire, undo_events
from remem.policy.authz import Action, Target

MAX_SLICE = 1_000


def learn(
    k: Kernel,
    messages: Sequence[Message | dict[str, Any]],
    classifier: Classifier,
    *,
    summary: str | None = None,
    relearn: bool = False,
) -> LearnReport:
    """Learn from a conversation slice; see :mod:`remem.formation.extract`."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise InvalidInput("messages must be a list of remem.Message")
    if len(messages) > MAX_SLICE:
        raise InvalidInput(f"a slice holds at most {MAX_SLICE} messages; learn in parts")
    if summary is not None and not isinstance(summary, str):
        raise InvalidInput("summary must be a string")
    check_messages(messages, summary)  # sizes, fields and ids, before any work
    parsed = normalize_messages(messages)
    k.state()
    k.require_plaintext()  # nothing of an e2ee channel's messages is learned in the clear
    return Learner(k, classifier, relearn=relearn).run(parsed, summary)


def relearn(
    k: Kernel,
    archive: str | Path | Iterable[dict[str, Any]],
    classifier: Classifier,
) -> LearnReport:
    """Learn from an archived session with the live verdicts, dated when said; what
    non-admins said of operational knowledge is quarantined as ``unverified``."""
    from remem.formation.archive import read_archive

    state = k.state()
    k.require(state, Action.ADMINISTER, Target(Scope.AGENT))
    messages, _ = read_archive(archive)
    return learn(k, messages, classifier, relearn=True)


def _vetoes(k: Kernel, state: State) -> Vetoes:
    return Vetoes(state, k.agent.secret)


def supersede(k: Kernel, old_id: str, new_id_: str) -> Note:
    """Retire ``old_id`` in favour of ``new_id_`` by hand (works on pinned notes too)."""
    agent = k.agent

    def build(state: State) -> tuple[list[Event], str]:
        old = k.visible(state, old_id)
        new = k.visible(state, new_id_)
        k.require(state, Action.CHANGE, k.target(old))
        if old.status is not Status.ACTIVE or new.status is not Status.ACTIVE:
            raise InvalidInput("both notes must be active to supersede one by the other")
        events = retire(
            _vetoes(k, state),
            old,
            Said.of(new),
            MANUAL,
            "superseded by hand",
            k.envelope(),
        )
        if not events:
            raise InvalidInput(
                f"{new.id} may not retire {old.id}: an earlier undo vetoed that replacement "
                "(or one saying the same)"
            )
        return events, old.id

    return agent.state.notes[agent.write(build)]


def revisions(k: Kernel) -> list[Revision]:
    """Revisions whose retired note the envelope may read, oldest first; a replacing note
    the envelope may not read is not named (its ``replacement`` is ``""``)."""
    state = k.state()
    return sorted(
        (row for rev in state.revisions.values() if (row := _visible_row(k, state, rev))),
        key=lambda r: r.id,
    )


def _visible_row(k: Kernel, state: State, rev: Revision) -> Revision | None:
    """``rev`` as the envelope may see it, or None when its retired note is not visible."""
    note = state.notes.get(rev.retired)
    if note is None or not k.can_read(state, note):
        return None
    replacement = state.notes.get(rev.replacement)
    if replacement is None or not k.can_read(state, replacement):
        return replace(rev, replacement="")
    return rev


def undo(k: Kernel, revision_ids: Sequence[str]) -> list[Revision]:
    """Undo revisions: the retired notes return, the replacing notes stay, and each pair
    stands as a veto. A revision whose retired note the envelope may not see is reported as not
    visible, naming nothing of it but the id the caller gave."""
    agent = k.agent

    def build(state: State) -> tuple[list[Event], list[str]]:
        for rev_id in revision_ids:
            if not isinstance(rev_id, str):
                raise InvalidInput(f"{rev_id!r} is not a revision id (they look like rev_01J…)")
            rev = state.revisions.get(rev_id)
            if rev is None or _visible_row(k, state, rev) is None:
                raise NotFound(
                    f"no revision {rev_id} is visible here (it does not exist, or this "
                    "context may not see it)"
                )
            k.require(state, Action.CHANGE, k.target(state.notes[rev.retired]))
        vetoes = _vetoes(k, state)
        return undo_events(state, vetoes, revision_ids, k.envelope()), list(revision_ids)

    done = agent.write(build)
    state = agent.state
    return [row for r in done if (row := _visible_row(k, state, state.revisions[r]))]


def undo_run(k: Kernel, run_id: str) -> list[Revision]:
    """Undo every revision a run made that the envelope may see."""
    ids = [r.id for r in revisions(k) if r.run_id == run_id and not r.undone]
    if not ids:
        raise NotFound(f"run {run_id} made no revision visible here that can be undone")
    return undo(k, ids)


def consolidate(k: Kernel, *, dry_run: bool = False) -> ConsolidationReport:
    """Merge near-duplicate live notes per scope (owners and admins)."""
    agent = k.agent
    state = agent.sync()
    k.require(state, Action.ADMINISTER, Target(Scope.AGENT))
    report = ConsolidationReport(run_id=k.ctx.run_id, dry_run=dry_run)
    report.groups = find_groups(state, _vetoes(k, state))
    if dry_run or not report.groups:
        return report

    def build(st: State) -> tuple[list[Event], list[str]]:
        events: list[Event] = []
        merged_ids = []
        for group in find_groups(st, _vetoes(k, st)):
            first = group.sources[0]
            merged_id = new_id("note")
            basis = (
                Basis.EXPLICIT
                if any(n.basis is Basis.EXPLICIT for n in group.sources)
                else Basis.INFERRED
            )
            retirements: list[Event] = []
            merged = Said(merged_id, group.text, first.subject)
            for source in group.sources:
                retirements += retire(
                    _vetoes(k, st),
                    source,
                    merged,
                    CONSOLIDATION,
                    "says the same as merged note",
                    k.envelope(),
                )
            if len(retirements) < 2:
                continue  # find_groups left out what an undo vetoed: nothing to merge
            # Retire the sources first, so the merged note (often with a source's very
            # text) is the live holder of that text and a later identical write reinforces it.
            events += retirements
            events.append(
                Remembered(
                    note_id=merged_id,
                    scope=first.scope,
                    scope_id=first.scope_id,
                    kind=first.kind,
                    text=group.text,
                    basis=basis,
                    subject=first.subject,
                    tags=tuple(sorted({t for n in group.sources for t in n.tags})),
                    said_at=max(n.said_at for n in group.sources),
                    source=Source(run_id=k.ctx.run_id),
                    **k.envelope(),
                )
            )
            merged_ids.append(merged_id)
        return events, merged_ids

    report.merged = [agent.state.notes[i] for i in agent.write(build)]
    return report

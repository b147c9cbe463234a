"""The review queue's use cases: pending, approve, reject.

Who may review is the rule ``reviewer`` of :func:`remem.policy.authz.decide`; which
notes wait is :mod:`remem.policy.review`.
"""

from __future__ import annotations

from remem.app.kernel import Kernel
from remem.app.learn import append_learned_rule
from remem.core.events import Approved, Event, Refused
from remem.core.model import Basis, Note, Status
from remem.core.projection import State
from remem.core.veto import Vetoes
from remem.errors import InvalidInput
from remem.formation.extract import LEARNED_RULE_TAG
from remem.formation.revise import subject_rule
from remem.policy.authz import require
from remem.policy.review import REVIEWABLE, review_action


def may_review(k: Kernel, state: State, note: Note) -> bool:
    """Whether this envelope may approve or reject ``note``."""
    return k.decide(state, review_action(note), k.target(note)).allowed


def pending(k: Kernel) -> list[Note]:
    """Pending and unverified notes this context may review, oldest first."""
    state = k.state()
    out = [n for n in state.notes.values() if n.status in REVIEWABLE and may_review(k, state, n)]
    return sorted(out, key=lambda n: n.id)


def review(k: Kernel, note_id: str, *, approve: bool) -> Note:
    """Approve or reject one note awaiting review, as this envelope."""
    agent = k.agent

    def build(state: State) -> tuple[list[Event], str]:
        note = k.visible(state, note_id)
        if note.status not in REVIEWABLE:
            raise InvalidInput(f"note {note_id} is {note.status.value}, not awaiting review")
        require(k.decide(state, review_action(note), k.target(note)))
        env = k.envelope()
        if not approve:
            return [Refused(note_id=note.id, **env)], note.id
        events: list[Event] = [Approved(note_id=note.id, **env)]
        if note.subject is not None and note.basis is Basis.EXPLICIT:
            # Confirming a dated statement never retires a newer live value.
            events += subject_rule(
                state,
                note_id=note.id,
                scope=note.scope,
                scope_id=note.scope_id,
                subject=note.subject,
                said_at=note.said_at,
                envelope=k.envelope(),
                text=note.text,
                vetoes=Vetoes(state, agent.secret),
            )
        return events, note.id

    note = agent.state.notes[agent.write(build)]
    if approve and LEARNED_RULE_TAG in note.tags and note.status is Status.ACTIVE:
        append_learned_rule(k, note.text, note.id)
    return note

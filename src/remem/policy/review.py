"""The review rules: which notes wait for review, and when evidence approves one.

Pure functions of the envelope, the note and the limits in force. Who may approve or
reject is a rule of :func:`remem.policy.authz.decide` (``reviewer``); the review queue's
use cases are in :mod:`remem.app.review`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from remem.context import RunContext
from remem.core.events import Approved, Event
from remem.core.model import VIA_TOOL, Basis, Note, Scope, Status
from remem.policy.authz import Action
from remem.policy.config import Limits
from remem.policy.layers import inferred_rank

REVIEWABLE = (Status.PENDING, Status.UNVERIFIED)


def review_action(note: Note) -> Action:
    """The authz action reviewing ``note`` is (an unverified note: admins only)."""
    return Action.REVIEW_UNVERIFIED if note.status is Status.UNVERIFIED else Action.REVIEW


def initial_status(
    ctx: RunContext,
    scope: Scope,
    basis: Basis,
    limits: Limits,
    via: str | None = None,
    preferences: Mapping[str, Mapping[str, Any]] | None = None,
) -> Status:
    """``pending`` when any review rule applies (stricter wins), else ``active``.

    A note a model wrote with a memory tool (``via`` ``"tool"``) follows ``tool_writes``
    instead of ``inferred``'s review: the write is announced (its receipt is the chip the
    member sees), so ``announce`` keeps it active, unless the speaker chose
    ``tool_writes = "review"`` for their turns (``preferences``: each participant's
    stored choices);
    ``inferred = "off"`` and a person's choice not to have things inferred still refuse
    it (:func:`screen_write`)."""
    if scope is Scope.AGENT and ctx.role.is_system and limits.agent_writes == "review":
        return Status.PENDING
    if via == VIA_TOOL:
        chosen = (preferences or {}).get(ctx.actor or "", {}).get("tool_writes")
        held = limits.tool_writes == "review" or chosen == "review"
        return Status.PENDING if held else Status.ACTIVE
    if basis is Basis.INFERRED:
        mode = limits.inferred
        if mode == "auto" or (mode.startswith("evidence:") and inferred_rank(mode)[1] <= 1):
            return Status.ACTIVE
        return Status.PENDING
    return Status.ACTIVE


def evidence_events(
    note: Note, limits: Limits, envelope: Callable[[], dict[str, Any]]
) -> list[Event]:
    """Approve a pending inferred note once it has the evidence ``evidence:N`` asks for
    (``envelope``: makes the writing call's; the approval is policy's)."""
    mode = limits.inferred
    if note.status is not Status.PENDING or not mode.startswith("evidence:"):
        return []
    if note.basis is not Basis.INFERRED:
        return []  # held for another reason (agent_writes review): evidence is no approval
    if note.source.via == VIA_TOOL:
        return []  # held by tool_writes = "review": a reviewer decides, not repetition
    if note.scope is Scope.AGENT and limits.agent_writes == "review":
        return []
    if note.evidence + 1 < inferred_rank(mode)[1]:
        return []
    env = envelope() | {"actor": "policy", "role": "policy"}
    return [Approved(note_id=note.id, **env)]

"""The remember use case: defaults from the envelope, authorization, write policy.

Everything that can be decided before taking the log's lock is decided in
:func:`plan_remember`; :meth:`RememberPlan.build` re-checks what depends on the
current state (duplicates, limits) under the lock.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from remem.app.idempotency import Keyed, current, keyed_id, replayed, stamp
from remem.app.kernel import Kernel
from remem.context import RunContext
from remem.core.events import Event, Remembered
from remem.core.ids import new_id
from remem.core.model import (
    LIVE_STATUSES,
    SOURCE_VIAS,
    Basis,
    Kind,
    Note,
    Scope,
    Source,
    Status,
    parse_enum,
)
from remem.core.projection import State
from remem.core.text import canonical_text, check_optional_id
from remem.core.veto import Vetoes
from remem.errors import InvalidInput, Rejected
from remem.formation.revise import subject_rule
from remem.policy.authz import Action, Target
from remem.policy.config import Limits
from remem.policy.guard import check_note_fields
from remem.policy.review import evidence_events, initial_status
from remem.policy.write_policy import screen_write

_PREFERENCE_CUE = re.compile(
    r"\b(prefers?|preferred|likes?|dislikes?|loves?|hates?|wants?|would rather|rather than)\b",
    re.IGNORECASE,
)
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.:-]{0,39}$")
_SUBJECT = re.compile(r"^[a-z0-9][a-z0-9_.:-]{0,79}$")
_PERSONAL_KINDS = (Kind.PREFERENCE, Kind.FACT)
#: Tags one note may carry (each at most 40 characters, see ``_TAG``).
MAX_TAGS = 20


def default_kind(text: str) -> Kind:
    """A cheap guess when the caller names no kind: preference cues, else a fact."""
    return Kind.PREFERENCE if _PREFERENCE_CUE.search(text) else Kind.FACT


def default_scope(ctx: RunContext, kind: Kind) -> Scope:
    """DESIGN §4.1: personal statements → the speaker; shared state → the channel.

    ``agent`` scope is never the result of a missing argument.
    """
    if kind is Kind.PROCEDURE:
        raise InvalidInput(
            "procedure notes are agent-wide operational knowledge: pass scope='agent' explicitly"
        )
    if kind in _PERSONAL_KINDS and ctx.has_personal_scope:
        return Scope.USER
    if ctx.channel is not None:
        return Scope.CHANNEL
    raise InvalidInput("this run has no personal scope or channel: pass scope= explicitly")


def _tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags as stored: lowercase, deduplicated, sorted; at most :data:`MAX_TAGS`."""
    if tags == () or tags == []:  # the usual case
        return ()
    if isinstance(tags, str):
        tags = [tags]
    elif isinstance(tags, bytes | dict) or not isinstance(tags, Iterable):
        raise InvalidInput("tags must be a list of strings such as ['billing', 'weekly']")
    out: list[str] = []
    for tag in tags:
        clean = tag.strip().lower() if isinstance(tag, str) else ""
        if not _TAG.fullmatch(clean):
            raise InvalidInput(
                f"tag {str(tag)[:60]!r} is not allowed: use up to 40 lowercase letters, digits, "
                "'_', '-', '.' or ':'"
            )
        if clean not in out:
            if len(out) == MAX_TAGS:
                raise InvalidInput(f"a note carries at most {MAX_TAGS} tags")
            out.append(clean)
    return tuple(sorted(out))


def _source(
    ctx: RunContext, source: Source | dict[str, Any] | str | None, plain: Source | None = None
) -> Source:
    """Provenance: channel, author and run always come from the envelope, never the caller;
    the caller gives the message id and ``via`` (how the write came: ``"tool"``).
    ``plain``: the envelope's source without a message id, when already made."""
    message_id: str | None = None
    via: Any = None
    if isinstance(source, Source):
        message_id, via = source.message_id, source.via
    elif isinstance(source, dict):
        message_id, via = source.get("message_id"), source.get("via")
    elif isinstance(source, str):
        message_id = source
    elif source is not None:
        raise InvalidInput("source must be a message id, a dict with message_id, or a Source")
    message_id = check_optional_id(message_id, "source message_id")
    if via is not None and via not in SOURCE_VIAS:
        raise InvalidInput(f"source via {str(via)[:40]!r} is not one of {sorted(SOURCE_VIAS)}")
    if message_id is None and via is None and plain is not None:
        return plain
    return Source(
        channel_id=ctx.channel,
        message_id=message_id,
        author_id=ctx.actor,
        run_id=ctx.run_id,
        via=via,
    )


@dataclass(frozen=True, slots=True)
class RememberPlan:
    """A checked remember request: the event that writes the note (its fields are the
    one definition, :class:`~remem.core.events.Remembered`) and the limits that apply.
    Planned and built in one hold of the writer lock (:func:`commit_plan`), so the
    event's envelope time is the write's."""

    event: Remembered
    limits: Limits
    #: The request sent with an idempotency key this write is (:mod:`remem.app.idempotency`).
    keyed: Keyed | None = None

    def build(self, k: Kernel, state: State) -> tuple[list[Event], str]:
        """Events for this request against the current state, and the id of the note."""
        event = self.event
        if self.keyed is not None:
            done = replayed(k.agent.log, self.keyed)  # InvalidInput: another request's key
            if done is not None:  # applied already: the same request sent again
                return [], done
        same = k.same(state, event.scope, event.scope_id, event.text)
        if same is not None:
            # A keyed request's reinforcement is its event: a retry finds it by its id.
            keyed = None if self.keyed is None else {**k.envelope(), **stamp(self.keyed)}
            again = k.reinforce(same, event.source, keyed)
            again += evidence_events(same, self.limits, k.envelope)
            return again, same.id
        limit = self.limits.max_notes_per_scope
        # Live notes are a subset of the scope's members: count them only near the limit.
        members = len(state.scopes.get((event.scope, event.scope_id), ()))
        count = members
        if members >= limit:
            count = sum(
                1 for n in state.in_scope(event.scope, event.scope_id) if n.status in LIVE_STATUSES
            )
        if count >= limit:
            raise Rejected(
                f"this {event.scope.value} scope already holds {count} notes, the limit is "
                f"{limit}; forget or consolidate notes first",
                reason="scope_full",
            )
        events: list[Event] = [event]
        explicit = event.basis is Basis.EXPLICIT and event.status is Status.ACTIVE
        if event.subject is not None and explicit:
            events += subject_rule(
                state,
                note_id=event.note_id,
                scope=event.scope,
                scope_id=event.scope_id,
                subject=event.subject,
                said_at=event.said_at or event.ts,
                envelope=k.envelope(),
                text=event.text,
                vetoes=Vetoes(state, k.agent.secret),
            )
        return events, event.note_id


def plan_remember(
    k: Kernel,
    text: str,
    *,
    scope: Scope | str | None,
    scope_id: str | None,
    kind: Kind | str | None,
    basis: Basis | str,
    subject: str | None,
    tags: Iterable[str],
    pinned: bool,
    expires_at: datetime | str | None,
    source: Source | dict[str, Any] | str | None,
    said_at: datetime | str | None,
    state: State,
    key: Keyed | None = None,
) -> RememberPlan:
    """Resolve and check a remember request against ``state``; raises before anything is
    written. Called under the writer lock (:func:`commit_plan`), so the checks see the
    state as it is at that moment: a steward removed or a policy changed by another
    process a moment ago counts."""
    ctx = k.ctx
    text = canonical_text(text)  # one stored form on every path (remem.core.text)
    parsed_kind = parse_enum(Kind, kind, "kind") if kind is not None else default_kind(text)
    parsed_basis = parse_enum(Basis, basis, "basis")
    parsed_scope = (
        parse_enum(Scope, scope, "scope") if scope is not None else default_scope(ctx, parsed_kind)
    )
    resolved_id, limits, plain_source = _grant(k, state, parsed_scope, scope_id)
    k.require_plaintext()  # a channel marked e2ee keeps its memory in the encrypted slot
    if parsed_kind is Kind.PROCEDURE:
        k.require_envelope(Action.WRITE_PROCEDURE)
    parsed_source = _source(ctx, source, plain_source)
    screen_write(
        text, parsed_kind, parsed_basis, limits, parsed_scope, resolved_id, state.preferences
    )
    _check_subject(subject, pinned)
    parsed_tags = _tags(tags)
    # Every stored free-text field is screened for credentials, not only the text.
    check_note_fields(subject=subject, tags=parsed_tags, message_id=parsed_source.message_id)
    note_id, envelope = _ids(k, key)
    event = Remembered(
        note_id=note_id,
        scope=parsed_scope,
        scope_id=resolved_id,
        kind=parsed_kind,
        text=text,
        basis=parsed_basis,
        status=initial_status(
            ctx, parsed_scope, parsed_basis, limits, parsed_source.via, state.preferences
        ),
        subject=subject,
        tags=parsed_tags,
        pinned=pinned,
        expires_at=k.parse_time(expires_at, "expires_at"),
        said_at=k.parse_time(said_at, "said_at"),
        source=parsed_source,
        **envelope,
    )
    return RememberPlan(event, limits, key)


def _ids(k: Kernel, key: Keyed | None) -> tuple[str, dict[str, Any]]:
    """The new note's id and the event's envelope: from the idempotency key's seed when
    given, so a retried request builds the same ids (:mod:`remem.app.idempotency`)."""
    envelope = k.envelope()
    if key is None:
        return new_id("note"), envelope
    envelope.update(stamp(key))
    return keyed_id(key.seed, "note", "remember"), envelope


def _check_subject(subject: str | None, pinned: bool) -> None:
    """``InvalidInput`` for a subject that is not a dotted key, or a non-bool ``pinned``."""
    if subject is not None and not (isinstance(subject, str) and _SUBJECT.fullmatch(subject)):
        raise InvalidInput(
            f"subject {str(subject)[:90]!r} is not allowed: use lowercase dotted keys like "
            "'user.language' (up to 80 characters)"
        )
    if not isinstance(pinned, bool):
        raise InvalidInput("pinned must be True or False")


def _grant(
    k: Kernel, state: State, scope: Scope, scope_id: str | None
) -> tuple[str | None, Limits, Source]:
    """The scope id a new note of ``ctx`` in ``scope`` goes to, once ``ctx`` may create it
    there, the limits that apply, and the envelope's source without a message id (raises
    ``Denied`` / ``InvalidInput`` otherwise).

    All are functions of the envelope, the target, the policy file and the state's
    channel policies and participant choices only; a grant is kept in the agent's memos
    per envelope and target under the versions of all of them (the state object, its
    policy version, the policy file's), so repeated writes of one run skip the work.
    Refusals are never kept: they are decided again on every call.
    """
    ctx = k.ctx
    resolved_id = k.resolve_scope_id(scope, scope_id)  # also checks scope_id
    version = (state.serial, state.policy_version, k.policy_version())
    key = (ctx, scope.value, resolved_id)
    grants = k.agent.memos.grants
    granted = grants.get(version, key)
    if granted is not None:
        return granted[0], granted[1], granted[2]
    k.require(state, Action.CREATE, Target(scope, resolved_id, ctx.actor))
    k.require_plaintext_into(scope, resolved_id)  # an e2ee DM takes no plaintext from elsewhere
    limits = k.limits(ctx.channel)
    plain = _source(ctx, None)
    if k.policy_version() != version[2]:  # edited meanwhile: decided, but not kept
        return resolved_id, limits, plain
    grants.put(version, key, (resolved_id, limits, plain))
    return resolved_id, limits, plain


__all__ = [
    "RememberPlan",
    "commit_plan",
    "default_kind",
    "default_scope",
    "plan_remember",
    "remember",
    "remember_as",
]


def remember_as(
    k: Kernel,
    text: str,
    *,
    scope: Scope,
    kind: Kind,
    basis: Basis,
    subject: str | None,
    tags: Iterable[str],
    said_at: datetime | str | None,
    message_id: str | None,
    author: str | None,
    status: Status | None,
) -> Note:
    """``remember`` for formation: records who said it (``author``) and may quarantine
    (``status``, e.g. ``unverified``)."""

    def plan(state: State) -> RememberPlan:
        planned = plan_remember(
            k,
            text,
            scope=scope,
            scope_id=None,
            kind=kind,
            basis=basis,
            subject=subject,
            tags=tags,
            pinned=False,
            expires_at=None,
            source=message_id,
            said_at=said_at,
            state=state,
        )
        event = planned.event
        source = replace(event.source, author_id=author)
        quarantined = replace(event, source=source, status=status or event.status)
        return replace(planned, event=quarantined)

    return commit_plan(k, plan)


def commit_plan(k: Kernel, plan: Callable[[State], RememberPlan]) -> Note:
    """Plan a remember and write it, both under the writer lock; returns the note."""
    return k.agent.state.notes[_write_plan(k, plan)]


def _write_plan(k: Kernel, plan: Callable[[State], RememberPlan]) -> str:
    """Plan a remember and write it, both under the writer lock; returns the note's id."""
    return k.agent.write(lambda state: plan(state).build(k, state))


def remember(
    k: Kernel,
    text: str,
    *,
    scope: Scope | str | None = None,
    scope_id: str | None = None,
    kind: Kind | str | None = None,
    basis: Basis | str = Basis.EXPLICIT,
    subject: str | None = None,
    tags: Iterable[str] = (),
    pinned: bool = False,
    expires_at: datetime | str | None = None,
    source: Source | dict[str, Any] | str | None = None,
    said_at: datetime | str | None = None,
) -> Note:
    """``Memory.remember``: plan and write under the writer lock; returns the note, if the
    envelope may see it (:meth:`Kernel.given`; ``NotFound`` otherwise). Inside
    :func:`remem.app.idempotency.idempotent`, the note and event ids come from its key."""
    key = current()  # here, in the caller's thread: the build may run on another
    created = [False]  # whether this call's own event created the note

    def build(state: State) -> tuple[list[Event], str]:
        planned = plan_remember(
            k,
            text,
            scope=scope,
            scope_id=scope_id,
            kind=kind,
            basis=basis,
            subject=subject,
            tags=tags,
            pinned=pinned,
            expires_at=expires_at,
            source=source,
            said_at=said_at,
            state=state,
            key=key,
        )
        events, note_id = planned.build(k, state)
        created[0] = bool(events) and events[0] is planned.event
        return events, note_id

    note_id = k.agent.write(build)
    note = k.agent.state.notes.get(note_id)
    if created[0] and note is not None and note.version == 1:
        # This call's own new note, unchanged since: a result given for the first time,
        # in a scope the envelope was just allowed to write (so no read check is spent).
        return note
    return k.given(note_id)  # given again (a retry, a reinforcement): a read's check

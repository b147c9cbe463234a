"""The recall pipeline (DESIGN §6): scopes → candidates → filters → dedupe → rank → budget
→ render → trace. Every candidate that is not selected gets exactly one reason code."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from remem.context import RunContext, RunKind
from remem.core.model import (
    Kind,
    Note,
    Scope,
    Status,
    format_ts,
    normalize_text,
)
from remem.core.projection import ScopeKey, State
from remem.core.veto import Said, Vetoes
from remem.policy.config import Limits
from remem.providers.embed import numpy_available
from remem.recall.memos import MEMO_LIMIT
from remem.recall.rank import Columns, preference_key, rank
from remem.recall.relevance import relevance, relevance_rows
from remem.recall.render import Bodies, note_line, render
from remem.recall.scopes import current_keys, eligible_scopes
from remem.recall.trace import Trace, group_by_reason, shared_candidates

if TYPE_CHECKING:
    from remem.app.agent_state import AgentLog

_STATUS_REASON = {
    Status.DISABLED: "disabled",
    Status.PENDING: "pending",
    Status.UNVERIFIED: "unverified",
    Status.SUPERSEDED: "superseded",
    Status.EXPIRED: "expired",
}
_DEAD = (Status.FORGOTTEN, Status.REJECTED)
#: Prepared candidate lists kept per agent (one per distinct run shape).
RECALL_CACHE_SIZE = 1024


@dataclass(frozen=True, slots=True)
class Recall:
    """What one run receives: notes (best first), the rendered block, and the rules."""

    notes: list[Note]
    text: str
    run_id: str
    retrieval: str
    rules: str = ""
    scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecallPolicy:
    """What the policy layers decided for this run's recall."""

    limits: Limits
    cross_channel_users: frozenset[str] = frozenset()
    cross_channel_refused: frozenset[str] = frozenset()
    #: retention of agent-wide and user notes (channel notes use ``limits.retention_days``)
    retention_days_agent: int | None = None

    def retention_for(self, note: Note) -> int | None:
        if note.scope is Scope.CHANNEL:
            return self.limits.retention_days
        return self.retention_days_agent


def _reason(
    note: Note, ctx: RunContext, policy: RecallPolicy, now: datetime, kinds: frozenset[Kind]
) -> str | None:
    status = note.effective_status(now, policy.retention_for(note))
    if status is not Status.ACTIVE:
        return _STATUS_REASON.get(status, status.value)
    if not policy.limits.enabled:
        return "memory_off"
    if note.kind not in kinds:
        return "kind_not_allowed"
    if note.scope is Scope.USER and ctx.kind is not RunKind.OWNER:
        if ctx.kind is RunKind.GROUP and not policy.limits.group_user_recall:
            return "private_in_group"
        source_channel = note.source.channel_id
        if source_channel is not None and source_channel != ctx.channel:
            allowed = _cross_channel_allowed(policy, note.scope_id)
            if not allowed:
                return "cross_channel"
    return None


def _cross_channel_allowed(policy: RecallPolicy, user: str | None) -> bool:
    """Admin ``off`` forbids it; ``on`` allows unless the person refused; ``opt_in`` needs
    the person's consent."""
    mode = policy.limits.cross_channel_user_recall
    if mode == "off" or user is None:
        return False
    if mode == "on":
        return user not in policy.cross_channel_refused
    return user in policy.cross_channel_users


def filter_candidates(
    candidates: Sequence[Note], ctx: RunContext, policy: RecallPolicy, now: datetime
) -> tuple[list[Note], list[tuple[str, str]]]:
    """Split candidates into those that may be shown and (id, reason) exclusions."""
    kept, excluded = [], []
    kinds = policy.limits.kinds
    for note in candidates:
        reason = _reason(note, ctx, policy, now, kinds)
        if reason is None:
            kept.append(note)
        else:
            excluded.append((note.id, reason))
    return kept, excluded


def _norm(text: str, norms: dict[str, str] | None) -> str:
    """``normalize_text``, memoized in ``norms`` (the agent's memo) when given: the same
    note texts come back on every recall."""
    if norms is None:
        return normalize_text(text)
    found = norms.get(text)
    if found is None:
        if len(norms) >= MEMO_LIMIT:
            norms.clear()
        found = norms[text] = normalize_text(text)
    return found


def collapse(
    notes: Sequence[Note],
    current: frozenset[ScopeKey],
    norms: dict[str, str] | None = None,
    vetoes: Vetoes | None = None,
) -> tuple[list[Note], list[tuple[str, str]]]:
    """Dedupe by normalized text, then keep one note per subject (the others: ``overridden``),
    except that a note is never overridden by one an undo vetoed against it (``vetoes``).

    Of several copies of one statement a pinned copy is kept, so dedupe never drops a pin
    (the unpinned copy could otherwise fall outside the budget); otherwise, and between
    notes on one subject, :func:`~remem.recall.rank.preference_key` decides. Only notes
    that share a text or a subject with another are ordered at all: a note alone with its
    text and subject is always kept, and never changes what the others see.
    """
    norm = {n.id: _norm(n.text, norms) for n in notes}
    by_text: dict[str, int] = {}
    by_subject: dict[str, int] = {}
    for note in notes:
        key = norm[note.id]
        by_text[key] = by_text.get(key, 0) + 1
        if note.subject is not None:
            by_subject[note.subject] = by_subject.get(note.subject, 0) + 1
    kept: list[Note] = []
    contested: list[Note] = []
    for note in notes:
        shared = by_text[norm[note.id]] > 1 or (
            note.subject is not None and by_subject[note.subject] > 1
        )
        (contested if shared else kept).append(note)
    if not contested:
        return kept, []
    order = sorted(contested, key=lambda n: preference_key(n, current))
    pinned_texts = {norm[n.id] for n in order if n.pinned}
    if pinned_texts:
        order.sort(key=lambda n: not n.pinned and norm[n.id] in pinned_texts)
    seen_text: set[str] = set()
    seen_subject: dict[str, list[Note]] = {}
    excluded = []
    for note in order:
        key = norm[note.id]
        if key in seen_text:
            excluded.append((note.id, "duplicate"))
            continue
        seen_text.add(key)
        if note.subject is not None:
            holders = seen_subject.setdefault(note.subject, [])
            if holders and _overridden(note, holders, vetoes):
                excluded.append((note.id, "overridden"))
                continue
            holders.append(note)
        kept.append(note)
    return kept, excluded


def _overridden(note: Note, holders: Sequence[Note], vetoes: Vetoes | None) -> bool:
    """Whether a preferred note on the same subject overrides ``note``: any may, except
    one an undo vetoed against it (then the restored note is recalled beside it)."""
    if not vetoes:
        return True
    said = Said.of(note)
    return any(not vetoes.forbids(Said.of(holder), said) for holder in holders)


def apply_budget(
    notes: Sequence[Note],
    order: Sequence[int],
    scores: Sequence[float],
    max_notes: int,
    max_chars: int,
    bodies: Bodies | None = None,
    max_note_chars: int | None = None,
) -> tuple[list[tuple[Note, float]], dict[str, list[str]], int]:
    """Take notes in rank order (``order`` indexes ``notes``) within both budgets.

    Returns the chosen notes with their scores, the ids left out by reason
    (``over_note_limit``, ``over_char_budget``) and the characters used.
    """
    chosen: list[tuple[Note, float]] = []
    over_chars: list[str] = []
    over_notes: list[str] = []
    used = 0
    for rank_pos, i in enumerate(order):
        if len(chosen) >= max_notes:
            # Everything further down is over the note limit: no need to look at it.
            over_notes = [notes[j].id for j in order[rank_pos:]]
            break
        note = notes[i]
        cost = len(note_line(len(chosen) + 1, note, bodies, max_note_chars)) + 1
        if used + cost > max_chars:
            over_chars.append(note.id)
            continue
        chosen.append((note, scores[rank_pos]))
        used += cost
    left_out = {}
    if over_notes:
        left_out["over_note_limit"] = over_notes
    if over_chars:
        left_out["over_char_budget"] = over_chars
    return chosen, left_out, used


@dataclass(slots=True)
class Prepared:
    """What a recall computes before looking at the query, cached between recalls.

    Valid while the eligible scopes are unchanged (their versions), for the same
    policy and run shape, and until ``valid_until`` (the first moment one of the
    kept notes expires).
    """

    versions: tuple[int, ...]
    notes: list[Note]
    valid_until: datetime | None
    columns: Columns | None
    #: What every trace of this preparation shares (see ``trace.shared_candidates``): the
    #: kept candidates and those the filters and dedupe excluded, by reason.
    shared: dict[str, Any] = field(default_factory=dict)


def _deadline(notes: Sequence[Note], policy: RecallPolicy) -> datetime | None:
    ends = (note.leaves_recall_at(policy.retention_for(note)) for note in notes)
    return min((end for end in ends if end is not None), default=None)


def prepare(
    agent: AgentLog,
    state: State,
    ctx: RunContext,
    keys: Sequence[ScopeKey],
    policy: RecallPolicy,
    now: datetime,
    tag: str | None,
) -> Prepared:
    """Candidates, filters and collapse for this run: cached until something changes."""
    for key in keys:
        state.ensure(key)
    versions = tuple(state.scope_versions.get(k, 0) for k in keys)
    cache_key = (ctx.kind, ctx.channel, ctx.actor, tag, tuple(keys), policy)
    cached: Prepared | None = agent.recall_cache.get(cache_key)
    if (
        cached is not None
        and cached.versions == versions
        and (cached.valid_until is None or now < cached.valid_until)
    ):
        return cached
    candidates = _candidates(state, keys, tag)
    allowed, excluded = filter_candidates(candidates, ctx, policy, now)
    current = current_keys(ctx)
    unique, collapsed = collapse(allowed, current, agent.memos.norms, Vetoes(state, agent.secret))
    unique.sort(key=lambda n: n.id)
    prepared = Prepared(
        versions=versions,
        notes=unique,
        valid_until=_deadline(unique, policy),
        columns=Columns(unique, current) if numpy_available() else None,
        shared=shared_candidates([n.id for n in unique], group_by_reason(excluded + collapsed)),
    )
    if len(agent.recall_cache) >= RECALL_CACHE_SIZE:
        agent.recall_cache.pop(next(iter(agent.recall_cache)))
    agent.recall_cache[cache_key] = prepared
    return prepared


def _order(
    prepared: Prepared,
    scores: dict[str, float],
    ctx: RunContext,
    now: datetime,
    has_query: bool,
) -> tuple[list[int], list[float]]:
    if prepared.columns is not None:
        order, final, _ = prepared.columns.rank(scores, now, has_query)
        return order, final
    # Without numpy: the reference implementation, mapped back to positions.
    ranked = rank(prepared.notes, scores, current=current_keys(ctx), now=now, has_query=has_query)
    position = {n.id: i for i, n in enumerate(prepared.notes)}
    return [position[r.note.id] for r in ranked], [r.score for r in ranked]


def run_recall(
    agent: AgentLog,
    state: State,
    ctx: RunContext,
    query: str,
    *,
    policy: RecallPolicy,
    now: datetime,
    max_chars: int | None,
    tag: str | None,
    rules: str,
) -> Recall:
    """Run the pipeline on ``state`` (already caught up) and append the trace."""
    keys = eligible_scopes(ctx, state)
    prepared = prepare(agent, state, ctx, keys, policy, now, tag)
    # A write in another thread since the catch-up may have added a candidate whose index
    # rows still wait: they are placed now (after the writer is done), before any is read.
    agent.index_pending()
    order, final, mode = _ranked(agent, state, ctx, keys, query, prepared, now)
    limits = policy.limits
    char_limit = (
        limits.recall_max_chars if max_chars is None else min(max_chars, limits.recall_max_chars)
    )
    bodies = agent.memos.bodies
    chosen, over, used = apply_budget(
        prepared.notes,
        order,
        final,
        limits.recall_max_notes,
        char_limit,
        bodies,
        limits.max_note_chars,
    )
    notes = [note for note, _ in chosen]
    text = render(notes, bodies=bodies, max_chars=limits.max_note_chars)
    budget = {
        "max_notes": limits.recall_max_notes,
        "max_chars": char_limit,
        "used_notes": len(notes),
        "used_chars": used,
    }
    record = _trace(ctx, now, query, mode, keys, chosen, over, budget, text, prepared)
    agent.traces.append(record, prepared.shared)
    return Recall(
        notes=notes,
        text=text,
        run_id=ctx.run_id,
        retrieval=mode,
        rules=rules,
        scores={note.id: score for note, score in chosen},
    )


def _ranked(
    agent: AgentLog,
    state: State,
    ctx: RunContext,
    keys: Sequence[ScopeKey],
    query: str,
    prepared: Prepared,
    now: datetime,
) -> tuple[list[int], list[float], str]:
    """The prepared notes' positions best first, their final scores, and the retrieval
    mode; with numpy and a query, relevance is gathered straight into the columns."""
    has_query = bool(query.strip())
    columns = prepared.columns
    if columns is not None and has_query:
        rel, mode = relevance_rows(agent.lexical, state, keys, query, columns.gather)
        order, final, _ = columns.rank_gathered(rel, now, has_query)
        return order, final, mode
    scores, mode = relevance(agent.lexical, state, keys, query)
    order, final = _order(prepared, scores, ctx, now, has_query)
    return order, final, mode


def _trace(
    ctx: RunContext,
    now: datetime,
    query: str,
    mode: str,
    keys: Sequence[ScopeKey],
    chosen: Sequence[tuple[Note, float]],
    over: dict[str, list[str]],
    budget: dict[str, int],
    text: str,
    prepared: Prepared,
) -> dict[str, Any]:
    """The trace record of one recall: who asked, what was chosen, and a hash of the text."""
    return Trace.record(
        run_id=ctx.run_id,
        agent=ctx.agent,
        ts=format_ts(now),
        run_kind=ctx.kind.value,
        actor=ctx.actor,
        role=ctx.role.value,
        channel=ctx.channel,
        query_chars=len(query),
        retrieval=mode,
        scopes=[k[0].value + (f":{k[1]}" if k[1] else "") for k in keys],
        selected=[(note.id, score) for note, score in chosen],
        # Shared with every recall of this preparation; over_note_limit follows from it.
        excluded_by_reason={k: v for k, v in over.items() if k != "over_note_limit"},
        budget=budget,
        text_sha256=hashlib.sha256(text.encode()).hexdigest(),
        text_len=len(text),
        candidates_ref=prepared.shared["ref"],
    )


def _candidates(state: State, keys: Sequence[ScopeKey], tag: str | None) -> list[Note]:
    out = []
    for scope, scope_id in keys:
        for note in state.in_scope(scope, scope_id):
            if note.status in _DEAD:
                continue
            if tag is not None and tag not in note.tags:
                continue
            out.append(note)
    return out

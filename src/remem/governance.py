"""Policy layers, participant choices and the review queue.

Functions over the :class:`~remem.service.Memory` facade, which exposes them as
methods; kept apart so each concept has one module. They run with the same
authorization as every other action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remem.context import RunContext
from remem.core.events import Approved, ChannelPolicySet, Event, PreferencesSet, Refused
from remem.core.model import Basis, Kind, Note, Scope, Status
from remem.core.projection import State
from remem.core.text import check_id
from remem.core.veto import Vetoes
from remem.errors import Denied, InvalidInput, Rejected
from remem.formation.extract import LEARNED_RULE_TAG, append_learned_rule
from remem.formation.revise import subject_rule
from remem.policy.authz import Action, Target
from remem.policy.config import Limits
from remem.policy.guard import find_sensitive
from remem.policy.layers import channel_settings, inferred_rank
from remem.writes import check_write_policy

if TYPE_CHECKING:
    from remem.recall.engine import RecallPolicy
    from remem.service import Memory
    from remem.writes import RememberPlan

REVIEWABLE = (Status.PENDING, Status.UNVERIFIED)


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """The result of a policy setting: what is stored, what applies, and notices."""

    stored: dict[str, Any]
    effective: dict[str, dict[str, Any]]
    notices: list[str] = field(default_factory=list)


def _jsonable(value: Any) -> Any:
    if isinstance(value, frozenset | set | tuple | list):
        return sorted(str(v) for v in value)
    return value


# -- limits --------------------------------------------------------------------


def limits(mem: Memory, ctx: RunContext, channel: str | None = None) -> Limits:
    """The merged admin → agent (→ channel) limits for ``ctx``'s agent. Another channel's
    limits are its policy: only those who may read that channel see them (as with
    :func:`channel_policy`)."""
    state = mem._agent(ctx).state
    if channel is not None and channel != ctx.channel:
        mem._require(ctx, state, Action.READ, Target(Scope.CHANNEL, channel))
    channel_policy = state.channel_policies.get(channel) if channel else None
    return mem._book.merged(ctx.agent, channel, channel_policy).limits


def effective_policy(mem: Memory, ctx: RunContext) -> dict[str, Any]:
    """Each effective value with the layer it came from, clamps and warnings."""
    state = mem._state(ctx)
    if ctx.role.value == "unpaired":
        raise Denied("denied (unpaired): unpaired senders have no access to memory", "unpaired")
    channel = ctx.channel
    merged = mem._book.merged(
        ctx.agent, channel, state.channel_policies.get(channel) if channel else None
    )
    values = {
        key: {"value": _jsonable(getattr(merged.limits, key)), "layer": layer}
        for key, layer in sorted(merged.sources.items())
    }
    prefs = state.preferences.get(ctx.actor or "", {})
    for key in ("inferred", "cross_channel"):
        if key in prefs:
            values[f"my_{key}"] = {"value": prefs[key], "layer": "participant"}
    clamped = list(merged.clamped) + _participant_clamps(prefs, merged.limits, merged.sources)
    stewards = state.channel_policies.get(channel or "", {}).get("stewards", [])
    return {
        "values": values,
        "stewards": list(stewards),
        "clamped": clamped,
        "warnings": [mem._book.warning] if mem._book.warning else [],
    }


# -- channel policy and participant choices ------------------------------------


def set_channel_policy(mem: Memory, ctx: RunContext, channel: str, **settings: Any) -> PolicyChange:
    """Set a channel's policy (admins, or that channel's stewards; ``stewards``: admins)."""
    check_id(channel, "channel")
    if not settings:
        raise InvalidInput("name at least one setting, e.g. memory=False")
    stewards = settings.pop("stewards", None)
    parsed = channel_settings(settings)
    agent = mem._agent(ctx)
    state = agent.sync()
    mem._require(ctx, state, Action.CHANNEL_POLICY, Target(Scope.CHANNEL, channel))
    stored = {k: _jsonable(v) for k, v in settings.items()}
    if stewards is not None:
        mem._require(ctx, state, Action.APPOINT_STEWARDS, Target(Scope.CHANNEL, channel))
        if not isinstance(stewards, list | tuple):
            raise InvalidInput("stewards must be a list of user ids")
        for steward in stewards:
            check_id(steward, "steward")
        stored["stewards"] = sorted(set(stewards))
    _ = parsed

    def build(st: State) -> tuple[list[Event], None]:
        return [ChannelPolicySet(target=channel, settings=stored, **mem._envelope(ctx))], None

    agent.write(build)
    channel_ctx = RunContext.group(ctx.agent, channel, ctx.actor or "owner", ctx.role)
    effective = mem.effective_policy(channel_ctx)
    notices = [c for c in effective["clamped"] if "from channel" in c]
    return PolicyChange(stored, effective["values"], notices)


def channel_policy(mem: Memory, ctx: RunContext, channel: str) -> dict[str, Any]:
    """The stored settings of a channel (readable by anyone who may read the channel)."""
    state = mem._state(ctx)
    check_id(channel, "channel")
    mem._require(ctx, state, Action.READ, Target(Scope.CHANNEL, channel))
    return dict(state.channel_policies.get(channel, {}))


def set_my_preferences(
    mem: Memory,
    ctx: RunContext,
    *,
    inferred: bool | None = None,
    cross_channel: bool | None = None,
) -> PolicyChange:
    """A participant's choices about memory of themselves; take effect immediately."""
    if not ctx.has_personal_scope:
        raise Denied(
            f"denied (no_personal_scope): {ctx.role.value} runs have no personal choices",
            rule="no_personal_scope",
        )
    settings: dict[str, Any] = {}
    for key, value in (("inferred", inferred), ("cross_channel", cross_channel)):
        if value is not None:
            if not isinstance(value, bool):
                raise InvalidInput(f"{key} must be True or False")
            settings[key] = value
    if not settings:
        raise InvalidInput("pass inferred=True/False and/or cross_channel=True/False")
    user = ctx.actor
    assert user is not None
    agent = mem._agent(ctx)
    agent.write(
        lambda st: ([PreferencesSet(user=user, settings=settings, **mem._envelope(ctx))], None)
    )
    notices = []
    mode = mem.limits(ctx).cross_channel_user_recall
    if cross_channel and mode == "off":
        notices.append(
            "cross-channel recall is turned off by admin policy; your choice is saved "
            "and applies if that changes"
        )
    if inferred and mem.limits(ctx, ctx.channel).inferred == "off":
        notices.append(
            "inferred memory is turned off here by policy; your choice is saved "
            "and applies if that changes"
        )
    return PolicyChange(settings, {}, notices)


def _participant_clamps(
    prefs: dict[str, Any], limits: Limits, sources: dict[str, str]
) -> list[str]:
    """A participant's consent that a wider layer overrides (stricter wins)."""
    out = []
    if prefs.get("cross_channel") is True and limits.cross_channel_user_recall == "off":
        layer = sources.get("cross_channel_user_recall", "admin")
        out.append(
            f"my_cross_channel=true from participant is looser than off from {layer}; off applies"
        )
    if prefs.get("inferred") is True and limits.inferred == "off":
        layer = sources.get("inferred", "admin")
        out.append(
            f"my_inferred=true from participant is looser than off from {layer}; off applies"
        )
    return out


# -- write policy --------------------------------------------------------------


def screen_write(
    mem: Memory,
    ctx: RunContext,
    text: str,
    kind: Kind,
    basis: Basis,
    limits: Limits,
    scope: Scope,
    scope_id: str | None,
) -> None:
    check_write_policy(text, kind, limits)
    if basis is not Basis.INFERRED:
        return
    if limits.inferred == "off":
        raise Rejected("inferred memory is turned off here by policy", reason="policy_off")
    if scope is Scope.USER and scope_id is not None:
        prefs = mem._agent(ctx).state.preferences.get(scope_id, {})
        if prefs.get("inferred") is False:
            raise Rejected(
                "this person asked not to have things inferred about them", reason="policy_off"
            )
    finding = find_sensitive(text)
    if finding is not None:
        raise Rejected(finding.message, reason="sensitive")


def initial_status(mem: Memory, ctx: RunContext, state: State, plan: RememberPlan) -> Status:
    """``pending`` when any review rule applies (stricter wins), else ``active``."""
    limits = plan.limits
    if plan.scope is Scope.AGENT and ctx.role.is_system and limits.agent_writes == "review":
        return Status.PENDING
    if plan.basis is Basis.INFERRED:
        mode = limits.inferred
        if mode == "auto" or (mode.startswith("evidence:") and inferred_rank(mode)[1] <= 1):
            return Status.ACTIVE
        return Status.PENDING
    return Status.ACTIVE


def evidence_events(mem: Memory, ctx: RunContext, note: Note, limits: Limits) -> list[Event]:
    """Approve a pending inferred note once it has the evidence ``evidence:N`` asks for."""
    mode = limits.inferred
    if note.status is not Status.PENDING or not mode.startswith("evidence:"):
        return []
    if note.basis is not Basis.INFERRED:
        return []  # held for another reason (agent_writes review): evidence is no approval
    if note.scope is Scope.AGENT and limits.agent_writes == "review":
        return []
    if note.evidence + 1 < inferred_rank(mode)[1]:
        return []
    env = mem._envelope(ctx) | {"actor": "policy", "role": "policy"}
    return [Approved(note_id=note.id, **env)]


# -- review queue --------------------------------------------------------------


def may_review(mem: Memory, ctx: RunContext, state: State, note: Note) -> bool:
    if ctx.role.is_admin or ctx.kind.value == "owner":
        return True
    if note.status is Status.UNVERIFIED:
        return False
    if note.scope is Scope.USER:
        return note.scope_id == ctx.actor and ctx.has_personal_scope
    if note.scope is Scope.CHANNEL:
        stewards = state.channel_policies.get(note.scope_id or "", {}).get("stewards", ())
        return ctx.actor in stewards
    return False


def pending(mem: Memory, ctx: RunContext) -> list[Note]:
    """Pending and unverified notes this context may review, oldest first."""
    state = mem._state(ctx)
    out = [
        n for n in state.notes.values() if n.status in REVIEWABLE and may_review(mem, ctx, state, n)
    ]
    return sorted(out, key=lambda n: n.id)


def approve(mem: Memory, ctx: RunContext, note_id: str) -> Note:
    """Confirm a pending or unverified note: it becomes active."""
    return review(mem, ctx, note_id, approve=True)


def reject(mem: Memory, ctx: RunContext, note_id: str) -> Note:
    """Refuse a pending or unverified note: it is never recalled; compaction erases it."""
    return review(mem, ctx, note_id, approve=False)


def review(mem: Memory, ctx: RunContext, note_id: str, *, approve: bool) -> Note:
    """Approve or reject one note awaiting review, as ``ctx``."""
    agent = mem._agent(ctx)

    def build(state: State) -> tuple[list[Event], str]:
        note = mem._visible(ctx, state, note_id)
        if note.status not in REVIEWABLE:
            raise InvalidInput(f"note {note_id} is {note.status.value}, not awaiting review")
        if not may_review(mem, ctx, state, note):
            raise Denied(
                "denied (reviewer): only the person it is about, the channel's stewards or "
                "an admin may review this note",
                rule="reviewer",
            )
        env = mem._envelope(ctx)
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
                envelope=mem._envelope(ctx),
                text=note.text,
                vetoes=Vetoes(state, mem._agent(ctx).secret),
            )
        return events, note.id

    note = agent.state.notes[agent.write(build)]
    if approve and LEARNED_RULE_TAG in note.tags and note.status is Status.ACTIVE:
        append_learned_rule(mem, ctx, note.text, note.id)
    return note


def recall_policy(mem: Memory, ctx: RunContext, state: State) -> RecallPolicy:
    """What the policy layers decide for ``ctx``'s recall, cached per state and limits."""
    from remem.recall.engine import RecallPolicy

    channel_limits = mem.limits(ctx, ctx.channel)
    agent_limits = mem.limits(ctx)
    key = (state.serial, state.preferences_version, channel_limits, agent_limits)
    cache = mem._recall_policies
    cached = cache.get(key)
    if cached is not None:
        return cached
    prefs = state.preferences.items()
    policy = RecallPolicy(
        limits=channel_limits,
        cross_channel_users=frozenset(u for u, p in prefs if p.get("cross_channel") is True),
        cross_channel_refused=frozenset(u for u, p in prefs if p.get("cross_channel") is False),
        retention_days_agent=agent_limits.retention_days,
    )
    if len(cache) > 1024:
        cache.clear()
    cache[key] = policy
    return policy

"""Policy settings' use cases: limits, the effective policy, channel policy and a
participant's own choices; the recall policy they make."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remem.app.kernel import Kernel
from remem.context import RunContext
from remem.core.events import ChannelPolicySet, Event, PreferencesSet
from remem.core.model import Scope
from remem.core.projection import State
from remem.core.text import check_id, check_optional_id
from remem.errors import InvalidInput
from remem.policy.authz import Action, Target
from remem.policy.channel import (
    PolicyChange,
    effective_view,
    jsonable,
    preference_notices,
    recall_policy_of,
)
from remem.policy.config import Limits
from remem.policy.layers import channel_settings

if TYPE_CHECKING:
    from remem.recall.engine import RecallPolicy


def limits(k: Kernel, channel: str | None = None) -> Limits:
    """The merged admin → agent (→ channel) limits for this agent. Another channel's
    limits are its policy: only those who may read that channel see them (as with
    :func:`channel_policy`)."""
    channel = check_optional_id(channel, "channel")
    if channel is not None and channel != k.ctx.channel:
        k.require(k.state(), Action.READ, Target(Scope.CHANNEL, channel))
    return k.limits(channel)


def effective_policy(k: Kernel) -> dict[str, Any]:
    """Each effective value with the layer it came from, clamps and warnings."""
    state = k.state()
    k.require_envelope(Action.ACCESS)
    ctx = k.ctx
    channel = ctx.channel
    stewards = state.channel_policies.get(channel or "", {}).get("stewards", [])
    prefs = state.preferences.get(ctx.actor or "", {})
    return effective_view(k.merged(channel), prefs, stewards, k.policy_warning())


def set_channel_policy(k: Kernel, channel: str, **settings: Any) -> PolicyChange:
    """Set a channel's policy (admins, or that channel's stewards; ``stewards``: admins)."""
    ctx = k.ctx
    check_id(channel, "channel")
    if not settings:
        raise InvalidInput("name at least one setting, e.g. memory=False")
    stewards = settings.pop("stewards", None)
    channel_settings(settings)  # checks every value before anything is stored
    state = k.state()
    k.require(state, Action.CHANNEL_POLICY, Target(Scope.CHANNEL, channel))
    stored = {key: jsonable(v) for key, v in settings.items()}
    if stewards is not None:
        k.require(state, Action.APPOINT_STEWARDS, Target(Scope.CHANNEL, channel))
        if not isinstance(stewards, list | tuple):
            raise InvalidInput("stewards must be a list of user ids")
        for steward in stewards:
            check_id(steward, "steward")
        stored["stewards"] = sorted(set(stewards))

    def build(st: State) -> tuple[list[Event], None]:
        return [ChannelPolicySet(target=channel, settings=stored, **k.envelope())], None

    k.agent.write(build)
    channel_ctx = RunContext.group(ctx.agent, channel, ctx.actor or "owner", ctx.role)
    effective = effective_policy(k.under(channel_ctx))
    notices = [c for c in effective["clamped"] if "from channel" in c]
    return PolicyChange(stored, effective["values"], notices)


def channel_policy(k: Kernel, channel: str) -> dict[str, Any]:
    """The stored settings of a channel (readable by anyone who may read the channel)."""
    state = k.state()
    check_id(channel, "channel")
    k.require(state, Action.READ, Target(Scope.CHANNEL, channel))
    return dict(state.channel_policies.get(channel, {}))


def set_my_preferences(
    k: Kernel,
    *,
    inferred: bool | None = None,
    cross_channel: bool | None = None,
    tool_writes: str | None = None,
) -> PolicyChange:
    """A participant's choices about memory of themselves; take effect immediately.
    ``tool_writes``: ``review`` holds what a model writes with a memory tool in this
    person's turns for their review; ``announce`` leaves it to policy (stricter wins)."""
    ctx = k.ctx
    k.require_envelope(Action.PERSONAL_SCOPE, Target(Scope.USER, ctx.actor))
    settings: dict[str, Any] = {}
    for key, value in (("inferred", inferred), ("cross_channel", cross_channel)):
        if value is not None:
            if not isinstance(value, bool):
                raise InvalidInput(f"{key} must be True or False")
            settings[key] = value
    if tool_writes is not None:
        if tool_writes not in ("announce", "review"):
            raise InvalidInput(
                f"tool_writes must be 'announce' or 'review', not {tool_writes!r:.40}"
            )
        settings["tool_writes"] = tool_writes
    if not settings:
        raise InvalidInput(
            "pass inferred=True/False, cross_channel=True/False and/or "
            "tool_writes='announce'/'review'"
        )
    user = ctx.actor
    assert user is not None
    k.agent.write(lambda st: ([PreferencesSet(user=user, settings=settings, **k.envelope())], None))
    notices = preference_notices(
        k.limits(), k.limits(ctx.channel), inferred=inferred, cross_channel=cross_channel
    )
    return PolicyChange(settings, {}, notices)


def recall_policy(k: Kernel, state: State) -> RecallPolicy:
    """What the policy layers decide for this envelope's recall, cached per state and
    limits."""
    channel_limits = k.limits(k.ctx.channel)
    agent_limits = k.limits()
    version = (state.serial, state.preferences_version)
    key = (channel_limits, agent_limits)
    memo = k.agent.memos.recall_policies
    cached: RecallPolicy | None = memo.get(version, key)
    if cached is not None:
        return cached
    policy = recall_policy_of(channel_limits, agent_limits, state.preferences)
    memo.put(version, key, policy)
    return policy

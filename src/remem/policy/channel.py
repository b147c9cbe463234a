"""Channel policy and participant choices: the pure parts (the use cases that store
them are in :mod:`remem.app.settings`).

:class:`PolicyChange` is what a policy setting returns; :func:`effective_view` lays out
each effective value with the layer it came from; :func:`recall_policy_of` turns the
layers and the participants' choices into what a recall applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from remem.policy.config import Limits
from remem.policy.layers import Merged

if TYPE_CHECKING:
    from remem.recall.engine import RecallPolicy


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """The result of a policy setting: what is stored, what applies, and notices."""

    stored: dict[str, Any]
    effective: dict[str, dict[str, Any]]
    notices: list[str] = field(default_factory=list)


def jsonable(value: Any) -> Any:
    """A setting's value as stored and shown: sets and sequences as sorted strings."""
    if isinstance(value, frozenset | set | tuple | list):
        return sorted(str(v) for v in value)
    return value


def effective_view(
    merged: Merged,
    prefs: Mapping[str, Any],
    stewards: list[str],
    warning: str | None,
) -> dict[str, Any]:
    """Each effective value with the layer it came from, the speaker's own choices
    (``prefs``), the channel's stewards, clamps and warnings."""
    values = {
        key: {"value": jsonable(getattr(merged.limits, key)), "layer": layer}
        for key, layer in sorted(merged.sources.items())
    }
    for key in ("inferred", "cross_channel", "tool_writes"):
        if key in prefs:
            values[f"my_{key}"] = {"value": prefs[key], "layer": "participant"}
    clamped = list(merged.clamped) + participant_clamps(prefs, merged.limits, merged.sources)
    return {
        "values": values,
        "stewards": list(stewards),
        "clamped": clamped,
        "warnings": [warning] if warning else [],
    }


def participant_clamps(
    prefs: Mapping[str, Any], limits: Limits, sources: Mapping[str, str]
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


def preference_notices(
    limits: Limits, channel_limits: Limits, *, inferred: bool | None, cross_channel: bool | None
) -> list[str]:
    """What a participant is told when a wider layer overrides the choice they made."""
    notices = []
    if cross_channel and limits.cross_channel_user_recall == "off":
        notices.append(
            "cross-channel recall is turned off by admin policy; your choice is saved "
            "and applies if that changes"
        )
    if inferred and channel_limits.inferred == "off":
        notices.append(
            "inferred memory is turned off here by policy; your choice is saved "
            "and applies if that changes"
        )
    return notices


def recall_policy_of(
    channel_limits: Limits, agent_limits: Limits, preferences: Mapping[str, Mapping[str, Any]]
) -> RecallPolicy:
    """What the policy layers and the participants' choices decide for a recall."""
    from remem.recall.engine import RecallPolicy

    prefs = preferences.items()
    return RecallPolicy(
        limits=channel_limits,
        cross_channel_users=frozenset(u for u, p in prefs if p.get("cross_channel") is True),
        cross_channel_refused=frozenset(u for u, p in prefs if p.get("cross_channel") is False),
        retention_days_agent=agent_limits.retention_days,
    )

"""The owner's and admins' use cases of channel kinds: record or correct one
(:func:`set_channel_kind`) and list them (:func:`channel_kinds`, what ``remem doctor``
shows). How a kind is first recorded and checked on every call is
:mod:`remem.app.channel_facts`.
"""

from __future__ import annotations

from typing import Any

from remem.app.kernel import Kernel
from remem.context import Role
from remem.core.events import ChannelKindSet, Event
from remem.core.model import Scope
from remem.core.projection import State
from remem.core.text import check_id
from remem.errors import InvalidInput
from remem.policy.authz import Action, Target
from remem.policy.kind_rules import CHANNEL_KINDS


def set_channel_kind(k: Kernel, channel: str, kind: str, member: str | None) -> dict[str, Any]:
    """Record or correct ``channel``'s kind (owners and admins: rule ``admin_only``);
    ``member``: the DM's one member (required for ``dm``, none for ``group``)."""
    check_id(channel, "channel")
    if kind not in CHANNEL_KINDS:
        raise InvalidInput(f"a channel's kind is 'dm' or 'group', not {str(kind)[:20]!r}")
    if kind == "dm":
        if member is None:
            raise InvalidInput("a DM has one member: give it (--member U, member='discord:123')")
        check_id(member, "member")
    elif member is not None:
        raise InvalidInput("a group channel has no one member: leave out --member")
    state = k.state()
    k.require(state, Action.SET_CHANNEL_KIND, Target(Scope.CHANNEL, channel))
    ceiling = k.engine.labels.value

    def build(st: State) -> tuple[list[Event], None]:
        event = ChannelKindSet(
            target=channel, run_kind=kind, member=member, ceiling=ceiling, how="set", **k.envelope()
        )
        return [event], None

    k.agent.write(build)
    return {"channel": channel, **k.agent.state.channel_kinds[channel].to_dict()}


def channel_kinds(k: Kernel) -> dict[str, Any]:
    """Every recorded kind (``recorded``: channel → its record), the channels first
    recorded by a member-capped principal and not confirmed since (``unconfirmed``), and
    the channels the log names with no kind yet (``unrecorded``). Owners and admins."""
    state = k.state()
    k.require(state, Action.ADMINISTER, Target(Scope.AGENT))
    recorded = {c: fact.to_dict() for c, fact in sorted(state.channel_kinds.items())}
    unconfirmed = sorted(
        c
        for c, fact in state.channel_kinds.items()
        if fact.how == "first_use" and fact.ceiling == Role.MEMBER.value
    )
    named = {sid for scope, sid in state.scopes if scope is Scope.CHANNEL and sid}
    named |= set(state.channel_policies)
    unrecorded = sorted(named - set(state.channel_kinds))
    return {"recorded": recorded, "unconfirmed": unconfirmed, "unrecorded": unrecorded}


__all__ = ["channel_kinds", "set_channel_kind"]

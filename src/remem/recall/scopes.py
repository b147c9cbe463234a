"""Which scopes a run may recall from (DESIGN §4.1). Naming ids in a query never widens this."""

from __future__ import annotations

from remem.context import RunContext, RunKind
from remem.core.model import Scope
from remem.core.projection import ScopeKey, State

AGENT_KEY: ScopeKey = (Scope.AGENT, None)


def eligible_scopes(ctx: RunContext, state: State) -> list[ScopeKey]:
    """The scope keys whose notes are candidates for this run, most general first.

    A group turn includes the speaker's user scope so that its notes are
    traced as ``private_in_group`` unless policy allows shared-context recall.
    """
    kind = ctx.kind
    if kind is RunKind.KNOWLEDGE:
        return []
    if kind is RunKind.OWNER:
        return sorted(state.scopes, key=lambda k: (k[0].value, k[1] or ""))
    keys = [AGENT_KEY]
    if kind is RunKind.AGENT_ONLY or (kind is RunKind.SYSTEM and ctx.channel is None):
        return keys
    if ctx.channel is not None:
        keys.append((Scope.CHANNEL, ctx.channel))
    if kind in (RunKind.DM, RunKind.GROUP) and ctx.actor is not None:
        keys.append((Scope.USER, ctx.actor))
    return keys


def current_keys(ctx: RunContext) -> frozenset[ScopeKey]:
    """The narrow scopes of this run (its channel and its speaker), which rank a little higher."""
    keys = set()
    if ctx.channel is not None:
        keys.add((Scope.CHANNEL, ctx.channel))
    if ctx.actor is not None and ctx.role.is_human:
        keys.add((Scope.USER, ctx.actor))
    return frozenset(keys)

"""Channel kinds as facts of the log, checked on every dm or group call: each channel's
kind (``dm`` with its one member, or ``group``) is recorded the first time a call names
it, and every dm or group envelope is judged against it (rules in
:mod:`remem.policy.kind_rules`; the owner's and admins' use cases are
:mod:`remem.app.channel_kinds`).

- **Record** (:func:`check`, run by :meth:`Engine.kernel` for every dm or group call):
  the recorded kind is a lookup in the agent's state; a channel with none is recorded
  from the envelope, insert-if-absent under the agent's writer lock (a
  :class:`~remem.core.events.ChannelKindSet`, ``how="first_use"``, with the recording
  principal's role ceiling). The owner's own tooling (actor ``local:owner``: ``remem
  relearn --channel``, a recall preview) is checked against a record but makes none.
- **Backfill**: before the first kind an agent ever records, every channel whose kind
  what is stored already shows (recall traces' run kinds, member links and sessions,
  channel policies' ``e2ee`` mark and stewards) is recorded as it shows
  (``how="backfill"``); a DM claim on an unrecorded channel whose notes another person
  wrote there is refused (rule ``unrecorded_channel``) rather than recorded.
"""

from __future__ import annotations

from typing import Any, Protocol

from remem.app.agent_state import AgentLog
from remem.app.envelope import TASK_ACTOR
from remem.app.link_settings import LINKS, SESSIONS
from remem.context import OWNER_ACTOR, Role, RunContext, RunKind
from remem.core.events import ChannelKindSet, Event
from remem.core.model import Scope
from remem.core.projection import ChannelKind, State
from remem.policy.authz import Action, Decision, Target, decide, require
from remem.policy.kind_rules import CHANNEL_KINDS, OTHERS_SPOKE
from remem.store.base import ConfigStore

#: Actors that are no person: what they wrote says nothing about who speaks in a channel.
_NOT_PEOPLE = frozenset({OWNER_ACTOR, TASK_ACTOR, *(r.value for r in Role if r.is_system)})
_Fact = tuple[str, str | None]


class _Ceilings(Protocol):
    max_role: Role
    labels: Role


class Call(Protocol):
    """What a check needs of one call (a :class:`~remem.app.kernel.Kernel`)."""

    @property
    def ctx(self) -> RunContext: ...

    @property
    def agent(self) -> AgentLog: ...

    @property
    def engine(self) -> _Ceilings: ...

    @property
    def backend(self) -> ConfigStore: ...

    def envelope(self) -> dict[str, Any]: ...


def check(k: Call) -> None:
    """``Denied`` unless the dm or group envelope of ``k`` matches its channel's recorded
    kind (recording it first if it has none). After the first call naming a channel this
    is a dictionary lookup in the agent's state: no read, no write."""
    ctx, agent = k.ctx, k.agent
    channel = ctx.channel
    assert channel is not None  # dm and group runs have one
    fact = agent.current().channel_kinds.get(channel)
    seen = (fact, ctx.kind, ctx.actor, ctx.role)
    if fact is not None and agent.kind_checks.get(channel) == seen:
        return  # this very envelope was allowed against this very record
    if fact is None and ctx.actor == OWNER_ACTOR:
        return  # the owner's tooling (relearn, a preview) speaks in no channel: no record
    target = _target(fact) if fact is not None else _record(k, channel)
    decision = _decide(k, channel, target)
    if not decision.allowed and fact is not None:
        # The record may have been corrected by another process since this one read it.
        fresh = agent.sync().channel_kinds.get(channel)
        if fresh is not None and fresh != fact:
            decision = _decide(k, channel, _target(fresh))
    require(decision, "; nothing was read or changed")
    if fact is not None and agent.current().channel_kinds.get(channel) is fact:
        agent.kind_checks[channel] = seen


def fits(k: Call) -> Decision:
    """The decision on the dm or group envelope of ``k`` against its channel's recorded
    kind, recording nothing: for an envelope a use case derived from the call's admitted
    one (a learned message's speaker), which :meth:`Engine.kernel` does not check. A
    channel without a record allows it (the admitted call, not its derivation, records)."""
    channel = k.ctx.channel
    assert channel is not None  # dm and group runs have one
    fact = k.agent.current().channel_kinds.get(channel)
    if fact is None:
        return Decision(True, "channel_kind", "")
    return _decide(k, channel, _target(fact))


def _target(fact: ChannelKind) -> _Fact:
    return fact.kind, fact.member


def _decide(k: Call, channel: str, target: _Fact) -> Decision:
    kind, member = target
    engine = k.engine
    return decide(
        k.ctx,
        Action.CHANNEL_KIND,
        Target(Scope.CHANNEL, channel, created_by=member, kind=kind),
        ceiling=engine.max_role,
        labels=engine.labels,
    )


def _record(k: Call, channel: str) -> _Fact:
    """Record the channel's kind (backfilling the agent's channels first if it has never
    recorded one); returns what the envelope is judged against."""
    ctx, agent = k.ctx, k.agent
    backfill = evidence(k, agent.state) if not agent.state.channel_kinds else None
    others = None
    if ctx.kind is RunKind.DM and (backfill is None or channel not in backfill):
        others = _other_speaker(agent.sync(), channel, ctx.actor)

    def build(state: State) -> tuple[list[Event], _Fact]:
        known = state.channel_kinds.get(channel)
        if known is not None:  # another call recorded it meanwhile
            return [], _target(known)
        events: list[Event] = []
        if backfill is not None and not state.channel_kinds:
            events += [
                ChannelKindSet(target=c, run_kind=kind, member=m, how="backfill", **k.envelope())
                for c, (kind, m) in sorted(backfill.items())
            ]
            if channel in backfill:
                return events, backfill[channel]
        if others is not None:  # the log shows it is not this member's DM
            return events, (OTHERS_SPOKE, others)
        member = ctx.actor if ctx.kind is RunKind.DM else None
        ceiling = k.engine.labels.value
        events.append(
            ChannelKindSet(
                target=channel,
                run_kind=ctx.kind.value,
                member=member,
                ceiling=ceiling,
                **k.envelope(),
            )
        )
        return events, (ctx.kind.value, member)

    result: _Fact = agent.write(build)
    return result


def _other_speaker(state: State, channel: str, member: str | None) -> str | None:
    """A person other than ``member`` who wrote a note of ``channel`` in that channel
    (in a DM only its member speaks), if any."""
    for note in state.in_scope(Scope.CHANNEL, channel):
        by = note.created_by
        if by and by != member and by not in _NOT_PEOPLE and note.source.channel_id == channel:
            return by
    return None


def evidence(k: Call, state: State) -> dict[str, _Fact]:
    """The channels whose kind what is stored shows, each with one consistent kind (and,
    for a DM, one member): recall traces' run kinds, member links and sessions, and
    channel policies (``e2ee``: a DM; stewards: a group). Channels with contradicting
    evidence are left out (``remem doctor`` lists them as unrecorded)."""
    seen: dict[str, set[_Fact]] = {}

    def add(channel: Any, kind: str, member: Any) -> None:
        if isinstance(channel, str) and (member is None or isinstance(member, str)):
            seen.setdefault(channel, set()).add((kind, member))

    for record in k.agent.traces.all():
        kind = record.get("run_kind")
        if record.get("type") == "recall" and kind in CHANNEL_KINDS:
            add(record.get("channel"), kind, record.get("actor") if kind == "dm" else None)
    backend, name = k.backend, k.ctx.agent
    for collection in (LINKS, SESSIONS):
        for key in backend.record_keys(collection):
            stored = backend.read_record(collection, key)
            if stored is not None and stored.value.get("agent") == name:
                add(stored.value.get("channel"), "dm", stored.value.get("member"))
    for channel, policy in state.channel_policies.items():
        if policy.get("e2ee"):
            add(channel, "dm", None)
        if policy.get("stewards"):
            add(channel, "group", None)
    return {c: fact for c, facts in seen.items() if (fact := _consistent(facts)) is not None}


def _consistent(facts: set[_Fact]) -> _Fact | None:
    kinds = {kind for kind, _ in facts}
    members = {m for _, m in facts if m is not None}
    if kinds == {"group"}:
        return "group", None
    if kinds == {"dm"} and len(members) == 1:
        return "dm", members.pop()
    return None


__all__ = ["Call", "check", "evidence"]

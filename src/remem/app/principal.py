"""Who an adapter authenticated, and the one way it becomes a run envelope.

An adapter (CLI, HTTP, MCP, member pages) authenticates a **principal** and receives a
run envelope with each call; :func:`run_context` is the only place the two become a
:class:`~remem.context.RunContext`. It reads the envelope's JSON form (or takes a
context built in-process) and asks :func:`remem.policy.authz.decide` (action
``ASSUME_ENVELOPE``) whether the principal's :class:`~remem.policy.authz.Grants`
cover it; a refusal is ``Denied`` with the rule that decided.

=====================  ==========================================================
principal              may assume
=====================  ==========================================================
:class:`OwnerPrincipal`  any envelope of any agent, owner runs included
:class:`HostPrincipal`   dm/group turns whose agent, channel and actor match its
                         patterns, with a role up to ``max_role``; task,
                         agent-only and knowledge runs with the ``sop`` grant;
                         system runs of the principals in ``system``; owner runs
                         with ``owner=True``; of the run kinds in ``kinds`` only
                         (``None``: every kind)
:class:`MemberSession`   its own DM (one agent, channel and member), role member
=====================  ==========================================================

Every principal also has ``max_role``: the highest role the labels on the messages it
passes to ``learn`` may assert (``Memory.for_principal`` caps them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from remem.app.envelope import envelope_from_json
from remem.context import Role, RunContext, RunKind
from remem.core.model import Scope
from remem.core.text import check_id
from remem.errors import InvalidInput
from remem.policy.authz import Action, Grants, Target, check_ceiling, decide, require
from remem.policy.kind_rules import parse_kinds

_ALL = ("*",)
_SYSTEM = frozenset({Role.CRON, Role.SOP, Role.WEBHOOK})


def credential_digest(token: str) -> str:
    """What is stored of a bearer credential that names a principal (a host token, a member
    link or session): its SHA-256, never the credential itself."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class OwnerPrincipal:
    """The owner's own tooling (the CLI, an owner token): may assume any envelope."""

    @property
    def max_role(self) -> Role:
        return Role.OWNER

    @property
    def grants(self) -> Grants:
        return Grants(_ALL, _ALL, _ALL, Role.OWNER, _SYSTEM, owner=True)


def _patterns(value: object, what: str) -> tuple[str, ...]:
    """A tuple of id patterns (``*`` the only wildcard) from a tuple or list of strings."""
    if isinstance(value, str) or not isinstance(value, tuple | list):
        raise InvalidInput(f"{what} must be a tuple of patterns such as ('discord:*',)")
    return tuple(check_id(p, f"a pattern in {what}") for p in value)


def system_roles(value: object, what: str = "system") -> frozenset[Role]:
    """The system principals ``value`` names (roles or their names); ``InvalidInput``
    naming ``what`` for anything else."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput(f"{what} must be a set of Role.CRON, Role.SOP or Role.WEBHOOK")
    roles = set()
    for item in value:
        try:
            role = Role(item)
        except ValueError:
            role = None
        if role is None or not role.is_system:
            raise InvalidInput(f"{what} takes cron, sop or webhook, not {str(item)[:40]!r}")
        roles.add(role)
    return frozenset(roles)


@dataclass(frozen=True, slots=True)
class HostPrincipal:
    """An agent host (a bot, gateway or worker) and what it may assert.

    ``agents``, ``channels``, ``actors``: patterns (``*`` the only wildcard, ``*`` alone
    means all; an empty tuple grants none); ``max_role``: the highest human role it may
    assert (owner, admin or member), in envelopes and on learned messages; ``system``:
    the system principals it may run as (``sop`` also covers task, agent-only and
    knowledge runs); ``owner``: it may run owner runs; ``kinds``: the run kinds it may
    assume (``None``: every kind; ``remem tokens create --kinds``). ``name`` is for logs
    only."""

    agents: tuple[str, ...]
    channels: tuple[str, ...]
    actors: tuple[str, ...]
    max_role: Role = Role.MEMBER
    system: frozenset[Role] = field(default_factory=frozenset)
    owner: bool = False
    name: str = "host"
    kinds: frozenset[RunKind] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", _patterns(self.agents, "agents"))
        object.__setattr__(self, "channels", _patterns(self.channels, "channels"))
        object.__setattr__(self, "actors", _patterns(self.actors, "actors"))
        check_ceiling(self.max_role)
        object.__setattr__(self, "system", system_roles(self.system))
        if not isinstance(self.owner, bool):
            raise InvalidInput("owner must be True or False")
        check_id(self.name, "name")
        object.__setattr__(self, "kinds", parse_kinds(self.kinds, "kinds"))

    @property
    def grants(self) -> Grants:
        return Grants(
            self.agents,
            self.channels,
            self.actors,
            self.max_role,
            self.system,
            self.owner,
            kinds=self.kinds,
        )


@dataclass(frozen=True, slots=True)
class MemberSession:
    """A member's own session (a member page): one member, one agent, one DM channel.
    It assumes only that DM, with role member, whatever the member's role elsewhere."""

    member: str
    agent: str
    channel: str

    def __post_init__(self) -> None:
        check_id(self.member, "member")
        RunContext.dm(self.agent, self.channel, self.member)  # the ids a DM accepts

    @property
    def max_role(self) -> Role:
        return Role.MEMBER

    @property
    def grants(self) -> Grants:
        return Grants((self.agent,), (self.channel,), (self.member,), Role.MEMBER, session=True)

    def envelope(self, run_id: str | None = None) -> RunContext:
        """The one envelope this session acts in."""
        return RunContext.dm(self.agent, self.channel, self.member, run_id=run_id)


Principal = OwnerPrincipal | HostPrincipal | MemberSession
_PRINCIPALS = (OwnerPrincipal, HostPrincipal, MemberSession)
_ANY = Target(Scope.AGENT)


def principal_limits(principal: object) -> tuple[Grants, Role]:
    """A principal's grants and the highest role its learned messages may assert
    (``InvalidInput`` for anything but a principal)."""
    if not isinstance(principal, _PRINCIPALS):
        raise InvalidInput(
            "principal must be a remem.OwnerPrincipal, HostPrincipal or MemberSession"
        )
    return principal.grants, principal.max_role


def run_context(principal: Principal, envelope: Mapping[str, Any] | RunContext) -> RunContext:
    """The :class:`RunContext` an authenticated ``principal`` acts in, from the envelope
    it sent (its JSON form, or a context built in-process).

    The one place an adapter turns request data into a context. Raises
    :class:`InvalidInput` for what is not an envelope (see
    :func:`~remem.app.envelope.envelope_from_json`) or a principal, and ``Denied`` with
    the rule (``agent_not_granted``, ``channel_not_granted``, ``actor_not_granted``,
    ``role_above_grant``, ``system_not_granted``, ``owner_not_granted``,
    ``kind_not_granted``, ``member_session``, ``member_session_role``) where its grants
    do not cover it."""
    grants, _ = principal_limits(principal)
    if isinstance(envelope, RunContext):
        # Through the form: a hand-built context gets the constructors' combinations only.
        envelope = envelope.to_json()
    ctx = envelope_from_json(envelope)
    require(decide(ctx, Action.ASSUME_ENVELOPE, _ANY, grants=grants))
    return ctx


__all__ = [
    "HostPrincipal",
    "MemberSession",
    "OwnerPrincipal",
    "Principal",
    "principal_limits",
    "run_context",
]

"""The trusted run envelope: who is acting, in which run, where, with what role.

The host builds a :class:`RunContext` from facts it trusts (the platform's
authenticated sender id, the role stored at pairing time). Nothing a message or
a model says can change it: "I am your admin" is text, not a role.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from remem.core.ids import new_id
from remem.core.names import check_agent
from remem.core.text import check_id
from remem.errors import InvalidInput


class Role(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"
    UNPAIRED = "unpaired"
    CRON = "cron"
    SOP = "sop"
    WEBHOOK = "webhook"

    @property
    def is_human(self) -> bool:
        return self in (Role.OWNER, Role.ADMIN, Role.MEMBER)

    @property
    def is_system(self) -> bool:
        return self in (Role.CRON, Role.SOP, Role.WEBHOOK)

    @property
    def is_admin(self) -> bool:
        """Owner or admin: full authority inside the agent."""
        return self in (Role.OWNER, Role.ADMIN)


class RunKind(StrEnum):
    DM = "dm"
    GROUP = "group"
    TASK = "task"
    AGENT_ONLY = "agent_only"
    KNOWLEDGE = "knowledge"
    SYSTEM = "system"
    OWNER = "owner"


#: The actor id used for the owner's own tooling (the CLI).
OWNER_ACTOR = "local:owner"


def _require_id(value: object, what: str) -> str:
    """An id by the character set of :func:`remem.core.text.check_id`."""
    return check_id(value, what)


@dataclass(frozen=True, slots=True)
class RunContext:
    """Trusted facts about one run. Build it with the constructors, not by hand.

    ``actor`` is the principal acting (a user id for people, the principal name
    for system runs); ``channel`` is where the run happens (None for runs with
    no channel).
    """

    agent: str
    kind: RunKind
    role: Role
    actor: str | None = None
    channel: str | None = None
    run_id: str = field(default_factory=lambda: new_id("run"))

    def __post_init__(self) -> None:
        check_agent(self.agent)  # the one agent-name validator (no '#' name of the service)
        if not isinstance(self.role, Role):
            raise InvalidInput(f"role must be a remem.Role, not {self.role!r}")
        if not isinstance(self.kind, RunKind):
            raise InvalidInput(f"kind must be a remem.RunKind, not {self.kind!r}")
        # Every id of the envelope by one character set (a host may build one by hand).
        check_id(self.run_id, "run_id")
        if self.actor is not None:
            check_id(self.actor, "actor")
        if self.channel is not None:
            check_id(self.channel, "channel")

    @staticmethod
    def _run(run_id: str | None) -> str:
        return run_id if run_id is not None else new_id("run")

    @classmethod
    def dm(
        cls,
        agent: str,
        channel: str,
        user: str,
        role: Role = Role.MEMBER,
        run_id: str | None = None,
    ) -> RunContext:
        """A turn in a direct conversation with ``user``."""
        return cls(
            agent=agent,
            kind=RunKind.DM,
            role=role,
            actor=_require_id(user, "user"),
            channel=_require_id(channel, "channel"),
            run_id=cls._run(run_id),
        )

    @classmethod
    def group(
        cls,
        agent: str,
        channel: str,
        actor: str,
        role: Role = Role.MEMBER,
        run_id: str | None = None,
    ) -> RunContext:
        """A turn in a shared channel, spoken by ``actor``."""
        return cls(
            agent=agent,
            kind=RunKind.GROUP,
            role=role,
            actor=_require_id(actor, "actor"),
            channel=_require_id(channel, "channel"),
            run_id=cls._run(run_id),
        )

    @classmethod
    def task(cls, agent: str, channel: str, run_id: str | None = None) -> RunContext:
        """A one-shot task in a channel; no person is speaking."""
        return cls(
            agent=agent,
            kind=RunKind.TASK,
            role=Role.SOP,
            actor="task",
            channel=_require_id(channel, "channel"),
            run_id=cls._run(run_id),
        )

    @classmethod
    def agent_only(cls, agent: str, run_id: str | None = None) -> RunContext:
        """A task that sees only agent-wide memory."""
        return cls(
            agent=agent,
            kind=RunKind.AGENT_ONLY,
            role=Role.SOP,
            actor="task",
            run_id=cls._run(run_id),
        )

    @classmethod
    def knowledge(cls, agent: str, run_id: str | None = None) -> RunContext:
        """A clean knowledge-writing run: recalls nothing at all."""
        return cls(
            agent=agent,
            kind=RunKind.KNOWLEDGE,
            role=Role.SOP,
            actor="task",
            run_id=cls._run(run_id),
        )

    @classmethod
    def system(
        cls,
        agent: str,
        principal: Role,
        channel: str | None = None,
        run_id: str | None = None,
    ) -> RunContext:
        """A cron, sop or webhook run. Such runs have no personal scope."""
        if not isinstance(principal, Role) or not principal.is_system:
            raise InvalidInput("principal must be Role.CRON, Role.SOP or Role.WEBHOOK")
        return cls(
            agent=agent,
            kind=RunKind.SYSTEM,
            role=principal,
            actor=principal.value,
            channel=_require_id(channel, "channel") if channel is not None else None,
            run_id=cls._run(run_id),
        )

    @classmethod
    def owner(cls, agent: str, run_id: str | None = None) -> RunContext:
        """The owner's own tooling (the CLI): sees everything, for inspection."""
        return cls(
            agent=agent,
            kind=RunKind.OWNER,
            role=Role.OWNER,
            actor=OWNER_ACTOR,
            run_id=cls._run(run_id),
        )

    def to_json(self) -> dict[str, str | None]:
        """The envelope's one JSON form, ``{"agent", "kind", "channel", "actor", "role",
        "run_id"}`` (enums as their values; no channel or actor: null). Read it back with
        :func:`remem.app.envelope.envelope_from_json`."""
        return {
            "agent": self.agent,
            "kind": self.kind.value,
            "channel": self.channel,
            "actor": self.actor,
            "role": self.role.value,
            "run_id": self.run_id,
        }

    @property
    def has_personal_scope(self) -> bool:
        """Only paired humans have user notes of their own."""
        return self.role.is_human and self.actor is not None and self.kind is not RunKind.OWNER

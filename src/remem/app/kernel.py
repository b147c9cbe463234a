"""The application kernel: what every use case asks of the house, in one place.

:class:`Engine` is what one :class:`remem.Memory` shares across calls and threads: the
backend, the policy book, the clock, the role ceiling, the classifier and command
recognizer, and one :class:`~remem.app.agent_state.AgentLog` per open agent.

:class:`Kernel` is one call: built by :meth:`Engine.kernel` from the trusted
:class:`~remem.context.RunContext` (checked against the role ceiling) and that agent's
log. It owns visibility (:meth:`Kernel.visible`, :meth:`Kernel.can_read`), authorization
with the state's stewards and policy (:meth:`Kernel.decide`, :meth:`Kernel.require`,
both through :func:`remem.policy.authz.decide`), scope resolution, limits and
retention (:meth:`Kernel.limits`, :meth:`Kernel.status_of`) and the envelope every
event carries (:meth:`Kernel.envelope`). Use cases take a ``Kernel`` and call only
these public methods.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from remem.app import channel_facts
from remem.app.agent_state import AgentLog
from remem.app.link_settings import LinkSettings
from remem.commands.intents import CommandRecognizer
from remem.commands.recognize import RuleRecognizer
from remem.context import Role, RunContext
from remem.core.events import Event, Reinforced
from remem.core.ids import is_id, new_id
from remem.core.model import Note, Scope, Source, Status, parse_ts, utcnow
from remem.core.projection import State
from remem.core.text import check_id
from remem.errors import InvalidInput, NotFound
from remem.formation.classify import Classifier, RuleClassifier
from remem.policy.authz import (
    Action,
    Decision,
    Grants,
    Target,
    above,
    check_ceiling,
    decide,
    require,
    within_ceiling,
)
from remem.policy.book import PolicyBook
from remem.policy.config import Limits
from remem.policy.kind_rules import CONVERSATION
from remem.policy.layers import Merged
from remem.providers.embed import Embedder
from remem.store.base import Backend

if TYPE_CHECKING:
    from remem.store.base import TornTail

Clock = Callable[[], datetime]

_REINFORCEABLE = frozenset({Status.ACTIVE, Status.PENDING, Status.UNVERIFIED})
#: The answer for a note that is missing or that the context may not see (the same one).
NOTE_NOT_FOUND = "no note {id} is visible here (it does not exist, or this context may not see it)"
_AGENT = Target(Scope.AGENT)


class Engine:
    """What one ``Memory`` shares: backend, policy, clock, ceiling, open agents."""

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Clock | None = None,
        max_role: Role = Role.OWNER,
        classifier: Classifier | None = None,
        recognizer: CommandRecognizer | None = None,
        embedder: Embedder | bool | None = True,
    ) -> None:
        if clock is not None and not callable(clock):
            raise InvalidInput("clock must be a function returning the current datetime")
        self.backend = backend
        self.clock: Clock = clock or utcnow
        self.max_role = check_ceiling(max_role)
        self.book = PolicyBook(backend)
        self.recognizer: CommandRecognizer = recognizer or RuleRecognizer()
        self.classifier: Classifier = classifier or RuleClassifier()
        # Not isinstance(embedder, Embedder): a runtime protocol check reads its properties,
        # and an HTTP embedder's ``dim`` asks its endpoint.
        if not (isinstance(embedder, bool) or embedder is None or hasattr(embedder, "embed")):
            raise InvalidInput("embedder must be True (the bundled model), None or an Embedder")
        #: What every agent's vector index embeds with (see Memory.__init__).
        self.embedder = embedder
        self.book.file()  # a malformed policy file is an error at open
        self._agents: dict[str, AgentLog] = {}
        self._agents_lock = threading.Lock()
        #: A principal's view (see :meth:`for_principal`): the grants every envelope given
        #: to a method must fall within, and the ceiling of learned messages' labels.
        self.principal: Grants | None = None
        self.labels: Role = self.max_role
        #: Where member links point and how long they last (``Memory.link_settings``).
        self.links = LinkSettings()

    def for_principal(self, grants: Grants, max_role: Role) -> Engine:
        """A view of this engine for one authenticated principal: it shares the backend,
        the open agents and every cache (a shallow copy: attributes are shared objects,
        emptied in place, never reassigned), and it admits only the envelopes ``grants``
        cover (``Denied`` otherwise) and message labels up to ``max_role``. A view only
        narrows: this engine's own ceiling still holds."""
        if self.principal is not None:
            raise InvalidInput(
                "this Memory is already a principal's view; call for_principal on the "
                "Memory it came from"
            )
        view = copy.copy(self)
        view.principal = grants
        view.labels = max_role if above(self.labels, max_role) else self.labels
        return view

    def kernel(self, ctx: RunContext, *, derived: bool = False) -> Kernel:
        """The kernel of one call by ``ctx`` (``InvalidInput`` for anything but a
        RunContext; ``Denied`` with rule ``role_ceiling`` above this engine's ceiling, and
        on a principal's view outside its grants unless ``derived``: an envelope a use case
        built from the call's admitted one, see :meth:`Kernel.under`). A dm or group
        envelope must match its channel's recorded kind, which the first call naming the
        channel records (:mod:`remem.app.channel_facts`; ``Denied``, rule
        ``channel_kind``)."""
        if not isinstance(ctx, RunContext):
            raise InvalidInput("the first argument must be a remem.RunContext built by the host")
        if self.max_role is not Role.OWNER:  # every method: no envelope above the ceiling
            require(within_ceiling(ctx, self.max_role))
        if self.principal is not None and not derived:
            require(decide(ctx, Action.ASSUME_ENVELOPE, _AGENT, grants=self.principal))
        k = Kernel(self, ctx, self.agent(ctx.agent))
        if ctx.kind in CONVERSATION and not derived and ctx.role is not Role.UNPAIRED:
            channel_facts.check(k)  # the channel's recorded kind, not the host's word
        return k

    def agent(self, name: str) -> AgentLog:
        """The one open log of agent ``name`` (opened on first use)."""
        agent = self._agents.get(name)
        if agent is None:
            # One AgentLog per agent: two threads opening it at once must not each build
            # their own (they would share the log's file handle without sharing a lock).
            with self._agents_lock:
                agent = self._agents.get(name)
                if agent is None:
                    agent = self._agents[name] = AgentLog(
                        self.backend, name, embedder=self.embedder
                    )
        return agent

    def drop_agent(self, name: str) -> None:
        """Close and forget agent ``name``'s open log (before it is trashed)."""
        gone = self._agents.pop(name, None)
        if gone is not None:
            gone.close()

    def repairs(self) -> list[TornTail]:
        """The torn tails cut from the logs this engine opened (after a crash)."""
        return [tail for agent in list(self._agents.values()) for tail in agent.log.repairs]

    def close(self) -> None:
        if self.principal is not None:  # a view: the engine it came from owns the store
            return
        for agent in self._agents.values():
            agent.close()
        self.backend.close()
        self._agents.clear()


class Kernel:
    """One call by one envelope: its agent's state, visibility, limits and envelope."""

    __slots__ = ("agent", "ctx", "engine")

    def __init__(self, engine: Engine, ctx: RunContext, agent: AgentLog) -> None:
        self.engine = engine
        self.ctx = ctx
        self.agent = agent

    def under(self, ctx: RunContext) -> Kernel:
        """The kernel of a call by another envelope on the same engine, derived by a use
        case from this call's (admitted) envelope, such as a learned message's speaker."""
        return self.engine.kernel(ctx, derived=True)

    @property
    def backend(self) -> Backend:
        return self.engine.backend

    def now(self) -> datetime:
        return self.engine.clock()

    def state(self) -> State:
        """The agent's state, caught up with the log."""
        return self.agent.sync()

    # -- authorization and visibility ------------------------------------------------

    def decide(self, state: State, action: Action, target: Target) -> Decision:
        """:func:`remem.policy.authz.decide` for this envelope, with the stewardship and
        ``agent_write_access`` that ``state`` and policy grant."""
        ctx = self.ctx
        steward = False
        if target.scope is Scope.CHANNEL and target.scope_id and ctx.actor:
            stewards = state.channel_policies.get(target.scope_id, {}).get("stewards", ())
            steward = ctx.actor in stewards
        writer = False
        if target.scope is Scope.AGENT and action is not Action.READ and not ctx.role.is_admin:
            writer = self._agent_writer(state)
        engine = self.engine
        return decide(
            ctx,
            action,
            target,
            steward=steward,
            agent_writer=writer,
            ceiling=engine.max_role,
            labels=engine.labels,
            grants=engine.principal,
        )

    def _agent_writer(self, state: State) -> bool:
        """Whether policy's ``agent_write_access`` names this actor, its role, or (with
        ``role:steward``) a steward of any channel."""
        ctx = self.ctx
        access = self.limits().agent_write_access
        if not access:
            return False
        if ctx.actor in access or f"role:{ctx.role.value}" in access:
            return True
        return "role:steward" in access and any(
            ctx.actor in policy.get("stewards", ()) for policy in state.channel_policies.values()
        )

    def require(self, state: State, action: Action, target: Target) -> None:
        """``Denied`` (with the rule) unless :meth:`decide` allows it."""
        require(self.decide(state, action, target))

    def require_envelope(self, action: Action, target: Target = _AGENT) -> None:
        """``Denied`` unless the envelope alone allows ``action`` (the rules that need no
        state: access, personal scope, procedures, trashing an agent)."""
        engine = self.engine
        require(decide(self.ctx, action, target, ceiling=engine.max_role, labels=engine.labels))

    def require_e2ee_rule(self, action: Action, consequence: str = "") -> None:
        """``Denied`` unless the rule of encrypted DM memory for ``action`` (``DM_SLOT``,
        ``PLAINTEXT``; see :mod:`remem.policy.e2ee_rules`) allows this run, judged with
        whether its channel's policy marks it ``e2ee`` (see :meth:`channel_e2ee`)."""
        channel = self.ctx.channel
        e2ee = self.channel_e2ee()
        engine = self.engine
        decision = decide(
            self.ctx,
            action,
            Target(Scope.CHANNEL, channel),
            ceiling=engine.max_role,
            labels=engine.labels,
            e2ee=e2ee,
        )
        require(decision, consequence)

    def channel_e2ee(self) -> bool:
        """Whether this run's channel policy marks it end-to-end encrypted, in the state
        as last read (the use cases check it after their read or under the writer lock;
        reading here would index new notes before a batch of writes is done)."""
        channel = self.ctx.channel
        return channel is not None and self.limits(channel).e2ee

    def require_plaintext(self) -> None:
        """``Denied`` (rule ``e2ee_plaintext``) when this run's channel is marked ``e2ee``:
        its message text may not enter memory in the clear. (Elsewhere the other rules
        decide, in their order: an unpaired run's note stays invisible, not refused.)"""
        if self.channel_e2ee():
            self.require_e2ee_rule(Action.PLAINTEXT, "; nothing was stored")

    def require_plaintext_into(self, scope: Scope, scope_id: str | None) -> None:
        """``Denied`` (rule ``e2ee_plaintext``) when a note's text would be written in the
        clear into the channel scope of an encrypted DM (a channel marked ``e2ee``) from
        another run, an owner's or admin's included; the run's own channel is
        :meth:`require_plaintext`'s."""
        if scope is not Scope.CHANNEL or scope_id is None or scope_id == self.ctx.channel:
            return
        if self.limits(scope_id).e2ee:
            engine = self.engine
            decision = decide(
                self.ctx,
                Action.PLAINTEXT,
                Target(Scope.CHANNEL, scope_id),
                ceiling=engine.max_role,
                labels=engine.labels,
                e2ee=True,
            )
            require(decision, "; nothing was stored")

    @staticmethod
    def target(note: Note) -> Target:
        return Target(note.scope, note.scope_id, note.created_by)

    def can_read(self, state: State, note: Note) -> bool:
        return self.decide(state, Action.READ, self.target(note)).allowed

    def visible(self, state: State, note_id: str) -> Note:
        """The note ``note_id`` if this envelope may see it; ``NotFound`` otherwise (the
        same answer as for a missing id)."""
        if not isinstance(note_id, str) or not is_id(note_id, "note"):
            raise InvalidInput(
                f"{str(note_id)[:60]!r} is not a note id (note ids look like note_01J…)"
            )
        note = state.notes.get(note_id)
        if note is None or not self.can_read(state, note):
            raise NotFound(NOTE_NOT_FOUND.format(id=note_id))
        return note

    def given(self, note_id: str) -> Note:
        """The note a write answers with, if this envelope may see it now: the check of a
        read (:meth:`visible`), so a result given again (a retried request, a note
        reinforced, a change applied already) is ``NotFound`` exactly where a read of it
        would be."""
        return self.visible(self.agent.state, note_id)

    # -- the event envelope, scopes, limits ------------------------------------------

    def envelope(self) -> dict[str, Any]:
        """The fields every event written by this call carries."""
        ctx = self.ctx
        return {
            "eid": new_id("ev"),
            "ts": self.engine.clock(),
            "actor": ctx.actor,
            "role": ctx.role.value,
            "run_id": ctx.run_id,
            "channel": ctx.channel,
        }

    def resolve_scope_id(self, scope: Scope, scope_id: str | None) -> str | None:
        """The scope id a note of this envelope in ``scope`` goes to: the one given, else
        the speaker (user scope) or the channel (channel scope); agent scope has none."""
        ctx = self.ctx
        if scope is Scope.AGENT:
            if scope_id is not None:
                raise InvalidInput("agent scope has no scope_id")
            return None
        if scope_id is not None:
            return check_id(scope_id, "scope_id")
        if scope is Scope.USER:
            self.require_envelope(Action.PERSONAL_SCOPE, Target(Scope.USER, ctx.actor))
            return ctx.actor
        if ctx.channel is None:
            raise InvalidInput("this run has no channel; pass scope_id='<channel id>'")
        return ctx.channel

    def merged(self, channel: str | None) -> Merged:
        """The policy layers merged for this agent (and ``channel``, with its stored
        settings)."""
        state = self.agent.state
        channel_policy = state.channel_policies.get(channel) if channel else None
        return self.engine.book.merged(self.ctx.agent, channel, channel_policy)

    def limits(self, channel: str | None = None) -> Limits:
        """The merged admin → agent (→ channel) limits for this agent."""
        return self.merged(channel).limits

    def policy_version(self) -> Any:
        """The policy file's version (a grant kept under one is void under another)."""
        return self.engine.book.file().version

    def policy_warning(self) -> str | None:
        return self.engine.book.warning

    def status_of(self, note: Note, now: datetime | None = None) -> Status:
        """A note's status as of ``now``, counting ``expires_at`` and retention policy."""
        now = now or self.engine.clock()
        if note.status is not Status.ACTIVE:
            return note.status  # retention only ends active notes: no limits to read
        channel = note.scope_id if note.scope is Scope.CHANNEL else None
        return note.effective_status(now, self.limits(channel).retention_days)

    def same(self, state: State, scope: Scope, scope_id: str | None, text: str) -> Note | None:
        """The live note of that scope saying ``text``, which a write reinforces."""
        return state.find_same(scope, scope_id, text, _REINFORCEABLE)

    def reinforce(
        self, note: Note, source: Source, envelope: dict[str, Any] | None = None
    ) -> list[Event]:
        """The event of one more piece of evidence for ``note`` (in ``envelope``: a keyed
        request's, see :mod:`remem.app.idempotency`; a fresh one by default)."""
        return [Reinforced(note_id=note.id, source=source, **(envelope or self.envelope()))]

    @staticmethod
    def parse_time(value: datetime | str | None, what: str) -> datetime | None:
        return parse_ts(value, what)

    def rules_text(self) -> str:
        """The agent's rules, joined in name order, for a recall's prompt."""
        rules = self.engine.backend.read_rules(self.ctx.agent)
        return "\n\n".join(
            content.strip() for _, content in sorted(rules.items()) if content.strip()
        )

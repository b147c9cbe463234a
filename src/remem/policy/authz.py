"""Host-side authorization: who may do what to which scope, decided from the envelope only.

:func:`decide` is a pure function of the run envelope, the action and the
target (plus the channel stewardship the admin granted). Tool or API arguments
never grant anything: a member naming another user's id reaches nothing.

The rules, in order:

===========================  =====================================================
principal                    may
===========================  =====================================================
unpaired                     nothing
owner, admin                 everything in their agent (compaction and trashing
                             an agent: owner only)
channel steward              read, write and change every note of that channel;
                             set that channel's policy (not its stewards)
member                       read/change own user notes; read the current
                             channel and agent-wide notes; create notes in the
                             current channel; change channel notes they authored,
                             and in their own DM every note of that DM channel;
                             never agent scope (``Denied`` points to personal scope)
                             erase (physically remove) what they forgot, of the
                             notes they may change: rule ``member_erasure``
cron / sop / webhook / task  read agent (+ own channel); write agent scope and own
                             channel; change what they wrote; no user scope
===========================  =====================================================

The encrypted DM slot (``DM_SLOT``) and plaintext in an ``e2ee`` channel
(``PLAINTEXT``) have their own rules, for every role: :mod:`remem.policy.e2ee_rules`;
so do channel kinds (``CHANNEL_KIND``, ``SET_CHANNEL_KIND``, a token's run kinds):
:mod:`remem.policy.kind_rules`.

Before any of these, two rules hold for every principal: an unpaired envelope
may do nothing, and no envelope may carry a role above the **role ceiling**,
the highest role the caller that built it may assert for anyone
(``Memory(max_role=...)``; in-process the host's own, over HTTP a token's).

What a run may learn (:func:`decide` with the ``ASSERT_ROLE``,
``ASSERT_ARCHIVED_ROLE`` and ``LEARN_FROM`` actions) is decided here as well:

====================  ===========================================================
assert_role           the role label on a message of a live slice (``target.role``
                      for the author ``target.created_by``; None: labelled as the
                      agent's reply): never above the ceiling; a message by the
                      run's own actor carries exactly the envelope's role
assert_archived_role  the same for an archive (historical roles): the ceiling only
learn_from            whose lines a run may learn from, into which scope: a DM run
                      learns only from its own speaker (and reads the agent's
                      replies for context); runs without a person (cron, sop,
                      webhook, task, agent-only, knowledge) write no one's
                      personal memory
====================  ===========================================================

On a principal's view (``Memory.for_principal``) the label ceiling is the principal's
``max_role`` (``labels``), and a labelled message's author other than the run's own
speaker is an actor it asserts: it must match an actor pattern (``actor_not_granted``).

Which envelopes an authenticated principal may assume (:func:`decide` with
``ASSUME_ENVELOPE`` and the principal's :class:`Grants` as data; decided before
every other rule, since an unpaired envelope is one a host may assume: it grants
nothing). The agent must match an agent pattern in every case; then, by run kind:

=============================  ==================================================
run kind                       the principal must hold
=============================  ==================================================
dm, group                      a channel pattern and an actor pattern matching the
                               envelope's, and its role at most ``max_role``
                               (rules ``channel_not_granted``,
                               ``actor_not_granted``, ``role_above_grant``)
task, agent_only, knowledge    the ``sop`` system grant: these runs carry role
                               ``sop`` and write agent scope like a system run
                               (``system_not_granted``); a task's channel must
                               match a channel pattern
system                         that system principal (cron, sop, webhook) in
                               ``system``; its channel, if any, must match
owner                          the owner grant (``owner_not_granted``)
=============================  ==================================================

Actor patterns name people: runs without a person (task, system, owner) carry the
actor their constructor sets, and their grant is the system or owner grant. A
member session (``Grants.session``) assumes only its own DM with role ``member``
(rules ``member_session``, ``member_session_role``), and mints no member link
(``member_link_from_session``); a member link is minted in DM runs only
(``member_link_dm_only``). In a pattern ``*`` matches any
run of characters and is the only wildcard; ``*`` alone matches everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from remem.context import Role, RunContext, RunKind
from remem.core.model import Scope
from remem.errors import Denied, InvalidInput
from remem.policy.e2ee_rules import dm_slot_rule, plaintext_rule
from remem.policy.kind_rules import CONVERSATION, channel_kind_rule, kind_grant_rule
from remem.policy.patterns import pattern_matches as pattern_matches


class Action(StrEnum):
    READ = "read"
    CREATE = "create"
    CHANGE = "change"
    CHANNEL_POLICY = "channel_policy"
    APPOINT_STEWARDS = "appoint_stewards"
    RULES = "rules"
    COMPACT = "compact"
    #: Physically remove the content of forgotten notes one may change (a member's
    #: erase-all is completed under the rule ``member_erasure``).
    ERASE = "erase"
    ADMINISTER = "administer"
    ASSERT_ROLE = "assert_role"
    ASSERT_ARCHIVED_ROLE = "assert_archived_role"
    LEARN_FROM = "learn_from"
    #: Use memory at all (recall, rules, effective policy): every paired envelope.
    ACCESS = "access"
    #: Have a personal scope of one's own (user notes, participant choices).
    PERSONAL_SCOPE = "personal_scope"
    #: Author a ``procedure`` note (human admins only).
    WRITE_PROCEDURE = "write_procedure"
    #: Approve or reject a pending note (``REVIEW_UNVERIFIED``: an unverified one).
    REVIEW = "review"
    REVIEW_UNVERIFIED = "review_unverified"
    #: Read a run's stored trace (``target``: the trace's channel and actor).
    READ_TRACE = "read_trace"
    #: Move an agent's data to the trash (``target.agent``: which agent).
    TRASH_AGENT = "trash_agent"
    #: Act in this run envelope, by an authenticated principal's ``grants``.
    ASSUME_ENVELOPE = "assume_envelope"
    #: Mint a member link (a bearer credential for the speaker's own scratchpad): DM
    #: runs of a paired person only (rule ``member_link_dm_only``).
    MEMBER_LINK = "member_link"
    #: Read or write a DM's encrypted memory slot (``target.scope_id``: the thread).
    DM_SLOT = "dm_slot"
    #: Put the run's message text into memory in the clear (see ``e2ee=``).
    PLAINTEXT = "plaintext"
    #: Act in a channel with a dm or group envelope (``target.kind``: the recorded kind,
    #: ``target.created_by``: a DM's recorded member); set it: owners and admins.
    CHANNEL_KIND = "channel_kind"
    SET_CHANNEL_KIND = "set_channel_kind"


@dataclass(frozen=True, slots=True)
class Target:
    """What an action touches: a scope, and for existing notes who created them.

    For the learning actions: ``created_by`` is a message's author, ``role`` the role
    its label asserts for that author. For ``CHANNEL_KIND``: ``kind`` is the channel's
    recorded kind (None: none yet), ``created_by`` a DM's recorded member."""

    scope: Scope
    scope_id: str | None = None
    created_by: str | None = None
    role: Role | None = None
    agent: str | None = None
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Grants:
    """What an authenticated principal may assert in a run envelope: the data
    :func:`decide` judges ``ASSUME_ENVELOPE`` by (see the module docstring).

    ``agents``, ``channels``, ``actors``: patterns (``*`` the only wildcard);
    ``max_role``: the highest human role it may assert; ``system``: the system
    principals it may run as; ``owner``: it may run owner runs. ``session``: a member
    session, whose three patterns are its one agent, DM channel and member (exact).
    ``kinds``: the run kinds it may assume (``None``: every kind)."""

    agents: tuple[str, ...]
    channels: tuple[str, ...]
    actors: tuple[str, ...]
    max_role: Role
    system: frozenset[Role] = frozenset()
    owner: bool = False
    session: bool = False
    kinds: frozenset[RunKind] | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    rule: str
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def _allow(rule: str) -> Decision:
    return Decision(True, rule, "")


def _deny(rule: str, reason: str) -> Decision:
    return Decision(False, rule, reason)


OWNER_ONLY = frozenset({Action.COMPACT})
REVIEWING = frozenset({Action.REVIEW, Action.REVIEW_UNVERIFIED})
ADMIN_ONLY = frozenset(
    {Action.APPOINT_STEWARDS, Action.RULES, Action.ADMINISTER, Action.SET_CHANNEL_KIND}
)
LEARNING = frozenset({Action.ASSERT_ROLE, Action.ASSERT_ARCHIVED_ROLE, Action.LEARN_FROM})

#: Roles by how much they may do, for the role ceiling. System principals write agent-wide
#: notes, which members may not: a caller limited to members asserts none of them.
_RANK = {
    Role.UNPAIRED: 0,
    Role.MEMBER: 1,
    Role.CRON: 2,
    Role.SOP: 2,
    Role.WEBHOOK: 2,
    Role.ADMIN: 3,
    Role.OWNER: 4,
}
#: Roles a ceiling may name.
CEILINGS = (Role.OWNER, Role.ADMIN, Role.MEMBER)


def check_ceiling(ceiling: object) -> Role:
    """``ceiling`` if it is a role a ceiling may name, else ``InvalidInput``."""
    if not isinstance(ceiling, Role) or ceiling not in CEILINGS:
        raise InvalidInput(
            f"max_role must be Role.OWNER, Role.ADMIN or Role.MEMBER, not {ceiling!r}"
        )
    return ceiling


def within_ceiling(ctx: RunContext, ceiling: Role) -> Decision:
    """Whether the envelope's role is one a caller limited to ``ceiling`` may assert
    (checked by every ``Memory`` method, and first by :func:`decide`)."""
    if above(ctx.role, ceiling):
        return _deny(
            "role_ceiling",
            f"this host may assert roles up to {ceiling.value}; the run's role "
            f"{ctx.role.value} is above that",
        )
    return _allow("within_ceiling")


def above(role: Role, ceiling: Role) -> bool:
    """Whether ``role`` is more than a caller limited to ``ceiling`` may assert."""
    return _RANK[role] > _RANK[ceiling]


def decide(
    ctx: RunContext,
    action: Action,
    target: Target,
    *,
    steward: bool = False,
    agent_writer: bool = False,
    ceiling: Role = Role.OWNER,
    labels: Role | None = None,
    grants: Grants | None = None,
    e2ee: bool = False,
) -> Decision:
    """Whether ``ctx`` may perform ``action`` on ``target``, with the rule that decided.

    ``steward``: the actor is a steward of the target channel. ``agent_writer``:
    policy's ``agent_write_access`` lists this actor or one of its roles.
    ``ceiling``: the highest role the caller that built ``ctx`` may assert.
    ``labels``: the highest role a learned message's label may assert (default
    ``ceiling``; a principal's ``max_role`` where its grants admitted the envelope).
    ``grants``: the principal's, for ``ASSUME_ENVELOPE`` (``target`` is unused there).
    ``e2ee``: the run's channel is marked end-to-end encrypted (for ``PLAINTEXT`` and
    ``DM_SLOT``; the
    rules of encrypted DM memory are in :mod:`remem.policy.e2ee_rules`).
    """
    if action is Action.ASSUME_ENVELOPE:
        return _assume_envelope(ctx, grants)
    role = ctx.role
    if role is Role.UNPAIRED:
        return _deny("unpaired", "unpaired senders have no access to memory; pair first")
    if above(role, ceiling):
        return within_ceiling(ctx, ceiling)
    if action is Action.MEMBER_LINK:
        return _member_link(ctx, grants)
    if action is Action.DM_SLOT:
        return Decision(*dm_slot_rule(ctx, target.scope_id, e2ee))
    if action is Action.PLAINTEXT:
        return Decision(*plaintext_rule(e2ee, target.scope_id or ctx.channel))
    if action is Action.CHANNEL_KIND:
        return Decision(*channel_kind_rule(ctx, target.kind, target.created_by))
    if action in _ENVELOPE_ONLY:
        return _envelope_rule(ctx, action, target)
    if action in LEARNING:
        return _learning(ctx, action, target, ceiling if labels is None else labels, grants)
    if action in OWNER_ONLY:
        if role is Role.OWNER:
            return _allow("owner")
        return _deny("owner_only", f"only the owner may {action.value}")
    if role.is_admin or ctx.kind is RunKind.OWNER:
        return _allow("admin")
    if action in ADMIN_ONLY:
        return _deny("admin_only", f"only owners and admins may {action.value.replace('_', ' ')}")
    if action in REVIEWING:
        return _reviewer(ctx, action, target, steward)
    if action is Action.READ_TRACE:
        return _trace_reader(ctx, target, steward)
    if role.is_system:
        return _system(ctx, action, target, agent_writer)
    if action is Action.ERASE:
        return _member_erasure(ctx, target, steward, agent_writer)
    return _member(ctx, action, target, steward, agent_writer)


def require(decision: Decision, consequence: str = "") -> None:
    """Raise ``Denied`` (carrying the decision's rule) unless ``decision`` allows;
    ``consequence`` is added to the message (e.g. ``"; nothing was learned"``). The one
    place remem raises ``Denied``."""
    if not decision.allowed:
        raise Denied(
            f"denied ({decision.rule}): {decision.reason}{consequence}", rule=decision.rule
        )


_ENVELOPE_ONLY = frozenset(
    {Action.ACCESS, Action.PERSONAL_SCOPE, Action.WRITE_PROCEDURE, Action.TRASH_AGENT}
)


def _envelope_rule(ctx: RunContext, action: Action, target: Target) -> Decision:
    """The rules decided by the envelope alone (after the unpaired rule and the ceiling)."""
    if action is Action.ACCESS:
        return _allow("paired")
    if action is Action.PERSONAL_SCOPE:
        if ctx.has_personal_scope:
            return _allow("personal_scope")
        return _deny("no_personal_scope", f"{ctx.role.value} runs have no personal scope")
    if action is Action.WRITE_PROCEDURE:
        if ctx.role.is_admin:
            return _allow("admin")
        return _deny(
            "procedure_admin_only",
            "procedures are operational knowledge that only human admins author",
        )
    if target.agent is not None and target.agent != ctx.agent:  # TRASH_AGENT
        return _deny(
            "other_agent",
            f"a run of agent {ctx.agent!r} cannot trash agent {target.agent!r}; "
            f"use RunContext.owner({target.agent!r})",
        )
    if ctx.role is Role.OWNER:
        return _allow("owner")
    return _deny("owner_only", f"only the owner may {action.value.replace('_', ' ')}")


def _member_link(ctx: RunContext, grants: Grants | None) -> Decision:
    """A member link (a bearer credential) is minted in the member's own DM only, and
    never by a member session (else a session could renew itself for ever)."""
    if grants is not None and grants.session:
        return _deny(
            "member_link_from_session",
            "a member session cannot mint member links: ask the bot for one in your DM",
        )
    if ctx.kind is RunKind.DM and ctx.has_personal_scope:
        return _allow("member_link_dm")
    return _deny(
        "member_link_dm_only",
        "a member link is a bearer credential: it is minted only in the member's own DM "
        "(ask me in a DM)",
    )


def _reviewer(ctx: RunContext, action: Action, target: Target, steward: bool) -> Decision:
    """Who besides owners and admins may approve or reject a note awaiting review: the
    person a pending user note is about, and a pending channel note's stewards."""
    if action is Action.REVIEW:
        if target.scope is Scope.USER and target.scope_id == ctx.actor and ctx.has_personal_scope:
            return _allow("reviewer_subject")
        if target.scope is Scope.CHANNEL and steward:
            return _allow("reviewer_steward")
    return _deny(
        "reviewer",
        "only the person it is about, the channel's stewards or an admin may review this note",
    )


def _trace_reader(ctx: RunContext, target: Target, steward: bool) -> Decision:
    """Whose runs' traces a non-admin may read: a person their own runs; a channel's
    steward the runs in that channel (``target``: the trace's channel and actor)."""
    if ctx.actor is not None and ctx.role.is_human:
        if target.created_by == ctx.actor:
            return _allow("own_trace")
        if target.scope_id and steward:
            return _allow("steward_trace")
    return _deny(
        "trace_reader", "a person reads only their own runs' traces (a steward: the channel's)"
    )


def _member_erasure(ctx: RunContext, target: Target, steward: bool, agent_writer: bool) -> Decision:
    """A member may erase what they forgot where they may change notes at all."""
    change = _member(ctx, Action.CHANGE, target, steward, agent_writer)
    if not change:
        return change
    return _allow("member_erasure")


def _member(
    ctx: RunContext, action: Action, target: Target, steward: bool, agent_writer: bool
) -> Decision:
    scope, sid = target.scope, target.scope_id
    if scope is Scope.CHANNEL and steward:
        return _allow("steward")
    if action is Action.CHANNEL_POLICY:
        return _deny("steward_only", "only admins and that channel's stewards may set its policy")
    if scope is Scope.USER:
        if sid == ctx.actor:
            return _allow("own_user_notes")
        return _deny("other_user", "members reach only their own user notes")
    if scope is Scope.AGENT:
        if action is Action.READ:
            return _allow("agent_read")
        if action is Action.CREATE and agent_writer:
            return _allow("agent_write_access")
        if action is Action.CHANGE and agent_writer and target.created_by == ctx.actor:
            return _allow("agent_write_access")
        return _deny(
            "member_agent_scope",
            "members cannot write agent-wide memory; save it to your personal scope "
            "instead (scope='user')",
        )
    if sid != ctx.channel:
        return _deny("other_channel", "members reach only the current channel's notes")
    if action in (Action.READ, Action.CREATE):
        return _allow("current_channel")
    if target.created_by == ctx.actor:
        return _allow("own_channel_note")
    if ctx.kind is RunKind.DM:
        # A DM channel is the member's conversation: everything its recall shows them
        # is theirs to correct or erase, like their user notes.
        return _allow("own_dm_channel")
    return _deny("not_author", "members may change only channel notes they wrote")


def _system(ctx: RunContext, action: Action, target: Target, agent_writer: bool) -> Decision:
    scope, sid = target.scope, target.scope_id
    if scope is Scope.USER:
        return _deny("system_no_user_scope", f"{ctx.role.value} runs have no personal scope")
    if action is Action.CHANNEL_POLICY:
        return _deny("steward_only", "only admins and that channel's stewards may set its policy")
    if scope is Scope.CHANNEL and sid != ctx.channel:
        return _deny("other_channel", f"{ctx.role.value} runs reach only their own channel")
    if action in (Action.READ, Action.CREATE):
        return _allow(f"system_{scope.value}")
    if target.created_by == ctx.actor:
        return _allow("system_own_note")
    return _deny("not_author", f"{ctx.role.value} runs may change only notes they wrote")


def _learning(
    ctx: RunContext, action: Action, target: Target, ceiling: Role, grants: Grants | None
) -> Decision:
    """The learning actions (see the module docstring); the envelope passed the ceiling.
    With a principal's ``grants``, a labelled message's author is an actor it asserts."""
    author = target.created_by
    if action is Action.LEARN_FROM:
        if ctx.kind is RunKind.DM and author != ctx.actor:
            return _deny("dm_other_party", "a DM run learns only from its own speaker")
        if target.scope is Scope.USER and ctx.role.is_system:
            return _deny(
                "system_no_user_scope",
                f"{ctx.role.value} runs write no one's personal memory",
            )
        return _allow("learn_from")
    label = target.role
    own = author is not None and author == ctx.actor
    if label is None:  # labelled as the agent's own reply: context, never learned from
        if own and action is Action.ASSERT_ROLE:
            return _deny(
                "envelope_role",
                f"a message by the run's own speaker carries the run's role "
                f"({ctx.role.value}), not the agent's",
            )
        return _allow("agent_reply")
    if own and label is ctx.role:  # the envelope's own role, admitted before any label
        return _allow("message_role")
    if grants is not None and author is not None and not own and not _author(grants, author):
        return _deny(
            "actor_not_granted",
            f"this principal holds no grant for actor {author!r}, the author of a message "
            "given to learn; grant an actor pattern that covers it",
        )
    if above(label, ceiling):
        return _deny(
            "role_ceiling",
            f"this host may assert roles up to {ceiling.value}; a message of "
            f"{author or 'an unpaired sender'} is labelled {label.value}",
        )
    if action is Action.ASSERT_ROLE and own and label is not ctx.role:
        return _deny(
            "envelope_role",
            f"a message by the run's own speaker carries the run's role "
            f"({ctx.role.value}), not {label.value}: the envelope is the authority",
        )
    return _allow("message_role")


# -- which envelopes a principal may assume --------------------------------------------

#: What each run kind asks of a principal's grants (see the module docstring).
_AGENT_WRITERS = frozenset({RunKind.TASK, RunKind.AGENT_ONLY, RunKind.KNOWLEDGE, RunKind.SYSTEM})


def _granted(patterns: tuple[str, ...], value: str) -> bool:
    return any(pattern_matches(p, value) for p in patterns)


def _author(grants: Grants, author: str) -> bool:
    """Whether ``grants`` cover ``author`` as an actor (a member session: only itself)."""
    if grants.session:
        return author in grants.actors
    return _granted(grants.actors, author)


def _assume_envelope(ctx: RunContext, grants: Grants | None) -> Decision:
    """Whether a principal holding ``grants`` may act in ``ctx`` (the kind table above)."""
    if grants is None:
        return _deny("no_grants", "no principal's grants were given; authenticate first")
    if grants.session:
        return _member_session(ctx, grants)
    allowed, rule, reason = kind_grant_rule(ctx, grants.kinds)
    if not allowed:
        return _deny(rule, reason)
    if not _granted(grants.agents, ctx.agent):
        return _deny(
            "agent_not_granted",
            f"this principal holds no grant for agent {ctx.agent!r}; "
            "grant an agent pattern that covers it",
        )
    if ctx.channel is not None and not _granted(grants.channels, ctx.channel):
        return _deny(
            "channel_not_granted",
            f"this principal holds no grant for channel {ctx.channel!r}; "
            "grant a channel pattern that covers it",
        )
    if ctx.kind in CONVERSATION:
        return _conversation_grant(ctx, grants)
    if ctx.kind in _AGENT_WRITERS:
        if ctx.role in grants.system:
            return _allow("granted_system")
        return _deny(
            "system_not_granted",
            f"a {ctx.kind.value} run runs as {ctx.role.value} and writes agent-wide memory; "
            f"it needs the {ctx.role.value} system grant",
        )
    if grants.owner:  # RunKind.OWNER
        return _allow("granted_owner")
    return _deny("owner_not_granted", "owner runs need the owner grant")


def _conversation_grant(ctx: RunContext, grants: Grants) -> Decision:
    """A dm or group turn: the speaker by an actor pattern, the role by ``max_role``."""
    if ctx.actor is None or not _granted(grants.actors, ctx.actor):
        return _deny(
            "actor_not_granted",
            f"this principal holds no grant for actor {ctx.actor!r}; "
            "grant an actor pattern that covers it",
        )
    if not ctx.role.is_human and ctx.role is not Role.UNPAIRED:
        return _deny(
            "role_above_grant",
            f"a {ctx.kind.value} turn is spoken by a person (owner, admin, member or "
            f"unpaired), not {ctx.role.value}; use a system run",
        )
    if above(ctx.role, grants.max_role):
        return _deny(
            "role_above_grant",
            f"this principal may assert roles up to {grants.max_role.value}; the run's "
            f"role {ctx.role.value} needs a grant of max_role {ctx.role.value}",
        )
    return _allow("granted_conversation")


def _member_session(ctx: RunContext, grants: Grants) -> Decision:
    """A member session acts only in its own DM, as a member."""
    (agent,), (channel,), (member,) = grants.agents, grants.channels, grants.actors
    own = (ctx.kind, ctx.agent, ctx.channel, ctx.actor) == (RunKind.DM, agent, channel, member)
    if not own:
        return _deny(
            "member_session",
            f"this member session acts only in its own DM (agent {agent!r}, channel "
            f"{channel!r}, member {member!r})",
        )
    if ctx.role is not Role.MEMBER:
        return _deny(
            "member_session_role",
            f"a member session runs with role member, not {ctx.role.value}, whatever the "
            "member's role elsewhere",
        )
    return _allow("member_session")

"""Learning from a conversation slice under role-based authority (DESIGN §7).

Classification (what is this?) is best-effort and may come from an LLM;
authorization (who may write it?) is code, on the role stored with each
message, never on anything the text claims:

====================================  ====================  =========================
item                                  admin speaker         member speaker
====================================  ====================  =========================
identity / relationship claim         personal note         personal note (a claim)
personal preference or fact           own user scope        own user scope
new operational procedure             agent scope; later    dropped
                                      value on the subject  (operational_from_non_admin)
                                      supersedes
standing style rule                   proposed learned      own preference
                                      rule (policy)
channel decision                      channel (review)      channel (review)
one-off task                          not stored            not stored
====================================  ====================  =========================

The run envelope is the authority; a message's role label is an assertion of
the host, checked in :func:`remem.policy.authz.decide` before anything is
learned (a refusal raises ``Denied`` and nothing of the slice is learned): an
unpaired run learns nothing; no label is above the host's role ceiling
(``Memory(max_role=...)``); a message by the run's own speaker carries the
envelope's role. Then each person is read on their own lines (by the stored
author id); an admin's operational items count only when every message of
theirs in the slice carries a human admin role. Unpaired senders' lines are
nobody's. A DM run reads only its two parties (its speaker, and the agent's
replies for context). Webhook runs are not extracted from; runs without a person
(cron, sop, task, agent-only, knowledge) write no one's personal memory and
never learn operational knowledge (standing rules included). A statement an
undo vetoed against a live note is not taught again (``vetoed``).

A relearn of an archive (:func:`remem.formation.actions.relearn`) dates what it
learns when it was said; of what non-admins said, personal lines are not learned
(``archive_personal``) and everything else is quarantined as ``unverified``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from remem.context import Role, RunContext, RunKind
from remem.core.model import Basis, Kind, Note, Scope, Status, parse_ts
from remem.core.veto import Said, Vetoes
from remem.errors import Denied, InvalidInput, Rejected
from remem.formation import learned_rules
from remem.formation.classify import Category, Classification, Classifier, Item
from remem.formation.revise import same_subject
from remem.formation.rules import is_operational_content
from remem.policy.authz import Action, Decision, Target
from remem.writes import remember_as

if TYPE_CHECKING:
    from remem.service import Memory

AGENT_ROLES = frozenset({"agent", "assistant", "bot"})
LEARNED_RULE_TAG = learned_rules.LEARNED_RULE_TAG
_REASONS = {"secret": "secret", "sensitive": "sensitive"}


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a slice. ``author`` is the stored user id (None: unpaired sender);
    ``role`` the role stored with it (a :class:`Role`, or ``"agent"`` for the agent's own)."""

    author: str | None
    role: Role | str
    text: str
    message_id: str | None = None
    ts: datetime | str | None = None


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item that was not stored (see :attr:`LearnReport.dropped`)."""

    text: str
    author: str | None
    category: str
    message_id: str | None = None


@dataclass(slots=True)
class LearnReport:
    """What a learning pass did: every item is learned, pending, reinforced or dropped."""

    run_id: str
    learned: list[Note] = field(default_factory=list)
    pending: list[Note] = field(default_factory=list)
    reinforced: list[Note] = field(default_factory=list)
    dropped: list[tuple[Dropped, str]] = field(default_factory=list)
    classifier: str = "rules"
    degraded: list[str] = field(default_factory=list)

    def add(self, note: Note) -> None:
        if note.evidence > 1:  # seen before (pending or not): one more piece of evidence
            self.reinforced.append(note)
        elif note.status in (Status.PENDING, Status.UNVERIFIED):
            self.pending.append(note)
        else:
            self.learned.append(note)

    def drop(self, item: Item | Message, author: str | None, reason: str, mid: str | None) -> None:
        if isinstance(item, Message):
            entry = Dropped(item.text, author, "message", mid)
        else:
            entry = Dropped(item.statement, author, item.category.value, mid)
        self.dropped.append((entry, reason))


def operational_from_non_admin(item: Item) -> bool:
    """Whether ``item``, said by a non-admin, is operational knowledge they may not teach
    (DESIGN §7): labelled operational, or operational-looking content in anything but a
    one-off task or a standing style rule. ``learn`` never stores such an item."""
    category = item.category
    if category is Category.OPERATIONAL:
        return True
    if category in (Category.ONE_OFF, Category.STYLE_RULE):
        return False
    return is_operational_content(item.statement.lower())


def _role(value: Role | str) -> Role | str:
    if isinstance(value, Role):
        return value
    text = str(value).lower()
    if text in AGENT_ROLES:
        return "agent"
    try:
        return Role(text)
    except ValueError:
        raise InvalidInput(
            f"message role {value!r} is not a role: use owner, admin, member, unpaired, cron, "
            "sop, webhook or agent"
        ) from None


def _from_dict(raw: dict[Any, Any], number: int) -> Message:
    """A message given as a dict: its keys must be Message's fields, author, role and text
    given (a missing or unknown key is the caller's mistake, not a TypeError)."""
    fields = ("author", "role", "text", "message_id", "ts")
    keys = set(raw)
    if not keys <= set(fields) or not {"author", "role", "text"} <= keys:
        shown = sorted(str(k)[:40] for k in keys)
        raise InvalidInput(
            f"message {number} as a dict needs the keys author, role and text (optional: "
            f"message_id, ts); it has {shown[:8]}"
        )
    return Message(**raw)


def normalize_messages(messages: Sequence[Message | dict[str, Any]]) -> list[Message]:
    """Accept ``Message`` objects or dicts; validate roles and text."""
    out = []
    for number, raw in enumerate(messages, 1):
        msg = _from_dict(raw, number) if isinstance(raw, dict) else raw
        if not isinstance(msg, Message) or not isinstance(msg.text, str):
            raise InvalidInput("each message must be a remem.Message with text")
        out.append(replace(msg, role=_role(msg.role), ts=parse_ts(msg.ts, "message ts")))
    return out


def speaker_roles(messages: Sequence[Message]) -> dict[str, Role]:
    """Each author's effective role in the slice: admin only if every message says so."""
    roles: dict[str, Role] = {}
    for msg in messages:
        if msg.author is None or not isinstance(msg.role, Role):
            continue
        seen = roles.get(msg.author)
        if seen is None:
            roles[msg.author] = msg.role
        elif seen is not msg.role:
            ranks = [Role.UNPAIRED, Role.MEMBER, Role.ADMIN, Role.OWNER]
            weakest = min(seen, msg.role, key=lambda r: ranks.index(r) if r in ranks else 0)
            roles[msg.author] = weakest
    return roles


def _context_lines(messages: Sequence[Message], index: int) -> list[str]:
    """The agent's replies right before a message, for the classifier's reference only."""
    lines = []
    for msg in reversed(messages[max(0, index - 3) : index]):
        if msg.role == "agent":
            lines.append(msg.text)
    return list(reversed(lines))


def _speaker_ctx(ctx: RunContext, author: str, role: Role) -> RunContext:
    channel = ctx.channel or f"learn:{ctx.agent}"
    if ctx.kind is RunKind.DM:
        return RunContext.dm(ctx.agent, channel, author, role=role, run_id=ctx.run_id)
    return RunContext.group(ctx.agent, channel, author, role=role, run_id=ctx.run_id)


@dataclass(frozen=True, slots=True)
class Learner:
    """One learning pass: the memory, the run, the classifier and the relearn mode."""

    mem: Memory
    ctx: RunContext
    classifier: Classifier
    relearn: bool = False

    def run(self, messages: Sequence[Message], summary: str | None) -> LearnReport:
        self._authorize(messages)
        report = LearnReport(run_id=self.ctx.run_id, classifier=self.classifier.name)
        if self.ctx.role is Role.WEBHOOK:
            for msg in messages:
                report.drop(msg, msg.author, "webhook_payload", msg.message_id)
            return report
        roles = speaker_roles(messages)
        for index, msg in enumerate(messages):
            self._message(report, messages, index, msg, roles)
        if summary is not None:
            self._summary(report, messages, summary)
        return report

    def _decide(self, action: Action, target: Target) -> Decision:
        mem = self.mem
        return mem._decide(self.ctx, mem._agent(self.ctx).state, action, target)

    def _authorize(self, messages: Sequence[Message]) -> None:
        """Raise ``Denied`` (nothing of the slice is learned) unless this run may learn and
        every role label is one it may assert (see :mod:`remem.policy.authz`)."""
        ctx = self.ctx
        action = Action.ASSERT_ARCHIVED_ROLE if self.relearn else Action.ASSERT_ROLE
        checks = [Target(Scope.USER, ctx.actor, ctx.actor, ctx.role)]
        seen: set[tuple[str | None, Role | str]] = set()
        for msg in messages:
            if (msg.author, msg.role) in seen:
                continue
            seen.add((msg.author, msg.role))
            label = msg.role if isinstance(msg.role, Role) else None
            checks.append(Target(Scope.USER, msg.author, msg.author, label))
        for target in checks:
            decision = self._decide(action, target)
            if not decision.allowed:
                raise Denied(
                    f"denied ({decision.rule}): {decision.reason}; nothing was learned",
                    rule=decision.rule,
                )

    def _message(
        self,
        report: LearnReport,
        messages: Sequence[Message],
        index: int,
        msg: Message,
        roles: dict[str, Role],
    ) -> None:
        if msg.role == "agent":
            return
        role = roles.get(msg.author) if msg.author else None
        if role is None or role is Role.UNPAIRED:
            report.drop(msg, msg.author, "unpaired_sender", msg.message_id)
            return
        party = self._decide(Action.LEARN_FROM, Target(Scope.CHANNEL, self.ctx.channel, msg.author))
        if not party.allowed:
            report.drop(msg, msg.author, party.rule, msg.message_id)
            return
        if role.is_system:
            report.drop(msg, msg.author, "system_principal", msg.message_id)
            return
        result = self.classifier.classify(msg.text, context=_context_lines(messages, index))
        self._note_classifier(report, result)
        for item in result.items:
            self._item(report, msg, role, item)

    @staticmethod
    def _note_classifier(report: LearnReport, result: Classification) -> None:
        report.classifier = result.classifier
        if result.degraded and result.degraded not in report.degraded:
            report.degraded.append(result.degraded)

    def _item(self, report: LearnReport, msg: Message, role: Role, item: Item) -> None:
        author = msg.author
        assert author is not None
        category = item.category
        if category is Category.NONE:
            if not role.is_admin and is_operational_content(item.statement.lower()):
                # Unlabelled but operational-looking: report the refusal, never learn it.
                report.drop(item, author, "operational_from_non_admin", msg.message_id)
            return
        if category is Category.ONE_OFF:
            report.drop(item, author, "one_off_task", msg.message_id)
            return
        operational = category is Category.OPERATIONAL or (
            not role.is_admin
            and is_operational_content(item.statement.lower())
            and category is not Category.STYLE_RULE
        )
        if operational:
            self._operational(report, msg, role, item)
        elif category is Category.STYLE_RULE and role.is_admin:
            self._style_rule(report, msg, role, item)
        elif self.relearn and not role.is_admin:
            scope, kind, basis = self._placement(item)
            if scope is Scope.USER:  # DESIGN §7: members' personal lines, not from an archive
                report.drop(item, author, "archive_personal", msg.message_id)
            else:
                self._write(report, msg, role, item, scope, kind, basis, quarantine=True)
        else:
            self._write(report, msg, role, item, *self._placement(item))

    def _placement(self, item: Item) -> tuple[Scope, Kind, Basis]:
        if item.category is Category.CHANNEL:
            return Scope.CHANNEL, Kind.DECISION, Basis.INFERRED
        kind = item.kind if item.kind in (Kind.PREFERENCE, Kind.FACT) else Kind.PREFERENCE
        return Scope.USER, kind, Basis.INFERRED

    def _operational(self, report: LearnReport, msg: Message, role: Role, item: Item) -> None:
        if self.ctx.role.is_system:
            report.drop(item, msg.author, "system_principal", msg.message_id)
        elif role.is_admin:
            self._write(report, msg, role, item, Scope.AGENT, Kind.PROCEDURE, Basis.EXPLICIT)
        elif self.relearn:
            self._write(
                report,
                msg,
                role,
                item,
                Scope.AGENT,
                Kind.PROCEDURE,
                Basis.EXPLICIT,
                quarantine=True,
            )
        else:
            report.drop(item, msg.author, "operational_from_non_admin", msg.message_id)

    def _style_rule(self, report: LearnReport, msg: Message, role: Role, item: Item) -> None:
        if self.ctx.role.is_system:
            # A standing rule is operational knowledge: never learned in cron/sop runs.
            report.drop(item, msg.author, "system_principal", msg.message_id)
            return
        mode = self.mem.limits(self.ctx).rule_learning
        if mode == "off":
            report.drop(item, msg.author, "policy_off", msg.message_id)
            return
        status = Status.ACTIVE if mode == "auto" else Status.PENDING
        note = self._write(
            report,
            msg,
            role,
            item,
            Scope.AGENT,
            Kind.PROCEDURE,
            Basis.EXPLICIT,
            tags=(LEARNED_RULE_TAG,),
            status=status,
        )
        if note is not None and note.status is Status.ACTIVE and note.evidence == 1:
            append_learned_rule(self.mem, self.ctx, note.text, note.id)

    def _write(
        self,
        report: LearnReport,
        msg: Message,
        role: Role,
        item: Item,
        scope: Scope,
        kind: Kind,
        basis: Basis,
        *,
        quarantine: bool = False,
        tags: tuple[str, ...] = (),
        status: Status | None = None,
    ) -> Note | None:
        author = msg.author
        assert author is not None
        if scope is Scope.AGENT and self._vetoed(item):
            report.drop(item, author, "vetoed", msg.message_id)
            return None
        if scope is not Scope.AGENT:
            where = author if scope is Scope.USER else self.ctx.channel
            allowed = self._decide(Action.LEARN_FROM, Target(scope, where, author))
            if not allowed.allowed:
                report.drop(item, author, allowed.rule, msg.message_id)
                return None
        # Quarantined agent-wide items are written by the (admin) relearn run; the speaker
        # may not write agent scope and the item is theirs only as its author.
        quarantined_agent = quarantine and scope is Scope.AGENT
        writer = self.ctx if quarantined_agent else _speaker_ctx(self.ctx, author, role)
        try:
            note = remember_as(
                self.mem,
                writer,
                item.statement,
                scope=scope,
                kind=kind,
                basis=basis,
                subject=item.subject,
                tags=tags,
                said_at=msg.ts,
                message_id=msg.message_id,
                author=author,
                status=Status.UNVERIFIED if quarantine else status,
            )
        except Rejected as exc:
            reason = _REASONS.get(exc.reason, "policy_off")
            report.drop(item, author, reason, msg.message_id)
            return None
        except Denied:
            report.drop(item, author, "policy_off", msg.message_id)
            return None
        if note.evidence > 1:
            report.drop(item, author, "duplicate", msg.message_id)
        report.add(note)
        return note

    def _vetoed(self, item: Item) -> bool:
        """Teaching a statement an undo vetoed against a live agent-wide note on its subject
        (the same words and subject as a replacement whose retirement of that note was
        undone): it is not taught again, by a re-processed slice, a relearned archive or a
        new message alike. Saying what a live note says reinforces it instead."""
        if item.subject is None:
            return False
        agent = self.mem._agent(self.ctx)
        state = agent.state
        vetoes = Vetoes(state, agent.secret)
        if not vetoes or self.mem._same(state, Scope.AGENT, None, item.statement) is not None:
            return False
        said = Said("", item.statement, item.subject)  # not written yet: no id
        live = same_subject(state, Scope.AGENT, None, item.subject)
        return any(vetoes.forbids(said, Said.of(note)) for note in live)

    def _summary(self, report: LearnReport, messages: Sequence[Message], summary: str) -> None:
        speaker = self.ctx.actor
        humans = [m for m in messages if m.role != "agent"]
        item = Item(Category.PERSONAL, Kind.INTERACTION, summary.strip(), None)
        if (
            not self.ctx.has_personal_scope
            or not humans
            or any(m.author != speaker for m in humans)
        ):
            report.drop(item, speaker, "shared_thread_summary", None)
            return
        try:
            note = remember_as(
                self.mem,
                self.ctx,
                summary.strip(),
                scope=Scope.USER,
                kind=Kind.INTERACTION,
                basis=Basis.INFERRED,
                subject=None,
                tags=(),
                said_at=None,
                message_id=None,
                author=speaker,
                status=None,
            )
        except (Rejected, Denied) as exc:
            report.drop(item, speaker, getattr(exc, "reason", "policy_off"), None)
            return
        if note.evidence > 1:
            report.drop(item, speaker, "duplicate", None)
        report.add(note)


def append_learned_rule(
    mem: Memory, ctx: RunContext, text: str, note_id: str | None = None
) -> None:
    """Add one line to the agent's ``learned`` rule (written with the owner's authority
    of the policy that allowed it; rules stay files a human can edit), linked to the
    note it comes from, so that it goes with that note (see learned_rules)."""
    learned_rules.append(mem.backend, ctx.agent, text, note_id)

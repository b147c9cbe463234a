"""One learning pass over a conversation slice (the rules: :mod:`remem.formation.extract`).

:class:`Learner` authorizes the slice (every refusal through
:func:`remem.policy.authz.decide`), classifies each person's lines and writes what
they may teach through the remember use case, under that speaker's envelope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from remem.app import channel_facts
from remem.app.kernel import Kernel
from remem.app.remember import remember_as
from remem.context import Role, RunContext, RunKind
from remem.core.model import Basis, Kind, Note, Scope, Status
from remem.core.veto import Said, Vetoes
from remem.errors import Denied, Rejected
from remem.formation import learned_rules
from remem.formation.classify import Category, Classification, Classifier, Item
from remem.formation.extract import (
    LEARNED_RULE_TAG,
    LearnReport,
    Message,
    context_lines,
    speaker_roles,
)
from remem.formation.revise import same_subject
from remem.formation.rules import is_operational_content
from remem.policy.authz import Action, Decision, Target, require

_REASONS = {"secret": "secret", "sensitive": "sensitive"}


def _speaker_ctx(ctx: RunContext, author: str, role: Role) -> RunContext:
    channel = ctx.channel or f"learn:{ctx.agent}"
    if ctx.kind is RunKind.DM:
        return RunContext.dm(ctx.agent, channel, author, role=role, run_id=ctx.run_id)
    return RunContext.group(ctx.agent, channel, author, role=role, run_id=ctx.run_id)


@dataclass(frozen=True, slots=True)
class Learner:
    """One learning pass: the run's kernel, the classifier and the relearn mode."""

    k: Kernel
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

    @property
    def ctx(self) -> RunContext:
        return self.k.ctx

    def _decide(self, action: Action, target: Target) -> Decision:
        return self.k.decide(self.k.agent.state, action, target)

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
            require(self._decide(action, target), "; nothing was learned")

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
        result = self.classifier.classify(msg.text, context=context_lines(messages, index))
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
        mode = self.k.limits().rule_learning
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
            append_learned_rule(self.k, note.text, note.id)

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
        speaker = self._speaker(item, author, role, scope, quarantine)
        if isinstance(speaker, str):  # the reason it is dropped
            report.drop(item, author, speaker, msg.message_id)
            return None
        try:
            note = remember_as(
                speaker,
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

    def _speaker(
        self, item: Item, author: str, role: Role, scope: Scope, quarantine: bool
    ) -> Kernel | str:
        """The kernel ``item`` is written under (the speaker's envelope), or the reason it
        is dropped: vetoed, refused to learn from, or a derived envelope the channel's
        recorded kind refuses."""
        if scope is Scope.AGENT and self._vetoed(item):
            return "vetoed"
        if scope is not Scope.AGENT:
            where = author if scope is Scope.USER else self.ctx.channel
            allowed = self._decide(Action.LEARN_FROM, Target(scope, where, author))
            if not allowed.allowed:
                return allowed.rule
        # Quarantined agent-wide items are written by the (admin) relearn run; the speaker
        # may not write agent scope and the item is theirs only as its author.
        quarantined_agent = quarantine and scope is Scope.AGENT
        writer = self.ctx if quarantined_agent else _speaker_ctx(self.ctx, author, role)
        speaker = self.k.under(writer)
        if writer is not self.ctx:
            # A task or system run in a DM's channel derives a group speaker there: the
            # recorded kind refuses it as it refuses that envelope sent by a host.
            fits = channel_facts.fits(speaker)
            if not fits.allowed:
                return fits.rule
        return speaker

    def _vetoed(self, item: Item) -> bool:
        """Teaching a statement an undo vetoed against a live agent-wide note on its subject
        (the same words and subject as a replacement whose retirement of that note was
        undone): it is not taught again, by a re-processed slice, a relearned archive or a
        new message alike. Saying what a live note says reinforces it instead."""
        if item.subject is None:
            return False
        agent = self.k.agent
        state = agent.state
        vetoes = Vetoes(state, agent.secret)
        if not vetoes or self.k.same(state, Scope.AGENT, None, item.statement) is not None:
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
                self.k,
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


def append_learned_rule(k: Kernel, text: str, note_id: str | None = None) -> None:
    """Add one line to the agent's ``learned`` rule (written with the owner's authority
    of the policy that allowed it; rules stay files a human can edit), linked to the
    note it comes from, so that it goes with that note (see learned_rules)."""
    learned_rules.append(k.backend, k.ctx.agent, text, note_id)

"""``Memory``: the one facade every adapter (CLI, HTTP, MCP, web) sits on.

Every method takes the trusted :class:`~remem.context.RunContext` first and
checks each id or scope it is given against it. A write goes: resolve defaults
from the envelope → authorize → write policy (guard) → build the event with
actor and source from the envelope → durable append → projection → receipt.

Each method is one delegation to a use case of :mod:`remem.app`, which takes the
call's :class:`~remem.app.kernel.Kernel` (the envelope and its agent's live state).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remem.app import (
    change,
    commands,
    compaction,
    formation,
    reading,
    recall,
    remember,
    review,
    rules,
    settings,
)
from remem.app.kernel import Clock, Engine
from remem.app.recall import MAX_QUERY_CHARS
from remem.commands.intents import CommandRecognizer
from remem.context import Role, RunContext
from remem.core.events import Event
from remem.core.model import Basis, Kind, Note, Scope, Source, Status
from remem.core.text import check_id, check_str
from remem.errors import InvalidInput
from remem.formation.classify import Classifier
from remem.store.base import Backend
from remem.store.open import open_backend

if TYPE_CHECKING:
    from remem.agentlog import AgentLog
    from remem.app.commands import Reply
    from remem.app.compaction import CompactionReport
    from remem.core.projection import Revision
    from remem.formation.consolidate import ConsolidationReport
    from remem.formation.extract import LearnReport, Message
    from remem.policy.channel import PolicyChange
    from remem.policy.config import Limits
    from remem.prompt import Prompt
    from remem.recall.engine import Recall
    from remem.recall.trace import Trace
    from remem.runwrites import Written
    from remem.store.base import TornTail

__all__ = ["MAX_QUERY_CHARS", "Memory"]


class Memory:
    """Governed memory over one data location. Thread-safe; share one per process."""

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Clock | None = None,
        max_role: Role = Role.OWNER,
        classifier: Classifier | None = None,
        recognizer: CommandRecognizer | None = None,
    ) -> None:
        """``max_role``: the highest role this host may assert for anyone, in a run envelope
        or on a learned message's label (``Role.OWNER``, ``Role.ADMIN`` or ``Role.MEMBER``;
        a host limited to members asserts no system principal either). Anything above it
        is ``Denied`` (rule ``role_ceiling``). In-process the default trusts the host fully;
        a service sets it from the caller's credentials (a host principal's ``max_role``).
        ``clock``, ``classifier`` (what ``learn`` uses) and ``recognizer`` (what ``command``
        uses) default to the wall clock and the rule-based ones."""
        self._engine = Engine(
            backend, clock=clock, max_role=max_role, classifier=classifier, recognizer=recognizer
        )

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        clock: Clock | None = None,
        max_role: Role = Role.OWNER,
        classifier: Classifier | None = None,
        recognizer: CommandRecognizer | None = None,
    ) -> Memory:
        """Open a data location: a directory path (embedded JSONL) or ``jsonl:///abs/path``.
        The keyword arguments: see :meth:`__init__`."""
        return cls(
            open_backend(location),
            clock=clock,
            max_role=max_role,
            classifier=classifier,
            recognizer=recognizer,
        )

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what this Memory was opened with ----------------------------------------------

    @property
    def backend(self) -> Backend:
        return self._engine.backend

    @property
    def clock(self) -> Clock:
        return self._engine.clock

    @property
    def max_role(self) -> Role:
        return self._engine.max_role

    @property
    def classifier(self) -> Classifier:
        """What ``learn`` classifies with (settable)."""
        return self._engine.classifier

    @classifier.setter
    def classifier(self, value: Classifier) -> None:
        self._engine.classifier = value

    @property
    def recognizer(self) -> CommandRecognizer:
        """What ``command`` recognizes memory commands with (settable)."""
        return self._engine.recognizer

    @recognizer.setter
    def recognizer(self, value: CommandRecognizer) -> None:
        self._engine.recognizer = value

    def repairs(self) -> builtins.list[TornTail]:
        """The torn tails (writes interrupted by a crash) this Memory cut from the ends of
        the logs it opened, oldest first, each saved aside (``.log``, ``.saved_to``,
        ``.size`` in bytes) so that a person can look at it (``remem doctor`` lists them).
        Empty for a clean store, and always for a backend without log files."""
        return self._engine.repairs()

    def _agent(self, ctx: RunContext) -> AgentLog:
        """The agent log of ``ctx`` (for tests and benchmarks that look inside)."""
        return self._engine.kernel(ctx).agent

    def _envelope(self, ctx: RunContext) -> dict[str, Any]:
        return self._engine.kernel(ctx).envelope()

    # -- policy and review -------------------------------------------------------------

    def limits(self, ctx: RunContext, channel: str | None = None) -> Limits:
        """The merged admin → agent (→ channel) limits for ``ctx``'s agent."""
        return settings.limits(self._engine.kernel(ctx), channel)

    def effective_policy(self, ctx: RunContext) -> dict[str, Any]:
        """Each effective value with the layer it came from, plus clamps and warnings."""
        return settings.effective_policy(self._engine.kernel(ctx))

    def set_channel_policy(self, ctx: RunContext, channel: str, **values: Any) -> PolicyChange:
        """Set a channel's policy (admins or its stewards; ``stewards=`` admins only).

        Keys: ``memory`` (bool), ``inferred`` (auto|review|off|evidence:N), ``kinds``,
        ``retention_days``, ``recall_max_notes``, ``recall_max_chars``, ``stewards``.
        A value looser than a wider layer is clamped; the result's notices say so.
        """
        return settings.set_channel_policy(self._engine.kernel(ctx), channel, **values)

    def channel_policy(self, ctx: RunContext, channel: str) -> dict[str, Any]:
        """The stored settings of one channel."""
        return settings.channel_policy(self._engine.kernel(ctx), channel)

    def set_my_preferences(
        self, ctx: RunContext, *, inferred: bool | None = None, cross_channel: bool | None = None
    ) -> PolicyChange:
        """The speaker's choices about memory of themselves; effective immediately."""
        k = self._engine.kernel(ctx)
        return settings.set_my_preferences(k, inferred=inferred, cross_channel=cross_channel)

    def pending(self, ctx: RunContext) -> builtins.list[Note]:
        """Notes awaiting review that ``ctx`` may review (a person: those about them)."""
        return review.pending(self._engine.kernel(ctx))

    def approve(self, ctx: RunContext, note_id: str) -> Note:
        """Confirm a pending or unverified note."""
        return review.review(self._engine.kernel(ctx), note_id, approve=True)

    def reject(self, ctx: RunContext, note_id: str) -> Note:
        """Refuse a pending or unverified note; it is never recalled."""
        return review.review(self._engine.kernel(ctx), note_id, approve=False)

    # -- writes --------------------------------------------------------------------

    def remember(
        self,
        ctx: RunContext,
        text: str,
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        kind: Kind | str | None = None,
        basis: Basis | str = Basis.EXPLICIT,
        subject: str | None = None,
        tags: Iterable[str] = (),
        pinned: bool = False,
        expires_at: datetime | str | None = None,
        source: Source | dict[str, Any] | str | None = None,
        said_at: datetime | str | None = None,
    ) -> Note:
        """Remember one statement; returns the note (``active``, or ``pending`` under review).

        The same normalized text in the same scope reinforces the existing note
        instead of creating a duplicate. Raises ``Denied``, ``Rejected`` or
        ``InvalidInput``; nothing is written when it raises.
        """
        return remember.remember(
            self._engine.kernel(ctx),
            text,
            scope=scope,
            scope_id=scope_id,
            kind=kind,
            basis=basis,
            subject=subject,
            tags=tags,
            pinned=pinned,
            expires_at=expires_at,
            source=source,
            said_at=said_at,
        )

    def forget(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Tombstone a note: it leaves recall and listings; compaction erases its content."""
        return change.forget(self._engine.kernel(ctx), note_id, if_version=if_version)

    def correct(
        self, ctx: RunContext, note_id: str, text: str, *, if_version: int | None = None
    ) -> Note:
        """Replace a note's text; the old text stays in ``history`` (until forgotten)."""
        return change.correct(self._engine.kernel(ctx), note_id, text, if_version=if_version)

    def move(
        self,
        ctx: RunContext,
        note_id: str,
        *,
        scope: Scope | str,
        scope_id: str | None = None,
        if_version: int | None = None,
    ) -> Note:
        """Move a note to another scope (a correction event); the target is authorized too."""
        k = self._engine.kernel(ctx)
        return change.move(k, note_id, scope=scope, scope_id=scope_id, if_version=if_version)

    def disable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Keep the note but stop recalling it."""
        return change.disable(self._engine.kernel(ctx), note_id, if_version=if_version)

    def enable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Return a disabled note to recall."""
        return change.enable(self._engine.kernel(ctx), note_id, if_version=if_version)

    def pin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Pinned notes rank first and are never retired by an automatic path."""
        return change.pin(self._engine.kernel(ctx), note_id, if_version=if_version)

    def unpin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Unpin a note."""
        return change.unpin(self._engine.kernel(ctx), note_id, if_version=if_version)

    # -- reads ---------------------------------------------------------------------

    def get(self, ctx: RunContext, note_id: str) -> Note:
        """One note visible to ``ctx``; ``NotFound`` otherwise (same answer as a missing id)."""
        return reading.get(self._engine.kernel(ctx), note_id)

    def list(
        self,
        ctx: RunContext,
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        status: Status | str | None = "active",
        tag: str | None = None,
    ) -> builtins.list[Note]:
        """Notes visible to ``ctx``, oldest first. ``status=None`` lists every status."""
        k = self._engine.kernel(ctx)
        return reading.list_notes(k, scope=scope, scope_id=scope_id, status=status, tag=tag)

    def status_of(self, ctx: RunContext, note: Note, now: datetime | None = None) -> Status:
        """A note's status as of ``now``, counting ``expires_at`` and retention policy."""
        return reading.status_of(self._engine.kernel(ctx), note, now)

    def history(self, ctx: RunContext, note_id: str) -> builtins.list[Event]:
        """The note's events, oldest first. A forgotten note's events no longer show its text."""
        return reading.history(self._engine.kernel(ctx), note_id)

    def compact(self, ctx: RunContext) -> CompactionReport:
        """Physically remove forgotten, rejected and expired notes' content (owner only)."""
        return compaction.compact(self._engine.kernel(ctx))

    # -- recall ------------------------------------------------------------------------

    def recall(
        self,
        ctx: RunContext,
        query: str = "",
        *,
        max_chars: int | None = None,
        tag: str | None = None,
    ) -> Recall:
        """What this run may see, ranked and bounded, rendered as inert data; leaves a trace."""
        return recall.recall(self._engine.kernel(ctx), query, max_chars=max_chars, tag=tag)

    def compile(
        self,
        ctx: RunContext,
        message: str,
        *,
        identity: str = "",
        purpose: str = "",
        policy: str = "",
        briefing: str = "",
    ) -> Prompt:
        """Build a prompt: ``system`` = identity → policy → purpose → rules; ``input`` = memory
        → briefing → message. Runs one recall (its ``run_id`` is the prompt's)."""
        return recall.compile_prompt(
            self._engine.kernel(ctx),
            message,
            identity=identity,
            purpose=purpose,
            policy=policy,
            briefing=briefing,
        )

    def explain(self, ctx: RunContext, run_id: str) -> Trace:
        """The stored trace of a run (nothing is recomputed), as far as ``ctx`` may see it.

        Owners and admins see all of it; a channel steward the runs in their
        channel and a participant their own runs, each restricted to the notes
        they may see.
        """
        return reading.explain(self._engine.kernel(ctx), run_id)

    def writes(self, ctx: RunContext, run_id: str) -> builtins.list[Written]:
        """The notes run ``run_id`` changed, as far as ``ctx`` may see them, in the order the
        run first wrote each: :class:`~remem.runwrites.Written` (``.note``, ``.ops``,
        ``.op``, ``.receipt``). One entry per note, so a host attaches one "see what I
        remember" chip per reply. Covers writes made through this process, for the newest
        4,096 runs that wrote; any other run gives ``[]``."""
        return reading.writes(self._engine.kernel(ctx), run_id)

    def tags(self, ctx: RunContext) -> dict[str, int]:
        """Tag counts over live notes visible to ``ctx``."""
        return reading.tags(self._engine.kernel(ctx))

    # -- rules ---------------------------------------------------------------------------

    def rules(self, ctx: RunContext) -> dict[str, str]:
        """The agent's trusted rules by name (read from the backend on every call)."""
        return rules.rules(self._engine.kernel(ctx))

    def set_rule(self, ctx: RunContext, name: str, content: str) -> None:
        """Write (or with empty content remove) a rule; owners and admins only."""
        rules.set_rule(self._engine.kernel(ctx), name, content)

    # -- formation and belief revision (see remem.formation) ---------------------------

    def learn(
        self,
        ctx: RunContext,
        messages: Sequence[Message | dict[str, Any]],
        *,
        summary: str | None = None,
    ) -> LearnReport:
        """Learn from a conversation slice under each speaker's stored role (DESIGN §7)."""
        k = self._engine.kernel(ctx)
        return formation.learn(k, messages, self._engine.classifier, summary=summary)

    def relearn(
        self, ctx: RunContext, archive: str | Path | Iterable[dict[str, Any]]
    ) -> LearnReport:
        """Learn from an archived session (admins); non-admin operational items → unverified."""
        return formation.relearn(self._engine.kernel(ctx), archive, self._engine.classifier)

    def supersede(self, ctx: RunContext, old_id: str, new_id: str) -> Note:
        """Retire ``old_id`` in favour of ``new_id`` by hand (a ``manual`` revision)."""
        return formation.supersede(self._engine.kernel(ctx), old_id, new_id)

    def revisions(self, ctx: RunContext) -> builtins.list[Revision]:
        """Every retirement of a note ``ctx`` may see, as revision rows."""
        return formation.revisions(self._engine.kernel(ctx))

    def undo(self, ctx: RunContext, revision_id: str) -> Revision:
        """Restore a retired note; the pair is vetoed from then on."""
        k = self._engine.kernel(ctx)
        return formation.undo(k, [check_id(revision_id, "revision_id")])[0]

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]:
        """Undo every revision a run made."""
        return formation.undo_run(self._engine.kernel(ctx), check_id(run_id, "run_id"))

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport:
        """Merge live notes of one scope that say the same thing (owners and admins)."""
        k = self._engine.kernel(ctx)
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be True or False")
        return formation.consolidate(k, dry_run=dry_run)

    # -- conversation ----------------------------------------------------------------

    def command(self, ctx: RunContext, text: str) -> Reply | None:
        """Carry out a memory command said in conversation ("forget that", "what do you
        remember about me?"); ``None`` when ``text`` is not a memory command."""
        k = self._engine.kernel(ctx)
        return commands.run_command(k, check_str(text, "text"), self._engine.recognizer)

    def agents(self) -> builtins.list[str]:
        """Agents that have a log in this data location."""
        return self.backend.agents()

    def trash_agent(self, ctx: RunContext, agent: str) -> str:
        """Move an agent's directory to ``.trash`` (owner only); returns where it went."""
        return compaction.trash_agent(self._engine.kernel(ctx), agent)

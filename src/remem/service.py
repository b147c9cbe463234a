"""``Memory``: the one facade every adapter (CLI, HTTP, MCP, web) sits on.

Every method takes the trusted :class:`~remem.context.RunContext` first and
checks each id or scope it is given against it. A write goes: resolve defaults
from the envelope → authorize → write policy (guard) → build the event with
actor and source from the envelope → durable append → projection → receipt.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remem import governance
from remem.agentlog import AgentLog
from remem.commands.intents import CommandRecognizer
from remem.commands.recognize import RuleRecognizer
from remem.context import Role, RunContext, RunKind
from remem.core.events import (
    Corrected,
    Disabled,
    Enabled,
    Event,
    Forgotten,
    NoteEvent,
    Pinned,
    Reinforced,
    Remembered,
    Unpinned,
)
from remem.core.ids import is_id, new_id
from remem.core.model import (
    LIVE_STATUSES,
    Basis,
    Kind,
    Note,
    Scope,
    Source,
    Status,
    parse_enum,
    parse_ts,
    retained_until,
    utcnow,
)
from remem.core.projection import State
from remem.core.text import canonical_text, check_id, check_optional_id, check_str
from remem.errors import Conflict, Denied, InvalidInput, NotFound, Rejected
from remem.formation.classify import Classifier, RuleClassifier
from remem.policy.authz import Action, Decision, Target, check_ceiling, decide, within_ceiling
from remem.policy.book import PolicyBook
from remem.policy.config import Limits
from remem.policy.guard import check_note_text, check_rule_text
from remem.store.base import Backend
from remem.store.open import open_backend
from remem.writes import commit_plan, plan_remember

if TYPE_CHECKING:
    from remem.commands.execute import Reply
    from remem.compaction import CompactionReport
    from remem.core.projection import Revision
    from remem.formation.consolidate import ConsolidationReport
    from remem.formation.extract import LearnReport, Message
    from remem.governance import PolicyChange
    from remem.prompt import Prompt
    from remem.recall.engine import Recall, RecallPolicy
    from remem.recall.trace import Trace
    from remem.runwrites import Written
    from remem.writes import RememberPlan

Clock = Callable[[], datetime]

#: The characters of a query that recall reads for relevance (``compile`` passes whole
#: messages; the start of a very long one ranks as well as all of it, at a bounded cost).
MAX_QUERY_CHARS = 4_000
_REINFORCEABLE = frozenset({Status.ACTIVE, Status.PENDING, Status.UNVERIFIED})
_NOT_FOUND = "no note {id} is visible here (it does not exist, or this context may not see it)"


class Memory:
    """Governed memory over one data location. Thread-safe; share one per process."""

    def __init__(
        self, backend: Backend, *, clock: Clock | None = None, max_role: Role = Role.OWNER
    ) -> None:
        """``max_role``: the highest role this host may assert for anyone, in a run envelope
        or on a learned message's label (``Role.OWNER``, ``Role.ADMIN`` or ``Role.MEMBER``;
        a host limited to members asserts no system principal either). Anything above it
        is ``Denied`` (rule ``role_ceiling``). In-process the default trusts the host fully;
        a service sets it from the caller's credentials."""
        if clock is not None and not callable(clock):
            raise InvalidInput("clock must be a function returning the current datetime")
        self.backend = backend
        self.clock: Clock = clock or utcnow
        self.max_role = check_ceiling(max_role)
        self._book = PolicyBook(backend)
        self.recognizer: CommandRecognizer = RuleRecognizer()
        self._recall_policies: dict[tuple[Any, ...], RecallPolicy] = {}
        #: Authorized creations: (envelope, target, policy versions) → (envelope, scope id,
        #: limits, the envelope's plain source); see remem.writes._grant.
        self._grants: dict[tuple[Any, ...], tuple[RunContext, str | None, Limits, Source]] = {}
        self.classifier: Classifier = RuleClassifier()
        self._book.file()  # a malformed policy file is an error at open
        self._agents: dict[str, AgentLog] = {}
        self._agents_lock = threading.Lock()

    @classmethod
    def open(
        cls, location: str | Path, *, clock: Clock | None = None, max_role: Role = Role.OWNER
    ) -> Memory:
        """Open a data location: a directory path (embedded JSONL) or ``jsonl:///abs/path``.
        ``max_role``: see :meth:`__init__`."""
        return cls(open_backend(location), clock=clock, max_role=max_role)

    def close(self) -> None:
        for agent in self._agents.values():
            agent.close()
        self.backend.close()
        self._agents.clear()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ------------------------------------------------------------------

    def _agent(self, ctx: RunContext) -> AgentLog:
        if not isinstance(ctx, RunContext):
            raise InvalidInput("the first argument must be a remem.RunContext built by the host")
        if self.max_role is not Role.OWNER:  # every method: no envelope above the ceiling
            self._require_ceiling(ctx)
        agent = self._agents.get(ctx.agent)
        if agent is None:
            # One AgentLog per agent: two threads opening it at once must not each build
            # their own (they would share the log's file handle without sharing a lock).
            with self._agents_lock:
                agent = self._agents.get(ctx.agent)
                if agent is None:
                    agent = self._agents[ctx.agent] = AgentLog(self.backend, ctx.agent)
        return agent

    def _require_ceiling(self, ctx: RunContext) -> None:
        decision = within_ceiling(ctx, self.max_role)
        if not decision.allowed:
            raise Denied(f"denied ({decision.rule}): {decision.reason}", rule=decision.rule)

    def _state(self, ctx: RunContext) -> State:
        return self._agent(ctx).sync()

    def _decide(self, ctx: RunContext, state: State, action: Action, target: Target) -> Decision:
        steward = False
        if target.scope is Scope.CHANNEL and target.scope_id and ctx.actor:
            stewards = state.channel_policies.get(target.scope_id, {}).get("stewards", ())
            steward = ctx.actor in stewards
        writer = False
        if target.scope is Scope.AGENT and action is not Action.READ and not ctx.role.is_admin:
            writer = self._agent_writer(ctx, state)
        return decide(
            ctx, action, target, steward=steward, agent_writer=writer, ceiling=self.max_role
        )

    def _agent_writer(self, ctx: RunContext, state: State) -> bool:
        """Whether policy's ``agent_write_access`` names this actor, its role, or (with
        ``role:steward``) a steward of any channel."""
        access = self.limits(ctx).agent_write_access
        if not access:
            return False
        if ctx.actor in access or f"role:{ctx.role.value}" in access:
            return True
        return "role:steward" in access and any(
            ctx.actor in policy.get("stewards", ()) for policy in state.channel_policies.values()
        )

    def _require(self, ctx: RunContext, state: State, action: Action, target: Target) -> None:
        decision = self._decide(ctx, state, action, target)
        if not decision.allowed:
            raise Denied(f"denied ({decision.rule}): {decision.reason}", rule=decision.rule)

    @staticmethod
    def _target(note: Note) -> Target:
        return Target(note.scope, note.scope_id, note.created_by)

    def _can_read(self, ctx: RunContext, state: State, note: Note) -> bool:
        return self._decide(ctx, state, Action.READ, self._target(note)).allowed

    def _visible(self, ctx: RunContext, state: State, note_id: str) -> Note:
        if not isinstance(note_id, str) or not is_id(note_id, "note"):
            raise InvalidInput(
                f"{str(note_id)[:60]!r} is not a note id (note ids look like note_01J…)"
            )
        note = state.notes.get(note_id)
        if note is None or not self._can_read(ctx, state, note):
            raise NotFound(_NOT_FOUND.format(id=note_id))
        return note

    def _envelope(self, ctx: RunContext) -> dict[str, Any]:
        return {
            "eid": new_id("ev"),
            "ts": self.clock(),
            "actor": ctx.actor,
            "role": ctx.role.value,
            "run_id": ctx.run_id,
            "channel": ctx.channel,
        }

    # -- policy and review (see remem.governance) --------------------------------------

    def limits(self, ctx: RunContext, channel: str | None = None) -> Limits:
        """The merged admin → agent (→ channel) limits for ``ctx``'s agent."""
        return governance.limits(self, ctx, check_optional_id(channel, "channel"))

    def effective_policy(self, ctx: RunContext) -> dict[str, Any]:
        """Each effective value with the layer it came from, plus clamps and warnings."""
        return governance.effective_policy(self, ctx)

    def set_channel_policy(self, ctx: RunContext, channel: str, **settings: Any) -> PolicyChange:
        """Set a channel's policy (admins or its stewards; ``stewards=`` admins only).

        Keys: ``memory`` (bool), ``inferred`` (auto|review|off|evidence:N), ``kinds``,
        ``retention_days``, ``recall_max_notes``, ``recall_max_chars``, ``stewards``.
        A value looser than a wider layer is clamped; the result's notices say so.
        """
        return governance.set_channel_policy(self, ctx, channel, **settings)

    def channel_policy(self, ctx: RunContext, channel: str) -> dict[str, Any]:
        """The stored settings of one channel."""
        return governance.channel_policy(self, ctx, channel)

    def set_my_preferences(
        self, ctx: RunContext, *, inferred: bool | None = None, cross_channel: bool | None = None
    ) -> PolicyChange:
        """The speaker's choices about memory of themselves; effective immediately."""
        self._agent(ctx)
        return governance.set_my_preferences(
            self, ctx, inferred=inferred, cross_channel=cross_channel
        )

    def pending(self, ctx: RunContext) -> builtins.list[Note]:
        """Notes awaiting review that ``ctx`` may review (a person: those about them)."""
        return governance.pending(self, ctx)

    def approve(self, ctx: RunContext, note_id: str) -> Note:
        """Confirm a pending or unverified note."""
        return governance.review(self, ctx, note_id, approve=True)

    def reject(self, ctx: RunContext, note_id: str) -> Note:
        """Refuse a pending or unverified note; it is never recalled."""
        return governance.review(self, ctx, note_id, approve=False)

    def _check_write_policy(
        self,
        ctx: RunContext,
        text: str,
        kind: Kind,
        basis: Basis,
        limits: Limits,
        scope: Scope,
        scope_id: str | None,
    ) -> None:
        governance.screen_write(self, ctx, text, kind, basis, limits, scope, scope_id)

    def _initial_status(self, ctx: RunContext, state: State, plan: RememberPlan) -> Status:
        return governance.initial_status(self, ctx, state, plan)

    def _evidence_events(self, ctx: RunContext, note: Note, limits: Limits) -> builtins.list[Event]:
        return governance.evidence_events(self, ctx, note, limits)

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
        return commit_plan(
            self,
            ctx,
            lambda state: plan_remember(
                self,
                ctx,
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
                state=state,
            ),
        )

    def _change(
        self,
        ctx: RunContext,
        note_id: str,
        if_version: int | None,
        make: Callable[[Note, dict[str, Any]], NoteEvent | None],
        *,
        allowed: Iterable[Status] = LIVE_STATUSES,
    ) -> Note:
        agent = self._agent(ctx)  # write() catches up under the lock before build()
        allowed_set = frozenset(allowed)
        if if_version is not None and (type(if_version) is not int or if_version < 1):
            raise InvalidInput("if_version must be a note version (a whole number from 1) or None")

        def build(state: State) -> tuple[builtins.list[Event], str]:
            note = self._visible(ctx, state, note_id)
            self._require(ctx, state, Action.CHANGE, self._target(note))
            if if_version is not None and note.version != if_version:
                raise Conflict(
                    f"note {note_id} is at version {note.version}, not {if_version}; "
                    "read it again and retry",
                    current=note,
                )
            if note.status not in allowed_set:
                raise InvalidInput(
                    f"note {note_id} is {note.status.value}; this change needs a live note"
                )
            event = make(note, self._envelope(ctx))
            return ([event] if event else []), note.id

        nid = agent.write(build)
        return agent.state.notes[nid]

    def forget(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Tombstone a note: it leaves recall and listings; compaction erases its content."""
        return self._change(
            ctx,
            note_id,
            if_version,
            lambda n, env: Forgotten(note_id=n.id, **env),
            allowed=(*LIVE_STATUSES, Status.SUPERSEDED, Status.EXPIRED, Status.REJECTED),
        )

    def correct(
        self, ctx: RunContext, note_id: str, text: str, *, if_version: int | None = None
    ) -> Note:
        """Replace a note's text; the old text stays in ``history`` (until forgotten)."""
        text = canonical_text(text)  # the same stored form as remember()
        check_note_text(text, max_chars=self.limits(ctx).max_note_chars)

        def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
            if note.text == text:
                return None
            return Corrected(note_id=note.id, text=text, **env)

        return self._change(ctx, note_id, if_version, make)

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
        new_scope = parse_enum(Scope, scope, "scope")
        state = self._state(ctx)
        target_id = self._resolve_scope_id(ctx, new_scope, scope_id)
        self._require(ctx, state, Action.CREATE, Target(new_scope, target_id, ctx.actor))

        def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
            if note.scope is new_scope and note.scope_id == target_id:
                return None
            return Corrected(note_id=note.id, scope=new_scope, scope_id=target_id, **env)

        return self._change(ctx, note_id, if_version, make)

    def disable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Keep the note but stop recalling it."""
        return self._flag(ctx, note_id, if_version, Disabled, Status.DISABLED)

    def enable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Return a disabled note to recall."""

        def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
            if note.status is not Status.DISABLED:
                return None
            return Enabled(note_id=note.id, **env)

        return self._change(ctx, note_id, if_version, make)

    def pin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Pinned notes rank first and are never retired by an automatic path."""
        return self._change(
            ctx,
            note_id,
            if_version,
            lambda n, env: None if n.pinned else Pinned(note_id=n.id, **env),
        )

    def unpin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return self._change(
            ctx,
            note_id,
            if_version,
            lambda n, env: Unpinned(note_id=n.id, **env) if n.pinned else None,
        )

    def _flag(
        self,
        ctx: RunContext,
        note_id: str,
        if_version: int | None,
        event_type: type[NoteEvent],
        status: Status,
    ) -> Note:
        def make(note: Note, env: dict[str, Any]) -> NoteEvent | None:
            if note.status is status:
                return None
            return event_type(note_id=note.id, **env)

        return self._change(ctx, note_id, if_version, make)

    # -- reads ---------------------------------------------------------------------

    def get(self, ctx: RunContext, note_id: str) -> Note:
        """One note visible to ``ctx``; ``NotFound`` otherwise (same answer as a missing id)."""
        return self._visible(ctx, self._state(ctx), note_id)

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
        state = self._state(ctx)
        check_optional_id(tag, "tag")
        check_optional_id(scope_id, "scope_id")
        want = parse_enum(Status, status, "status") if status is not None else None
        now = self.clock()
        notes = self._listable(ctx, state, scope, scope_id)
        out = []
        for note in notes:
            if want is not None and self.status_of(ctx, note, now) is not want:
                continue
            if tag is not None and tag not in note.tags:
                continue
            out.append(note)
        out.sort(key=lambda n: n.id)
        return out

    def status_of(self, ctx: RunContext, note: Note, now: datetime | None = None) -> Status:
        """A note's status as of ``now``, counting ``expires_at`` and retention policy."""
        if not isinstance(note, Note):
            raise InvalidInput("note must be a remem.Note (from get, list or recall)")
        if now is not None and not isinstance(now, datetime):
            raise InvalidInput("now must be a datetime or None")
        self._agent(ctx)
        now = parse_ts(now, "now") or self.clock()  # a naive time is UTC, as everywhere
        status = note.effective_status(now)
        if status is Status.ACTIVE:
            channel = note.scope_id if note.scope is Scope.CHANNEL else None
            days = self.limits(ctx, channel).retention_days
            if days is not None and retained_until(note.said_at, days) <= now:
                return Status.EXPIRED
        return status

    def _listable(
        self, ctx: RunContext, state: State, scope: Scope | str | None, scope_id: str | None
    ) -> builtins.list[Note]:
        if scope is None:
            if scope_id is not None:
                raise InvalidInput("scope_id needs scope: pass scope='user' or scope='channel'")
            return [n for n in state.notes.values() if self._can_read(ctx, state, n)]
        parsed = parse_enum(Scope, scope, "scope")
        if parsed is Scope.AGENT and scope_id is not None:
            raise InvalidInput("agent scope has no scope_id")
        if scope_id is None and parsed is not Scope.AGENT:
            if ctx.kind is RunKind.OWNER or ctx.role.is_admin:
                return [n for n in state.notes.values() if n.scope is parsed]
            scope_id = self._resolve_scope_id(ctx, parsed, None)
        self._require(ctx, state, Action.READ, Target(parsed, scope_id))
        return state.in_scope(parsed, scope_id)

    def history(self, ctx: RunContext, note_id: str) -> builtins.list[Event]:
        """The note's events, oldest first. A forgotten note's events no longer show its text."""
        agent = self._agent(ctx)
        note = self._visible(ctx, agent.sync(), note_id)
        events = agent.log.history(note_id)
        if note.status is Status.FORGOTTEN:
            from dataclasses import replace

            events = [
                replace(ev, text="") if isinstance(ev, Remembered | Corrected) and ev.text else ev
                for ev in events
            ]
        from remem.formation.actions import hide_unseen_replacements

        return hide_unseen_replacements(self, ctx, agent.state, events)

    def compact(self, ctx: RunContext) -> CompactionReport:
        """Physically remove forgotten, rejected and expired notes' content (owner only)."""
        from remem.compaction import compact

        return compact(self, ctx)

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
        from remem.recall.engine import run_recall

        self._agent(ctx)
        check_str(query, "query")
        query = query[:MAX_QUERY_CHARS]  # relevance reads the start of a very long message
        if max_chars is not None and (type(max_chars) is not int or max_chars < 0):
            raise InvalidInput("max_chars must be a non-negative integer")
        check_optional_id(tag, "tag")
        if ctx.role is Role.UNPAIRED:
            raise Denied("denied (unpaired): unpaired senders have no access to memory", "unpaired")
        agent = self._agent(ctx)
        state = agent.sync()
        return run_recall(
            agent,
            state,
            ctx,
            query,
            policy=governance.recall_policy(self, ctx, state),
            now=self.clock(),
            max_chars=max_chars,
            tag=tag,
            rules=self._rules_text(ctx),
        )

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
        from remem.prompt import assemble

        for what, part in (
            ("identity", identity),
            ("purpose", purpose),
            ("policy", policy),
            ("briefing", briefing),
        ):
            check_str(part, what)
        recall = self.recall(ctx, check_str(message, "message"))
        return assemble(
            recall, message, identity=identity, purpose=purpose, policy=policy, briefing=briefing
        )

    def explain(self, ctx: RunContext, run_id: str) -> Trace:
        """The stored trace of a run (nothing is recomputed), as far as ``ctx`` may see it.

        Owners and admins see all of it; a channel steward the runs in their
        channel and a participant their own runs, each restricted to the notes
        they may see.
        """
        from remem.recall.trace import Trace

        agent = self._agent(ctx)
        check_id(run_id, "run_id")
        state = agent.sync()
        records = [r for r in agent.traces.find(run_id) if r.get("type") == "recall"]
        if not records:
            raise NotFound(f"no trace for run {run_id} is visible here")
        trace = Trace.from_dict(records[-1], agent.traces.shared)
        if ctx.role.is_admin or ctx.kind is RunKind.OWNER:
            return trace
        stewards = state.channel_policies.get(trace.channel or "", {}).get("stewards", ())
        steward = bool(trace.channel) and ctx.actor in stewards
        if ctx.actor is None or not ctx.role.is_human or not (steward or trace.actor == ctx.actor):
            raise NotFound(f"no trace for run {run_id} is visible here")
        ids = {
            i
            for i in trace.candidates
            if i in state.notes and self._can_read(ctx, state, state.notes[i])
        }
        return trace.visible_to(ids)

    def writes(self, ctx: RunContext, run_id: str) -> builtins.list[Written]:
        """The notes run ``run_id`` changed, as far as ``ctx`` may see them, in the order the
        run first wrote each: :class:`~remem.runwrites.Written` (``.note``, ``.ops``,
        ``.op``, ``.receipt``). One entry per note, so a host attaches one "see what I
        remember" chip per reply. Covers writes made through this process, for the newest
        4,096 runs that wrote; any other run gives ``[]``."""
        from remem.runwrites import Written, receipt_for

        agent = self._agent(ctx)
        check_id(run_id, "run_id")
        state = agent.sync()
        out = []
        for note_id, ops in agent.run_writes.of(run_id):
            note = state.notes.get(note_id)
            if note is not None and self._can_read(ctx, state, note):
                out.append(Written(note, ops, receipt_for(ops[-1], note)))
        return out

    def tags(self, ctx: RunContext) -> dict[str, int]:
        """Tag counts over live notes visible to ``ctx``."""
        counts: dict[str, int] = {}
        for note in self.list(ctx):
            for tag in note.tags:
                counts[tag] = counts.get(tag, 0) + 1
        return dict(sorted(counts.items()))

    # -- rules ---------------------------------------------------------------------------

    def rules(self, ctx: RunContext) -> dict[str, str]:
        """The agent's trusted rules by name (read from the backend on every call)."""
        self._agent(ctx)
        if ctx.role is Role.UNPAIRED:
            raise Denied("denied (unpaired): unpaired senders have no access to memory", "unpaired")
        return self.backend.read_rules(ctx.agent)

    def _rules_text(self, ctx: RunContext) -> str:
        rules = self.backend.read_rules(ctx.agent)
        return "\n\n".join(
            content.strip() for _, content in sorted(rules.items()) if content.strip()
        )

    def set_rule(self, ctx: RunContext, name: str, content: str) -> None:
        """Write (or with empty content remove) a rule; owners and admins only."""
        state = self._state(ctx)
        self._require(ctx, state, Action.RULES, Target(Scope.AGENT))
        check_id(name, "rule name")
        check_str(content, "rule content")
        limit = self.limits(ctx).max_rule_chars
        if len(content) > limit:
            raise Rejected(
                f"rule {name!r} is {len(content)} characters; the limit is {limit}. "
                "Shorten it or split it into several rules",
                reason="too_long",
            )
        check_rule_text(name, content)
        self.backend.write_rule(ctx.agent, name, content)

    # -- formation and belief revision (see remem.formation) ---------------------------

    def learn(
        self,
        ctx: RunContext,
        messages: Sequence[Message | dict[str, Any]],
        *,
        summary: str | None = None,
    ) -> LearnReport:
        """Learn from a conversation slice under each speaker's stored role (DESIGN §7)."""
        from remem.formation.actions import learn

        return learn(self, ctx, messages, self.classifier, summary=summary)

    def relearn(
        self, ctx: RunContext, archive: str | Path | Iterable[dict[str, Any]]
    ) -> LearnReport:
        """Learn from an archived session (admins); non-admin operational items → unverified."""
        from remem.formation.actions import relearn

        return relearn(self, ctx, archive, self.classifier)

    def supersede(self, ctx: RunContext, old_id: str, new_id: str) -> Note:
        """Retire ``old_id`` in favour of ``new_id`` by hand (a ``manual`` revision)."""
        from remem.formation.actions import supersede

        return supersede(self, ctx, old_id, new_id)

    def revisions(self, ctx: RunContext) -> builtins.list[Revision]:
        """Every retirement of a note ``ctx`` may see, as revision rows."""
        from remem.formation.actions import revisions

        return revisions(self, ctx)

    def undo(self, ctx: RunContext, revision_id: str) -> Revision:
        """Restore a retired note; the pair is vetoed from then on."""
        from remem.formation.actions import undo

        self._agent(ctx)
        check_id(revision_id, "revision_id")
        return undo(self, ctx, [revision_id])[0]

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]:
        """Undo every revision a run made."""
        from remem.formation.actions import undo_run

        self._agent(ctx)
        check_id(run_id, "run_id")
        return undo_run(self, ctx, run_id)

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport:
        """Merge live notes of one scope that say the same thing (owners and admins)."""
        from remem.formation.actions import consolidate

        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be True or False")
        return consolidate(self, ctx, dry_run=dry_run)

    # -- conversation ----------------------------------------------------------------

    def command(self, ctx: RunContext, text: str) -> Reply | None:
        """Carry out a memory command said in conversation ("forget that", "what do you
        remember about me?"); ``None`` when ``text`` is not a memory command."""
        from remem.commands.execute import run_command

        self._agent(ctx)
        check_str(text, "text")
        return run_command(self, ctx, text, self.recognizer)

    def agents(self) -> builtins.list[str]:
        """Agents that have a log in this data location."""
        return self.backend.agents()

    def trash_agent(self, ctx: RunContext, agent: str) -> str:
        """Move an agent's directory to ``.trash`` (owner only); returns where it went."""
        self._agent(ctx)
        check_id(agent, "agent")
        if agent != ctx.agent:
            raise Denied(
                f"denied (other_agent): a run of agent {ctx.agent!r} cannot trash agent "
                f"{agent!r}; use RunContext.owner({agent!r})",
                rule="other_agent",
            )
        state = self._state(ctx)
        self._require(ctx, state, Action.COMPACT, Target(Scope.AGENT))
        gone = self._agents.pop(agent, None)
        if gone is not None:
            gone.close()
        return self.backend.trash_agent(agent)

    # -- helpers used by the write planners ------------------------------------------------

    def _resolve_scope_id(self, ctx: RunContext, scope: Scope, scope_id: str | None) -> str | None:
        if scope is Scope.AGENT:
            if scope_id is not None:
                raise InvalidInput("agent scope has no scope_id")
            return None
        if scope_id is not None:
            return check_id(scope_id, "scope_id")
        if scope is Scope.USER:
            if not ctx.has_personal_scope:
                raise Denied(
                    f"denied (no_personal_scope): {ctx.role.value} runs have no personal scope",
                    rule="no_personal_scope",
                )
            return ctx.actor
        if ctx.channel is None:
            raise InvalidInput("this run has no channel; pass scope_id='<channel id>'")
        return ctx.channel

    def _same(self, state: State, scope: Scope, scope_id: str | None, text: str) -> Note | None:
        return state.find_same(scope, scope_id, text, _REINFORCEABLE)

    def _reinforce(self, ctx: RunContext, note: Note, source: Source) -> builtins.list[Event]:
        return [Reinforced(note_id=note.id, source=source, **self._envelope(ctx))]

    @staticmethod
    def _parse_time(value: datetime | str | None, what: str) -> datetime | None:
        return parse_ts(value, what)

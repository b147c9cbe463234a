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
from datetime import datetime, timedelta
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
    utcnow,
)
from remem.core.projection import State
from remem.errors import Conflict, Denied, InvalidInput, NotFound, Rejected
from remem.formation.classify import Classifier, RuleClassifier
from remem.policy.authz import Action, Decision, Target, decide
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
    from remem.writes import RememberPlan

Clock = Callable[[], datetime]

_REINFORCEABLE = frozenset({Status.ACTIVE, Status.PENDING, Status.UNVERIFIED})
_NOT_FOUND = "no note {id} is visible here (it does not exist, or this context may not see it)"


class Memory:
    """Governed memory over one data location. Thread-safe; share one per process."""

    def __init__(self, backend: Backend, *, clock: Clock | None = None) -> None:
        self.backend = backend
        self.clock: Clock = clock or utcnow
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
    def open(cls, location: str | Path, *, clock: Clock | None = None) -> Memory:
        """Open a data location: a directory path (embedded JSONL) or ``jsonl:///abs/path``."""
        return cls(open_backend(location), clock=clock)

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
        agent = self._agents.get(ctx.agent)
        if agent is None:
            # One AgentLog per agent: two threads opening it at once must not each build
            # their own (they would share the log's file handle without sharing a lock).
            with self._agents_lock:
                agent = self._agents.get(ctx.agent)
                if agent is None:
                    agent = self._agents[ctx.agent] = AgentLog(self.backend, ctx.agent)
        return agent

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
        return decide(ctx, action, target, steward=steward, agent_writer=writer)

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
            raise InvalidInput(f"{note_id!r} is not a note id (note ids look like note_01J…)")
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
        return governance.limits(self, ctx, channel)

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

        def build(state: State) -> tuple[builtins.list[Event], str]:
            note = self._visible(ctx, state, note_id)
            self._require(ctx, state, Action.CHANGE, self._target(note))
            if if_version is not None and note.version != if_version:
                raise Conflict(
                    f"note {note_id} is at version {note.version}, not {if_version}; "
                    "read it again and retry"
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
        if not isinstance(text, str):
            raise InvalidInput("text must be a string")
        text = text.strip()
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
        now = now or self.clock()
        status = note.effective_status(now)
        if status is Status.ACTIVE:
            channel = note.scope_id if note.scope is Scope.CHANNEL else None
            days = self.limits(ctx, channel).retention_days
            if days is not None and note.said_at + timedelta(days=days) <= now:
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
        return events

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

        if not isinstance(query, str):
            raise InvalidInput("query must be a string")
        if max_chars is not None and (not isinstance(max_chars, int) or max_chars < 0):
            raise InvalidInput("max_chars must be a non-negative integer")
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

        recall = self.recall(ctx, message)
        return assemble(
            recall, message, identity=identity, purpose=purpose, policy=policy, briefing=briefing
        )

    def explain(self, ctx: RunContext, run_id: str) -> Trace:
        """The stored trace of a run (nothing is recomputed), as far as ``ctx`` may see it.

        Owners and admins see all of it; a channel steward the runs in their
        channel; a participant their own runs, restricted to notes they may see.
        """
        from remem.recall.trace import Trace

        agent = self._agent(ctx)
        state = agent.sync()
        records = [r for r in agent.traces.find(run_id) if r.get("type") == "recall"]
        if not records:
            raise NotFound(f"no trace for run {run_id} is visible here")
        trace = Trace.from_dict(records[-1], agent.traces.shared)
        if ctx.role.is_admin or ctx.kind is RunKind.OWNER:
            return trace
        stewards = state.channel_policies.get(trace.channel or "", {}).get("stewards", ())
        if trace.channel and ctx.actor in stewards:
            return trace
        if ctx.actor is None or trace.actor != ctx.actor or not ctx.role.is_human:
            raise NotFound(f"no trace for run {run_id} is visible here")
        ids = {
            i
            for i in trace.candidates
            if i in state.notes and self._can_read(ctx, state, state.notes[i])
        }
        return trace.visible_to(ids)

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
        if not isinstance(content, str):
            raise InvalidInput("rule content must be a string")
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

        return undo(self, ctx, [revision_id])[0]

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]:
        """Undo every revision a run made."""
        from remem.formation.actions import undo_run

        return undo_run(self, ctx, run_id)

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport:
        """Merge live notes of one scope that say the same thing (owners and admins)."""
        from remem.formation.actions import consolidate

        return consolidate(self, ctx, dry_run=dry_run)

    # -- conversation ----------------------------------------------------------------

    def command(self, ctx: RunContext, text: str) -> Reply | None:
        """Carry out a memory command said in conversation ("forget that", "what do you
        remember about me?"); ``None`` when ``text`` is not a memory command."""
        from remem.commands.execute import run_command

        if not isinstance(text, str):
            raise InvalidInput("text must be a string")
        return run_command(self, ctx, text, self.recognizer)

    def agents(self) -> builtins.list[str]:
        """Agents that have a log in this data location."""
        return self.backend.agents()

    def trash_agent(self, ctx: RunContext, agent: str) -> str:
        """Move an agent's directory to ``.trash`` (owner only); returns where it went."""
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
            if not isinstance(scope_id, str) or not scope_id.strip():
                raise InvalidInput("scope_id must be a non-empty string id such as 'discord:123'")
            return scope_id
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

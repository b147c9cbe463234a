"""The implementation of :class:`remem.Memory` in this process: :class:`LocalMemory`.

Each method builds the call's :class:`~remem.app.kernel.Kernel` from the trusted
envelope (:meth:`Engine.kernel <remem.app.kernel.Engine.kernel>`) and runs one use case
of :mod:`remem.app`. It implements :class:`~remem.app.memory_impl.MemoryImpl`; the
contracts are in ``Memory``'s docstrings.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remem.app import (
    change,
    channel_kinds,
    commands,
    compaction,
    dm_slot,
    formation,
    member_links,
    reading,
    recall,
    remember,
    review,
    rules,
    settings,
)
from remem.app.kernel import Engine
from remem.app.subscription import LocalSubscription, Subscription
from remem.context import RunContext
from remem.core.events import Event
from remem.core.model import Basis, Kind, Note, Scope, Source, Status
from remem.core.names import is_reserved
from remem.core.text import check_id, check_str
from remem.errors import InvalidInput

if TYPE_CHECKING:
    from remem.app.commands import Reply
    from remem.app.compaction import CompactionReport
    from remem.app.dm_slot import DmSlot
    from remem.app.member_links import MemberLink
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
    from remem.tools.result import ToolResult

__all__ = ["LocalMemory"]


class LocalMemory:
    """Memory over one :class:`~remem.app.kernel.Engine` (a backend, policy, clock and
    the open agents), in this process."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def close(self) -> None:
        self.engine.close()

    def repairs(self) -> builtins.list[TornTail]:
        return self.engine.repairs()

    def limits(self, ctx: RunContext, channel: str | None = None) -> Limits:
        return settings.limits(self.engine.kernel(ctx), channel)

    def effective_policy(self, ctx: RunContext) -> dict[str, Any]:
        return settings.effective_policy(self.engine.kernel(ctx))

    def set_channel_policy(self, ctx: RunContext, channel: str, **values: Any) -> PolicyChange:
        return settings.set_channel_policy(self.engine.kernel(ctx), channel, **values)

    def channel_policy(self, ctx: RunContext, channel: str) -> dict[str, Any]:
        return settings.channel_policy(self.engine.kernel(ctx), channel)

    def set_channel_kind(
        self, ctx: RunContext, channel: str, kind: str, *, member: str | None = None
    ) -> dict[str, Any]:
        return channel_kinds.set_channel_kind(self.engine.kernel(ctx), channel, kind, member)

    def channel_kinds(self, ctx: RunContext) -> dict[str, Any]:
        return channel_kinds.channel_kinds(self.engine.kernel(ctx))

    def set_my_preferences(
        self,
        ctx: RunContext,
        *,
        inferred: bool | None = None,
        cross_channel: bool | None = None,
        tool_writes: str | None = None,
    ) -> PolicyChange:
        k = self.engine.kernel(ctx)
        return settings.set_my_preferences(
            k, inferred=inferred, cross_channel=cross_channel, tool_writes=tool_writes
        )

    def pending(self, ctx: RunContext) -> builtins.list[Note]:
        return review.pending(self.engine.kernel(ctx))

    def approve(self, ctx: RunContext, note_id: str) -> Note:
        return review.review(self.engine.kernel(ctx), note_id, approve=True)

    def reject(self, ctx: RunContext, note_id: str) -> Note:
        return review.review(self.engine.kernel(ctx), note_id, approve=False)

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
        return remember.remember(
            self.engine.kernel(ctx),
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
        return change.forget(self.engine.kernel(ctx), note_id, if_version=if_version)

    def correct(
        self, ctx: RunContext, note_id: str, text: str, *, if_version: int | None = None
    ) -> Note:
        return change.correct(self.engine.kernel(ctx), note_id, text, if_version=if_version)

    def move(
        self,
        ctx: RunContext,
        note_id: str,
        *,
        scope: Scope | str,
        scope_id: str | None = None,
        if_version: int | None = None,
    ) -> Note:
        k = self.engine.kernel(ctx)
        return change.move(k, note_id, scope=scope, scope_id=scope_id, if_version=if_version)

    def disable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return change.disable(self.engine.kernel(ctx), note_id, if_version=if_version)

    def enable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return change.enable(self.engine.kernel(ctx), note_id, if_version=if_version)

    def pin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return change.pin(self.engine.kernel(ctx), note_id, if_version=if_version)

    def unpin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return change.unpin(self.engine.kernel(ctx), note_id, if_version=if_version)

    def get(self, ctx: RunContext, note_id: str) -> Note:
        return reading.get(self.engine.kernel(ctx), note_id)

    def list(
        self,
        ctx: RunContext,
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        status: Status | str | None = "active",
        tag: str | None = None,
    ) -> builtins.list[Note]:
        k = self.engine.kernel(ctx)
        return reading.list_notes(k, scope=scope, scope_id=scope_id, status=status, tag=tag)

    def status_of(self, ctx: RunContext, note: Note, now: datetime | None = None) -> Status:
        return reading.status_of(self.engine.kernel(ctx), note, now)

    def history(self, ctx: RunContext, note_id: str) -> builtins.list[Event]:
        return reading.history(self.engine.kernel(ctx), note_id)

    def compact(self, ctx: RunContext) -> CompactionReport:
        return compaction.compact(self.engine.kernel(ctx))

    def recall(
        self,
        ctx: RunContext,
        query: str = "",
        *,
        max_chars: int | None = None,
        tag: str | None = None,
    ) -> Recall:
        return recall.recall(self.engine.kernel(ctx), query, max_chars=max_chars, tag=tag)

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
        return recall.compile_prompt(
            self.engine.kernel(ctx),
            message,
            identity=identity,
            purpose=purpose,
            policy=policy,
            briefing=briefing,
        )

    def explain(self, ctx: RunContext, run_id: str) -> Trace:
        return reading.explain(self.engine.kernel(ctx), run_id)

    def writes(self, ctx: RunContext, run_id: str) -> builtins.list[Written]:
        return reading.writes(self.engine.kernel(ctx), run_id)

    def tool_specs(
        self, ctx: RunContext, *, style: str = "openai"
    ) -> builtins.list[dict[str, Any]]:
        from remem.tools import dispatch

        self.engine.kernel(ctx)  # an envelope the host may not assert raises, as anywhere
        return dispatch.tool_specs(self, ctx, style)

    def run_tool(
        self, ctx: RunContext, name: str, arguments: dict[str, Any] | None = None
    ) -> ToolResult:
        from remem.tools import dispatch

        self.engine.kernel(ctx)  # the host's error, not the model's: raised, not rendered
        return dispatch.run_tool(self, ctx, name, arguments)

    def tags(self, ctx: RunContext) -> dict[str, int]:
        return reading.tags(self.engine.kernel(ctx))

    def subscribe(self, ctx: RunContext, *, after: int | None = None) -> Subscription:
        return LocalSubscription(self.engine.kernel(ctx), after)

    def rules(self, ctx: RunContext) -> dict[str, str]:
        return rules.rules(self.engine.kernel(ctx))

    def set_rule(self, ctx: RunContext, name: str, content: str) -> None:
        rules.set_rule(self.engine.kernel(ctx), name, content)

    def learn(
        self,
        ctx: RunContext,
        messages: Sequence[Message | dict[str, Any]],
        *,
        summary: str | None = None,
    ) -> LearnReport:
        k = self.engine.kernel(ctx)
        return formation.learn(k, messages, self.engine.classifier, summary=summary)

    def relearn(
        self, ctx: RunContext, archive: str | Path | Iterable[dict[str, Any]]
    ) -> LearnReport:
        return formation.relearn(self.engine.kernel(ctx), archive, self.engine.classifier)

    def supersede(self, ctx: RunContext, old_id: str, new_id: str) -> Note:
        return formation.supersede(self.engine.kernel(ctx), old_id, new_id)

    def revisions(self, ctx: RunContext) -> builtins.list[Revision]:
        return formation.revisions(self.engine.kernel(ctx))

    def undo(self, ctx: RunContext, revision_id: str) -> Revision:
        k = self.engine.kernel(ctx)
        return formation.undo(k, [check_id(revision_id, "revision_id")])[0]

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]:
        return formation.undo_run(self.engine.kernel(ctx), check_id(run_id, "run_id"))

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport:
        k = self.engine.kernel(ctx)
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be True or False")
        return formation.consolidate(k, dry_run=dry_run)

    def dm_slot(self, ctx: RunContext) -> DmSlot:
        return dm_slot.dm_slot(self.engine.kernel(ctx))

    def put_dm_slot(self, ctx: RunContext, blob: str, *, if_version: int) -> DmSlot:
        return dm_slot.put_dm_slot(self.engine.kernel(ctx), blob, if_version=if_version)

    def command(self, ctx: RunContext, text: str) -> Reply | None:
        k = self.engine.kernel(ctx)
        return commands.run_command(k, check_str(text, "text"), self.engine.recognizer)

    def member_link(self, ctx: RunContext) -> MemberLink:
        return member_links.member_link(self.engine.kernel(ctx))

    def agents(self) -> builtins.list[str]:
        # A name of the service's own (a doctor probe, a directory an older remem let
        # take a reserved name) is no agent of the owner's: `remem doctor` reports those.
        return [a for a in self.engine.backend.agents() if not is_reserved(a)]

    def trash_agent(self, ctx: RunContext, agent: str) -> str:
        return compaction.trash_agent(self.engine.kernel(ctx), agent)

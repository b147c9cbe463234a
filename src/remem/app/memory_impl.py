"""What :class:`remem.Memory` delegates to: the :class:`MemoryImpl` protocol.

``Memory`` is a facade: each public method is one call of the method of the same name
on its implementation, which has the same signature and the contract ``Memory``'s
docstring states. :class:`remem.app.local.LocalMemory` is the implementation in this
process (over a :class:`~remem.store.base.Backend`, through the application kernel);
an HTTP client is another (it sends the call and reads the result's JSON form, see
:mod:`remem.schema`, and the error body, see :mod:`remem.error_table`).

An implementation must raise only :class:`~remem.errors.RememError` subclasses for
bad input, refusals and store failures, as the facade promises.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from remem.core.model import Basis, Kind, Note, Scope, Source, Status

if TYPE_CHECKING:
    from remem.app.commands import Reply
    from remem.app.compaction import CompactionReport
    from remem.app.dm_slot import DmSlot
    from remem.app.member_links import MemberLink
    from remem.app.subscription import Subscription
    from remem.context import RunContext
    from remem.core.events import Event
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

__all__ = ["MemoryImpl"]


@runtime_checkable
class MemoryImpl(Protocol):
    """The public methods of :class:`remem.Memory` (but ``open``), one for one: see each
    one's docstring there."""

    def close(self) -> None: ...

    def repairs(self) -> builtins.list[TornTail]: ...

    def limits(self, ctx: RunContext, channel: str | None = None) -> Limits: ...

    def effective_policy(self, ctx: RunContext) -> dict[str, Any]: ...

    def set_channel_policy(self, ctx: RunContext, channel: str, **values: Any) -> PolicyChange: ...

    def channel_policy(self, ctx: RunContext, channel: str) -> dict[str, Any]: ...

    def set_channel_kind(
        self, ctx: RunContext, channel: str, kind: str, *, member: str | None = None
    ) -> dict[str, Any]: ...

    def channel_kinds(self, ctx: RunContext) -> dict[str, Any]: ...

    def set_my_preferences(
        self,
        ctx: RunContext,
        *,
        inferred: bool | None = None,
        cross_channel: bool | None = None,
        tool_writes: str | None = None,
    ) -> PolicyChange: ...

    def pending(self, ctx: RunContext) -> builtins.list[Note]: ...

    def approve(self, ctx: RunContext, note_id: str) -> Note: ...

    def reject(self, ctx: RunContext, note_id: str) -> Note: ...

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
    ) -> Note: ...

    def forget(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note: ...

    def correct(
        self, ctx: RunContext, note_id: str, text: str, *, if_version: int | None = None
    ) -> Note: ...

    def move(
        self,
        ctx: RunContext,
        note_id: str,
        *,
        scope: Scope | str,
        scope_id: str | None = None,
        if_version: int | None = None,
    ) -> Note: ...

    def disable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note: ...

    def enable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note: ...

    def pin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note: ...

    def unpin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note: ...

    def get(self, ctx: RunContext, note_id: str) -> Note: ...

    def list(
        self,
        ctx: RunContext,
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        status: Status | str | None = "active",
        tag: str | None = None,
    ) -> builtins.list[Note]: ...

    def status_of(self, ctx: RunContext, note: Note, now: datetime | None = None) -> Status: ...

    def history(self, ctx: RunContext, note_id: str) -> builtins.list[Event]: ...

    def compact(self, ctx: RunContext) -> CompactionReport: ...

    def recall(
        self,
        ctx: RunContext,
        query: str = "",
        *,
        max_chars: int | None = None,
        tag: str | None = None,
    ) -> Recall: ...

    def compile(
        self,
        ctx: RunContext,
        message: str,
        *,
        identity: str = "",
        purpose: str = "",
        policy: str = "",
        briefing: str = "",
    ) -> Prompt: ...

    def explain(self, ctx: RunContext, run_id: str) -> Trace: ...

    def writes(self, ctx: RunContext, run_id: str) -> builtins.list[Written]: ...

    def tool_specs(
        self, ctx: RunContext, *, style: str = "openai"
    ) -> builtins.list[dict[str, Any]]: ...

    def run_tool(
        self, ctx: RunContext, name: str, arguments: dict[str, Any] | None = None
    ) -> ToolResult: ...

    def tags(self, ctx: RunContext) -> dict[str, int]: ...

    def subscribe(self, ctx: RunContext, *, after: int | None = None) -> Subscription: ...

    def rules(self, ctx: RunContext) -> dict[str, str]: ...

    def set_rule(self, ctx: RunContext, name: str, content: str) -> None: ...

    def learn(
        self,
        ctx: RunContext,
        messages: Sequence[Message | dict[str, Any]],
        *,
        summary: str | None = None,
    ) -> LearnReport: ...

    def relearn(
        self, ctx: RunContext, archive: str | Path | Iterable[dict[str, Any]]
    ) -> LearnReport: ...

    def supersede(self, ctx: RunContext, old_id: str, new_id: str) -> Note: ...

    def revisions(self, ctx: RunContext) -> builtins.list[Revision]: ...

    def undo(self, ctx: RunContext, revision_id: str) -> Revision: ...

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]: ...

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport: ...

    def dm_slot(self, ctx: RunContext) -> DmSlot: ...

    def put_dm_slot(self, ctx: RunContext, blob: str, *, if_version: int) -> DmSlot: ...

    def command(self, ctx: RunContext, text: str) -> Reply | None: ...

    def member_link(self, ctx: RunContext) -> MemberLink: ...

    def agents(self) -> builtins.list[str]: ...

    def trash_agent(self, ctx: RunContext, agent: str) -> str: ...

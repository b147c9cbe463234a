"""``Memory``: the one facade every adapter (CLI, HTTP, MCP, web) sits on.

Every method takes the trusted :class:`~remem.context.RunContext` first and
checks each id or scope it is given against it. A write goes: resolve defaults
from the envelope → authorize → write policy (guard) → build the event with
actor and source from the envelope → durable append → projection → receipt.

Each method is one delegation to the same method of its implementation, a
:class:`~remem.app.memory_impl.MemoryImpl`: in this process
:class:`~remem.app.local.LocalMemory`, which runs a use case of :mod:`remem.app` with
the call's :class:`~remem.app.kernel.Kernel` (the envelope and its agent's live
state); an HTTP client is another. The docstrings here are the contract.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remem.app.kernel import Clock, Engine
from remem.app.local import LocalMemory
from remem.app.memory_impl import MemoryImpl
from remem.app.principal import Principal, principal_limits
from remem.app.recall import MAX_QUERY_CHARS
from remem.commands.intents import CommandRecognizer
from remem.context import Role, RunContext
from remem.core.events import Event
from remem.core.model import Basis, Kind, Note, Scope, Source, Status
from remem.errors import InvalidInput
from remem.formation.classify import Classifier
from remem.providers.embed import Embedder
from remem.store.base import Backend
from remem.store.open import open_backend

if TYPE_CHECKING:
    from remem.app.agent_state import AgentLog
    from remem.app.commands import Reply
    from remem.app.compaction import CompactionReport
    from remem.app.dm_slot import DmSlot
    from remem.app.link_settings import LinkSettings
    from remem.app.member_links import MemberLink
    from remem.app.subscription import Subscription
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

__all__ = ["MAX_QUERY_CHARS", "Memory"]


class Memory:
    """Governed memory over one data location. Thread-safe; share one per process."""

    def __init__(
        self,
        backend: Backend | MemoryImpl,
        *,
        clock: Clock | None = None,
        max_role: Role = Role.OWNER,
        classifier: Classifier | None = None,
        recognizer: CommandRecognizer | None = None,
        embedder: Embedder | bool | None = True,
    ) -> None:
        """``max_role``: the highest role this host may assert for anyone, in a run envelope
        or on a learned message's label (``Role.OWNER``, ``Role.ADMIN`` or ``Role.MEMBER``;
        a host limited to members asserts no system principal either). Anything above it
        is ``Denied`` (rule ``role_ceiling``). In-process the default trusts the host fully;
        a service sets it from the caller's credentials (a host principal's ``max_role``).
        ``clock``, ``classifier`` (what ``learn`` uses) and ``recognizer`` (what ``command``
        uses) default to the wall clock and the rule-based ones. ``embedder``: ``True``
        (default) for the bundled static model when the ``embeddings`` extra is installed,
        ``None`` for lexical recall, or an :class:`~remem.providers.embed.Embedder`
        (e.g. :func:`~remem.providers.embed.build_embedder`); the library reads no
        environment variable for it (the CLI's default is
        :func:`~remem.providers.embed.embedder_from_env`).

        ``backend`` may instead be a :class:`~remem.app.memory_impl.MemoryImpl` (e.g. an
        HTTP client): every method is then that implementation's, and the keyword
        arguments, which configure the local one, must be left out."""
        self._impl: MemoryImpl
        if isinstance(backend, MemoryImpl):
            local = (clock, classifier, recognizer) == (None, None, None) and embedder is True
            if not local or max_role is not Role.OWNER:
                raise InvalidInput(
                    "clock, max_role, classifier, recognizer and embedder configure a local "
                    "Memory: "
                    "give them to the implementation, not beside it"
                )
            self._impl = backend
        else:
            engine = Engine(
                backend,
                clock=clock,
                max_role=max_role,
                classifier=classifier,
                recognizer=recognizer,
                embedder=embedder,
            )
            self._impl = LocalMemory(engine)

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        clock: Clock | None = None,
        max_role: Role = Role.OWNER,
        classifier: Classifier | None = None,
        recognizer: CommandRecognizer | None = None,
        embedder: Embedder | bool | None = True,
        token: str | None = None,
    ) -> Memory:
        """Open a data location: a directory path (embedded JSONL) or ``jsonl:///abs/path``.
        The keyword arguments: see :meth:`__init__`.

        An ``http://`` or ``https://`` URL opens a ``remem serve`` service through
        :class:`remem.client.RemoteMemory` with ``token`` (a host token; the service's own
        settings then apply, so the other keyword arguments must be left out)."""
        if isinstance(location, str) and location.startswith(("http://", "https://")):
            from remem.client import RemoteMemory

            remote = RemoteMemory(location, token=token or "")
            return cls(
                remote,
                clock=clock,
                max_role=max_role,
                classifier=classifier,
                recognizer=recognizer,
                embedder=embedder,
            )
        if token is not None:
            raise InvalidInput("token= is for an http:// service URL, not a data location")
        return cls(
            open_backend(location),
            clock=clock,
            max_role=max_role,
            classifier=classifier,
            recognizer=recognizer,
            embedder=embedder,
        )

    def close(self) -> None:
        self._impl.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def for_principal(self, principal: Principal) -> Memory:
        """A view of this Memory for one authenticated principal (see
        :mod:`remem.app.principal`), sharing its store and caches: every method admits only
        envelopes the principal's grants cover (``Denied`` otherwise, as from
        :func:`remem.run_context`), and ``learn`` accepts message labels only up to
        ``principal.max_role``. Closing a view leaves this Memory open. A local Memory
        only: a remote one is already bound to the principal its token names."""
        return Memory(LocalMemory(self._local().for_principal(*principal_limits(principal))))

    # -- what this Memory was opened with (a local Memory; see _local) --------------------

    @property
    def backend(self) -> Backend:
        return self._local().backend

    @property
    def clock(self) -> Clock:
        return self._local().clock

    @property
    def max_role(self) -> Role:
        return self._local().max_role

    @property
    def classifier(self) -> Classifier:
        """What ``learn`` classifies with (settable)."""
        return self._local().classifier

    @classifier.setter
    def classifier(self, value: Classifier) -> None:
        self._local().classifier = value

    @property
    def recognizer(self) -> CommandRecognizer:
        """What ``command`` recognizes memory commands with (settable)."""
        return self._local().recognizer

    @recognizer.setter
    def recognizer(self, value: CommandRecognizer) -> None:
        self._local().recognizer = value

    @property
    def link_settings(self) -> LinkSettings:
        """Where member links point and how long they last (settable; ``remem serve``
        sets it from ``--public-url`` and ``--link-minutes``)."""
        return self._local().links

    @link_settings.setter
    def link_settings(self, value: LinkSettings) -> None:
        from remem.app.link_settings import LinkSettings

        if not isinstance(value, LinkSettings):
            raise InvalidInput("link_settings must be a remem.LinkSettings")
        self._local().links = value

    def _local(self) -> Engine:
        """The engine of a Memory over a local backend (``InvalidInput`` for another
        implementation: its settings are its own)."""
        if not isinstance(self._impl, LocalMemory):
            raise InvalidInput(
                f"this Memory runs on {type(self._impl).__name__}, not on a local backend: "
                "its backend, clock, role ceiling, classifier and recognizer are not here"
            )
        return self._impl.engine

    def repairs(self) -> builtins.list[TornTail]:
        """The torn tails (writes interrupted by a crash) this Memory cut from the ends of
        the logs it opened, oldest first, each saved aside (``.log``, ``.saved_to``,
        ``.size`` in bytes) so that a person can look at it (``remem doctor`` lists them).
        Empty for a clean store, and always for a backend without log files."""
        return self._impl.repairs()

    def _agent(self, ctx: RunContext) -> AgentLog:
        """The agent log of ``ctx`` (for tests and benchmarks that look inside)."""
        return self._local().kernel(ctx).agent

    def _envelope(self, ctx: RunContext) -> dict[str, Any]:
        return self._local().kernel(ctx).envelope()

    # -- policy and review -------------------------------------------------------------

    def limits(self, ctx: RunContext, channel: str | None = None) -> Limits:
        """The merged admin → agent (→ channel) limits for ``ctx``'s agent."""
        return self._impl.limits(ctx, channel)

    def effective_policy(self, ctx: RunContext) -> dict[str, Any]:
        """Each effective value with the layer it came from, plus clamps and warnings."""
        return self._impl.effective_policy(ctx)

    def set_channel_policy(self, ctx: RunContext, channel: str, **values: Any) -> PolicyChange:
        """Set a channel's policy (admins or its stewards; ``stewards=`` admins only).

        Keys: ``memory`` (bool), ``inferred`` (auto|review|off|evidence:N), ``kinds``,
        ``retention_days``, ``recall_max_notes``, ``recall_max_chars``, ``tools`` (the
        memory tools runs here may offer), ``tool_writes`` (announce|review), ``stewards``,
        and ``e2ee`` (bool: an end-to-end encrypted DM, where plaintext ``remember``,
        ``correct``, ``learn``, ``compile`` and recall queries are ``Denied``, rule
        ``e2ee_plaintext``; its memory is the encrypted slot, see :mod:`remem.e2ee`).
        A value looser than a wider layer is clamped; the result's notices say so.
        """
        return self._impl.set_channel_policy(ctx, channel, **values)

    def channel_policy(self, ctx: RunContext, channel: str) -> dict[str, Any]:
        """The stored settings of one channel."""
        return self._impl.channel_policy(ctx, channel)

    def set_channel_kind(
        self, ctx: RunContext, channel: str, kind: str, *, member: str | None = None
    ) -> dict[str, Any]:
        """Record or correct a channel's kind, ``"dm"`` (with its one ``member``) or
        ``"group"``: owners and admins only. Every dm or group envelope is checked against
        it (the first call naming a channel records it); returns the record."""
        return self._impl.set_channel_kind(ctx, channel, kind, member=member)

    def channel_kinds(self, ctx: RunContext) -> dict[str, Any]:
        """Owners and admins: ``recorded`` kinds, ``unconfirmed`` (first recorded by a
        member-capped principal) and ``unrecorded`` channels (what ``remem doctor`` lists)."""
        return self._impl.channel_kinds(ctx)

    def set_my_preferences(
        self,
        ctx: RunContext,
        *,
        inferred: bool | None = None,
        cross_channel: bool | None = None,
        tool_writes: str | None = None,
    ) -> PolicyChange:
        """The speaker's choices about memory of themselves; effective immediately.
        ``tool_writes="review"``: what a model writes with a memory tool in the speaker's
        turns waits for their review (``"announce"``: back to the policy's choice)."""
        return self._impl.set_my_preferences(
            ctx, inferred=inferred, cross_channel=cross_channel, tool_writes=tool_writes
        )

    def pending(self, ctx: RunContext) -> builtins.list[Note]:
        """Notes awaiting review that ``ctx`` may review (a person: those about them)."""
        return self._impl.pending(ctx)

    def approve(self, ctx: RunContext, note_id: str) -> Note:
        """Confirm a pending or unverified note."""
        return self._impl.approve(ctx, note_id)

    def reject(self, ctx: RunContext, note_id: str) -> Note:
        """Refuse a pending or unverified note; it is never recalled."""
        return self._impl.reject(ctx, note_id)

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
        return self._impl.remember(
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
        )

    def forget(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Tombstone a note: it leaves recall and listings; compaction erases its content."""
        return self._impl.forget(ctx, note_id, if_version=if_version)

    def correct(
        self, ctx: RunContext, note_id: str, text: str, *, if_version: int | None = None
    ) -> Note:
        """Replace a note's text; the old text stays in ``history`` (until forgotten)."""
        return self._impl.correct(ctx, note_id, text, if_version=if_version)

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
        return self._impl.move(ctx, note_id, scope=scope, scope_id=scope_id, if_version=if_version)

    def disable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Keep the note but stop recalling it."""
        return self._impl.disable(ctx, note_id, if_version=if_version)

    def enable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Return a disabled note to recall."""
        return self._impl.enable(ctx, note_id, if_version=if_version)

    def pin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Pinned notes rank first and are never retired by an automatic path."""
        return self._impl.pin(ctx, note_id, if_version=if_version)

    def unpin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        """Unpin a note."""
        return self._impl.unpin(ctx, note_id, if_version=if_version)

    # -- reads ---------------------------------------------------------------------

    def get(self, ctx: RunContext, note_id: str) -> Note:
        """One note visible to ``ctx``; ``NotFound`` otherwise (same answer as a missing id)."""
        return self._impl.get(ctx, note_id)

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
        return self._impl.list(ctx, scope=scope, scope_id=scope_id, status=status, tag=tag)

    def status_of(self, ctx: RunContext, note: Note, now: datetime | None = None) -> Status:
        """A note's status as of ``now``, counting ``expires_at`` and retention policy."""
        return self._impl.status_of(ctx, note, now)

    def history(self, ctx: RunContext, note_id: str) -> builtins.list[Event]:
        """The note's events, oldest first. A forgotten note's events no longer show its text."""
        return self._impl.history(ctx, note_id)

    def compact(self, ctx: RunContext) -> CompactionReport:
        """Physically remove forgotten, rejected and expired notes' content (owner only)."""
        return self._impl.compact(ctx)

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
        return self._impl.recall(ctx, query, max_chars=max_chars, tag=tag)

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
        return self._impl.compile(
            ctx, message, identity=identity, purpose=purpose, policy=policy, briefing=briefing
        )

    def explain(self, ctx: RunContext, run_id: str) -> Trace:
        """The stored trace of a run (nothing is recomputed), as far as ``ctx`` may see it.

        Owners and admins see all of it; a channel steward the runs in their
        channel and a participant their own runs, each restricted to the notes
        they may see.
        """
        return self._impl.explain(ctx, run_id)

    def writes(self, ctx: RunContext, run_id: str) -> builtins.list[Written]:
        """The notes run ``run_id`` changed, as far as ``ctx`` may see them, in the order the
        run first wrote each: :class:`~remem.runwrites.Written` (``.note``, ``.ops``,
        ``.op``, ``.receipt``). One entry per note, so a host attaches one "see what I
        remember" chip per reply. Covers writes made through this process, for the newest
        4,096 runs that wrote; any other run gives ``[]``."""
        return self._impl.writes(ctx, run_id)

    def tool_specs(
        self, ctx: RunContext, *, style: str = "openai"
    ) -> builtins.list[dict[str, Any]]:
        """The memory tools ``ctx``'s run may offer its model, as definitions in ``style``
        (``"openai"``: chat ``tools`` entries; ``"anthropic"``; ``"mcp"``: MCP ``Tool`` s),
        each with the JSON Schema of its arguments. By run kind: a DM turn ``remember``,
        ``forget`` and ``recall``; group, task, agent-only, system and owner runs
        ``recall``; knowledge runs and unpaired people none. Policy (``tools``, memory
        off, ``inferred = "off"``) narrows the set, never widens it. No argument names a
        user, channel, agent or scope id: identity comes from ``ctx`` only
        (see :mod:`remem.tools.specs`)."""
        return self._impl.tool_specs(ctx, style=style)

    def run_tool(
        self, ctx: RunContext, name: str, arguments: dict[str, Any] | None = None
    ) -> ToolResult:
        """Run one tool call a model made in ``ctx``'s run: check it against the tools the
        run offers and the tool's schema, execute the governed action, and return a
        :class:`~remem.tools.ToolResult` (``text`` for the model; ``notices``, the
        receipts, and ``writes``, the run's writes, for the host's chip). Every refusal
        (unknown tool, bad or extra arguments, an argument naming an identity, and the
        ``Denied`` / ``Rejected`` / ``NotFound`` the same action raises through this
        facade) is a result with ``is_error``, nothing executed; only store failures
        raise. A ``remember`` writes with basis ``inferred`` and ``source.via``
        ``"tool"``, active and announced unless policy's ``tool_writes`` is
        ``review`` (see :mod:`remem.tools.dispatch`)."""
        return self._impl.run_tool(ctx, name, arguments)

    def tags(self, ctx: RunContext) -> dict[str, int]:
        """Tag counts over live notes visible to ``ctx``."""
        return self._impl.tags(ctx)

    def subscribe(self, ctx: RunContext, *, after: int | None = None) -> Subscription:
        """Change events of ``ctx``'s agent, as far as ``ctx`` may see them: a
        :class:`~remem.app.subscription.Subscription` of :class:`~remem.Change` s
        (``note.changed``: id, version, status, op, scope, scope_id, never text, for
        notes ``ctx`` may read; ``agent.changed``: policy, review queue, rules,
        compaction). ``after``: a log position (a change's ``seq``) to resume after
        (``0``: from the start of the log; ``None``: from now on). Writes of every
        process sharing the store reach it (the log is the bus; another process's at
        the latest a poll interval later). ``poll(timeout)`` returns what is new;
        iterating follows until ``close()``; close it when done (a ``with`` block does).
        Rules changes are seen live, not replayed on a resume."""
        return self._impl.subscribe(ctx, after=after)

    # -- rules ---------------------------------------------------------------------------

    def rules(self, ctx: RunContext) -> dict[str, str]:
        """The agent's trusted rules by name (read from the backend on every call)."""
        return self._impl.rules(ctx)

    def set_rule(self, ctx: RunContext, name: str, content: str) -> None:
        """Write (or with empty content remove) a rule; owners and admins only."""
        self._impl.set_rule(ctx, name, content)

    # -- formation and belief revision (see remem.formation) ---------------------------

    def learn(
        self,
        ctx: RunContext,
        messages: Sequence[Message | dict[str, Any]],
        *,
        summary: str | None = None,
    ) -> LearnReport:
        """Learn from a conversation slice under each speaker's stored role (DESIGN §7)."""
        return self._impl.learn(ctx, messages, summary=summary)

    def relearn(
        self, ctx: RunContext, archive: str | Path | Iterable[dict[str, Any]]
    ) -> LearnReport:
        """Learn from an archived session (admins); non-admin operational items → unverified."""
        return self._impl.relearn(ctx, archive)

    def supersede(self, ctx: RunContext, old_id: str, new_id: str) -> Note:
        """Retire ``old_id`` in favour of ``new_id`` by hand (a ``manual`` revision)."""
        return self._impl.supersede(ctx, old_id, new_id)

    def revisions(self, ctx: RunContext) -> builtins.list[Revision]:
        """Every retirement of a note ``ctx`` may see, as revision rows."""
        return self._impl.revisions(ctx)

    def undo(self, ctx: RunContext, revision_id: str) -> Revision:
        """Restore a retired note; the pair is vetoed from then on."""
        return self._impl.undo(ctx, revision_id)

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]:
        """Undo every revision a run made."""
        return self._impl.undo_run(ctx, run_id)

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport:
        """Merge live notes of one scope that say the same thing (owners and admins)."""
        return self._impl.consolidate(ctx, dry_run)

    # -- end-to-end encrypted DM memory (remem.e2ee) -----------------------------------

    def dm_slot(self, ctx: RunContext) -> DmSlot:
        """The encrypted memory slot of ``ctx``'s DM thread (its channel): thread id,
        version (0: never written) and sealed blob (``None`` before the first write).
        Only runs in that DM (the member's turn or page, the host's system run in that
        thread) may read it; ``Denied`` (rule ``dm_slot_thread``) for any other. The
        server holds no key: :class:`remem.e2ee.DmMemory` opens it."""
        return self._impl.dm_slot(ctx)

    def put_dm_slot(self, ctx: RunContext, blob: str, *, if_version: int) -> DmSlot:
        """Replace the slot of ``ctx``'s DM thread with ``blob`` (sealed by the client,
        see :mod:`remem.e2ee`), written whole at the version read: ``if_version`` is
        that version (0 for a new slot), the slot's new version is ``if_version + 1``.
        ``Conflict`` (``current``: the slot now) when another write came first: read
        again, re-apply and write. ``Denied`` as for :meth:`dm_slot`."""
        return self._impl.put_dm_slot(ctx, blob, if_version=if_version)

    # -- conversation ----------------------------------------------------------------

    def command(self, ctx: RunContext, text: str) -> Reply | None:
        """Carry out a memory command said in conversation ("forget that", "what do you
        remember about me?"); ``None`` when ``text`` is not a memory command."""
        return self._impl.command(ctx, text)

    def member_link(self, ctx: RunContext) -> MemberLink:
        """A one-time link to the scratchpad page of the speaker of a DM run (``Denied``,
        rule ``member_link_dm_only``, in any other run): ``.url`` (the service's public
        address + ``/pad#token=…``), ``.token``, ``.expires_at``. Send it in that DM only:
        it is a bearer credential. Only its hash is stored; it works once, until it
        expires, for a session acting as that member in that DM with role member."""
        return self._impl.member_link(ctx)

    def agents(self) -> builtins.list[str]:
        """Agents that have a log in this data location."""
        return self._impl.agents()

    def trash_agent(self, ctx: RunContext, agent: str) -> str:
        """Move an agent's directory to ``.trash`` (owner only); returns where it went."""
        return self._impl.trash_agent(ctx, agent)

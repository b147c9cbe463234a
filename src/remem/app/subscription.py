"""Change events in this process: :meth:`remem.Memory.subscribe` and :class:`Change`.

The log is the bus: a subscription reads the changes after its position (a log
``seq``) from its agent's :class:`~remem.app.change_feed.ChangeFeed`, which holds what
this process wrote and what it read of other processes' appends when it caught up;
so writes of every process sharing the data directory reach it, at the latest one
poll interval later (this process's own writes wake it at once, and so do every host's
where the backend signals commits: :class:`~remem.store.base.ChangeSignal`, PostgreSQL's
``LISTEN``/``NOTIFY``). Each change is
filtered by what the subscriber's envelope may see *now*: a note it may not read
gives no event, however it changed.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from remem.app.change_feed import Entry, entry_of_event
from remem.app.kernel import Kernel
from remem.app.review import may_review
from remem.context import RunKind
from remem.core.projection import State
from remem.errors import InvalidInput
from remem.policy.authz import Action
from remem.store.base import ChangeSignal

if TYPE_CHECKING:
    from types import TracebackType

NOTE_CHANGED = "note.changed"
AGENT_CHANGED = "agent.changed"
#: Seconds between two reads of the log while a poll waits (other processes' writes).
POLL_INTERVAL = 0.2
#: The same where the backend wakes subscribers on every commit (a safety net only).
SIGNALLED_POLL_INTERVAL = 2.0


@dataclass(frozen=True, slots=True)
class Change:
    """One change event; never a note's text.

    ``event`` is ``"note.changed"`` (a note the subscriber may read: ``id``,
    ``version``, ``status``, ``scope``, ``scope_id`` as the note is when delivered, and
    the ``op`` that changed it) or ``"agent.changed"`` (``what``: ``"policy"`` for a
    channel's policy or a participant's choices, ``"review"`` when the review queue
    the subscriber may act on changed, ``"rules"`` when the agent's rules changed,
    ``"compacted"`` when a compaction erased notes: reload what you show). ``seq`` is
    the position in the agent's log: pass the last one seen as ``after`` to resume.
    """

    event: str
    seq: int
    op: str
    id: str | None = None
    version: int | None = None
    status: str | None = None
    scope: str | None = None
    scope_id: str | None = None
    what: str | None = None


@runtime_checkable
class Subscription(Protocol):
    """The changes after a position, for one envelope; see :meth:`remem.Memory.subscribe`.

    :meth:`poll` returns what is new (waiting up to ``timeout`` seconds for something);
    iterating yields changes as they come until :meth:`close` (from any thread) ends
    it; a ``with`` block closes it. :attr:`after` is the position read up to (changes
    the envelope may not see included): resume from it with ``subscribe(after=...)``.
    A thread may wait in ``poll(timeout)``; an event loop waits without a thread through
    :meth:`LocalSubscription.on_wake`, reading with ``poll(0)`` (:mod:`remem.http.waits`);
    ``close()`` ends either at once."""

    after: int

    def poll(self, timeout: float = 0.0) -> list[Change]: ...

    def close(self) -> None: ...

    @property
    def closed(self) -> bool: ...

    def __iter__(self) -> Iterator[Change]: ...

    def __enter__(self) -> Subscription: ...

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class _Wake(threading.Event):
    """The subscription's wake-up: a thread waiting in :meth:`LocalSubscription.poll`
    wakes, and so does every callback of :meth:`LocalSubscription.on_wake` (an event
    loop's waiter, which holds no thread while it waits)."""

    def __init__(self) -> None:
        super().__init__()
        self.callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        super().set()
        for callback in list(self.callbacks):
            callback()


class LocalSubscription:
    """A :class:`Subscription` in this process, over the agent's change feed."""

    def __init__(self, k: Kernel, after: int | None) -> None:
        if after is not None and (type(after) is not int or after < 0):
            raise InvalidInput("after must be a log position (a seq from a Change) or None")
        k.require_envelope(Action.ACCESS)
        self._k = k
        feed = k.agent.open_feed()
        self.after: int = feed.last if after is None else after
        self._wake = _Wake()
        feed.watch(self._wake)
        self._interval = POLL_INTERVAL
        if isinstance(k.backend, ChangeSignal):  # other hosts' commits wake it at once
            k.backend.watch(k.ctx.agent, self._wake)
            self._interval = SIGNALLED_POLL_INTERVAL
        self._closed = False
        self._rules = self._rules_digest()

    def poll(self, timeout: float = 0.0) -> list[Change]:
        """The changes since the last poll; waits up to ``timeout`` seconds for one
        (``[]`` when none came, or once closed)."""
        deadline = time.monotonic() + timeout
        while True:
            self._wake.clear()
            changes = self._read()
            left = deadline - time.monotonic()
            if changes or self._closed or left <= 0:
                return changes
            self._wake.wait(min(self._interval, left))

    @property
    def interval(self) -> float:
        """Seconds after which a waiter reads the log again though nothing woke it (other
        processes' appends to a log that signals nothing)."""
        return self._interval

    def on_wake(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from any thread, so it must only schedule work) whenever
        something may be new, and on :meth:`close`: lets an event loop wait for changes
        without holding a thread, reading with ``poll(0)`` when woken or every
        :attr:`interval` seconds."""
        self._wake.callbacks.append(callback)

    def __iter__(self) -> Iterator[Change]:
        while not self._closed:
            yield from self.poll(POLL_INTERVAL * 5)

    def close(self) -> None:
        """End the subscription: a waiting :meth:`poll` returns, iteration stops."""
        self._closed = True
        self._wake.set()
        self._wake.callbacks.clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> LocalSubscription:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _read(self) -> list[Change]:
        if self._closed:
            return []
        agent = self._k.agent
        with agent.lock:
            state = agent.sync()
            feed = agent.open_feed()
            entries = feed.after(self.after)
            if entries is None:  # further back than the feed holds: read the log
                entries = [entry_of_event(ev) for ev in agent.log.read_after(self.after)]
            changes = [c for e in entries for c in self._changes(state, e)]
            if entries:
                self.after = max(self.after, entries[-1].seq)
            last = agent.log.last_seq
        gone = [c for c in changes if c.what == "compacted"]
        if len(gone) > 1:  # one per erased note: one says it all
            changes = [c for c in changes if c.what != "compacted"] + gone[-1:]
        digest = self._rules_digest()
        if digest != self._rules:
            self._rules = digest
            changes.append(Change(AGENT_CHANGED, last, "rules", what="rules"))
        return changes

    def _rules_digest(self) -> str:
        rules = self._k.backend.read_rules(self._k.ctx.agent)
        return hashlib.sha256(repr(sorted(rules.items())).encode()).hexdigest()

    def _changes(self, state: State, entry: Entry) -> list[Change]:
        """The changes ``entry`` gives this envelope (none for what it may not see)."""
        k, seq, op = self._k, entry.seq, entry.op
        if op == "channel_policy":
            return [Change(AGENT_CHANGED, seq, op, what="policy")]
        if op == "preferences":
            ctx = k.ctx
            if entry.subject == ctx.actor or ctx.role.is_admin or ctx.kind is RunKind.OWNER:
                return [Change(AGENT_CHANGED, seq, op, what="policy")]
            return []
        if op == "erased":  # the note is gone: nothing says whose it was
            return [Change(AGENT_CHANGED, seq, op, what="compacted")]
        note = state.notes.get(entry.subject) if entry.subject else None
        if note is None or not k.can_read(state, note):
            return []
        out = [
            Change(
                NOTE_CHANGED,
                seq,
                op,
                id=note.id,
                version=note.version,
                status=k.status_of(note).value,
                scope=note.scope.value,
                scope_id=note.scope_id,
            )
        ]
        if entry.review and may_review(k, state, note):
            out.append(Change(AGENT_CHANGED, seq, op, what="review"))
        return out

"""Storage ports. Every backend passes the contract suites in ``remem.testing``.

Three ports, each small enough that a PostgreSQL implementation is obvious:

- the **event store** (:class:`EventStore`, per agent): append-only events. Writers
  work inside :meth:`EventStore.transaction`, which holds the agent's exclusive
  writer lock, first brings the caller up to date with what other processes
  appended (``caught_up``), and makes :meth:`LogTransaction.append` durable before
  it returns; the caller builds its events against that fresh state in between
  (``AgentLog.write(build)``). Event ids (``eid``) are idempotent: appending an
  event whose eid is in the log is a no-op, so a retried write is never
  duplicated. Every event carries a per-agent integer ``seq``, assigned at append
  (``last + 1``...), never renumbered, never given twice (a compaction may leave
  holes); ``append(events, expect_seq=n)`` asserts the log is still at ``n``
  (else ``Conflict``). Group commit (several waiting writers' batches made durable
  by one write + fsync): the writer holding the transaction runs the builds of the
  writers waiting for the same agent one after another, :meth:`LogTransaction.stage`
  s each batch (numbered after the ones before it, readable by position at once)
  and makes them all durable with one :meth:`LogTransaction.commit`
  (``AgentLog.write`` in :mod:`remem.app.agent_state`).
  :class:`EventLog` adds what a lazily folded reader needs (visits of raw records,
  reads by position, a resumable mark): positions are opaque to callers (byte
  offsets in JSONL, the seq in memory or PostgreSQL);
- the **trace store** (:class:`TraceLog`, per agent): recall traces, derived data;
- the **config store** (:class:`ConfigStore`): rules, the agent's secret, the
  policy source, and named collections of small versioned records (the
  service's tokens, member links and sessions, encrypted slots).

A :class:`Backend` is a data location offering the three, plus rebuildable
:class:`Cache` objects. Files, byte offsets, torn tails and trash directories
stay inside the JSONL adapter; nothing here takes or returns a path.
"""

from __future__ import annotations

import mmap
import threading
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from remem.core.events import Event
from remem.store.config import ConfigRecord


@dataclass(frozen=True, slots=True)
class Batch:
    """Events read since the last read. ``reset`` means: discard what you had, this is all."""

    events: list[Event] = field(default_factory=list)
    reset: bool = False


@dataclass(frozen=True, slots=True)
class TornTail:
    """A damaged tail cut from a log (a write interrupted by a crash), saved aside."""

    log: str
    saved_to: str
    size: int


class LogTransaction(Protocol):
    caught_up: Batch
    #: After :meth:`append`: the log position of each appended event, in order.
    positions: list[int]

    def append(self, events: Sequence[Event], expect_seq: int | None = None) -> list[Event]:
        """Durably append the events not already in the log; returns those appended,
        numbered (``seq``) after the log's last. ``expect_seq``: the log's last seq the
        caller built against; another one raises ``Conflict`` and nothing is written."""
        ...

    def stage(self, events: Sequence[Event]) -> list[Event]:
        """Number the events not already in the log nor staged (after the log's last seq
        and the events staged before), without making them durable yet; returns them
        (:attr:`positions`: where they will be; :meth:`EventLog.read_at` finds them
        there from now on). The next :meth:`commit` (or :meth:`append`) writes them."""
        ...

    def commit(self) -> None:
        """Make every staged event durable at once (one write and one fsync in JSONL);
        a ``StoreError`` fails them all. Staged events never committed are dropped
        when the transaction ends."""
        ...

    def rewrite(self, events: Sequence[Event]) -> list[Event]:
        """Atomically replace the whole log with ``events`` (compaction); returns them as
        written: events keep their seq, new ones (seq 0) are numbered after the last."""
        ...

    def all_events(self) -> list[Event]:
        """Every event in the log, in order (compaction reads this under the lock)."""
        ...


Visitor = Callable[[dict[str, Any], int], None]


class EventStore(Protocol):
    """One agent's events (see the module docstring)."""

    @property
    def last_seq(self) -> int:
        """The highest seq this handle has read or appended (0: none)."""
        ...

    def read_new(self) -> Batch:
        """Events appended since the previous read (by this or any other process)."""
        ...

    def read_after(self, seq: int) -> list[Event]:
        """Every event in the log whose seq is above ``seq``, in log order (catch-up)."""
        ...

    def transaction(self) -> AbstractContextManager[LogTransaction]:
        """Hold the writer lock; see the module docstring."""
        ...

    def history(self, note_id: str) -> list[Event]:
        """Every event in the log that refers to ``note_id``, in log order."""
        ...

    def find(self, eid: str) -> Event | None:
        """The event whose id is ``eid`` (staged in the open transaction included); for an
        eid a compaction erased, the ``Erased`` event that lists it; else ``None``. Exact
        inside :meth:`transaction` (after its catch-up), where a write checks it (an
        ``Idempotency-Key``, :mod:`remem.app.idempotency`); outside, as of this handle's
        last read. An eid absent from the log costs no read of it."""
        ...

    def close(self) -> None: ...


class EventLog(EventStore, Protocol):
    """An :class:`EventStore` read lazily by the embedded store's catalog state."""

    def scan_new(self, visit: Visitor, on_reset: Callable[[], None]) -> bool:
        """Like :meth:`read_new`, but hand each checked record to ``visit(data, position)``
        as a plain dict (so a caller can fold lazily); ``on_reset`` runs first when the
        log was replaced. Returns whether it was."""
        ...

    def read_at(self, positions: Sequence[int]) -> list[Event]:
        """The events at ``positions``, in the order given."""
        ...

    def mark(self) -> dict[str, Any] | None:
        """JSON data naming how far this handle has read (None before any read)."""
        ...

    def resume(self, mark: dict[str, Any]) -> bool:
        """Continue after ``mark`` if the log still holds what it covered; else False."""
        ...

    def restart(self) -> None:
        """Read from the beginning again."""
        ...

    def transaction(
        self, visit: Visitor | None = None, on_reset: Callable[[], None] | None = None
    ) -> AbstractContextManager[LogTransaction]:
        """Hold the writer lock; see the module docstring. With ``visit``, what other
        processes appended is delivered as in :meth:`scan_new` (``caught_up`` stays empty)."""
        ...

    @property
    def repairs(self) -> list[TornTail]:
        """Damage this handle repaired (torn tails cut and saved aside; none elsewhere)."""
        ...


class TraceLog(Protocol):
    """The trace store of one agent: recall traces (ids, scores, reasons; derived data)."""

    def append(self, record: dict[str, Any], shared: dict[str, Any] | None = None) -> None:
        """Append one trace record (not fsynced per record: traces are derived data).

        ``shared`` (optional) is a part many records have in common, named by its
        ``"ref"`` key (which ``record`` refers to): it is stored once per file, not
        with every record, and :meth:`shared` returns it."""
        ...

    def shared(self, ref: str) -> dict[str, Any] | None:
        """The shared part stored under ``ref`` (None when it is not in the file)."""
        ...

    def find(self, run_id: str) -> list[dict[str, Any]]:
        """Every trace record of a run, oldest first."""
        ...

    def latest(self, actor: str, channel: str | None) -> dict[str, Any] | None:
        """The newest trace of ``actor``'s runs in ``channel``."""
        ...

    def rewrite(self, records: Sequence[dict[str, Any]]) -> None: ...

    def all(self) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


class Cache(Protocol):
    """One rebuildable cache of one agent (the catalog snapshot, the note vectors).

    Derived data, never the source of truth: its reader checks it against the log,
    the backend's ``scrub`` removes it. Methods raise ``OSError``; a caller treats a
    failure as a missing cache, never as an error of the store.
    """

    #: Names the cache in log messages.
    label: str

    def size(self) -> int | None:
        """Bytes in the cache; ``None`` when there is none."""
        ...

    def mapped(self) -> AbstractContextManager[mmap.mmap | bytes | None]:
        """The content as a read-only buffer valid inside the ``with`` (``None``: none)."""
        ...

    def replace(self, chunks: Sequence[bytes]) -> None:
        """Atomically replace the content (readers see the old or the new, never half)."""
        ...

    def append(self, data: bytes) -> bool:
        """Append to the content; ``False`` (nothing written) when there is no cache."""
        ...

    def close(self) -> None: ...


#: The trace store port's name in DESIGN §3 (the same protocol).
TraceStore = TraceLog


class ConfigStore(Protocol):
    """Rules, secrets, the policy source and named collections of versioned records."""

    def read_rules(self, agent: str) -> dict[str, str]: ...

    def write_rule(self, agent: str, name: str, content: str) -> None:
        """Set rule ``name`` of ``agent`` (empty ``content``: remove it)."""
        ...

    def policy_source(self) -> tuple[str, str] | None:
        """``(text, version)`` of the policy file, or None when there is none."""
        ...

    def agent_secret(self, agent: str) -> bytes:
        """The agent's random secret for keyed hashes (32 bytes), created on first need.

        Kept outside the log and the caches (never scrubbed), the same across reopening
        and for every process using this location.
        """
        ...

    def read_record(self, collection: str, key: str) -> ConfigRecord | None:
        """The record stored under ``key`` in ``collection`` (``None``: there is none)."""
        ...

    def write_record(
        self, collection: str, key: str, value: dict[str, Any] | None, *, if_version: int | None
    ) -> int:
        """Store ``value`` (``None``: delete) and return the new version (0 once deleted).

        ``if_version``: the version the caller read (0: absent); another raises
        ``Conflict`` and nothing is written. Durable before it returns."""
        ...

    def record_keys(self, collection: str) -> list[str]:
        """Every key of ``collection``, sorted."""
        ...


@runtime_checkable
class ChangeSignal(Protocol):
    """A backend that signals commits made by any process or host (PostgreSQL's
    ``LISTEN``/``NOTIFY``): a subscriber is woken at once and reads the log for what is
    new, instead of waiting for its next poll. Backends without it are polled."""

    def watch(self, agent: str, wake: threading.Event) -> None:
        """Set ``wake`` (held weakly) whenever events of ``agent`` are committed."""
        ...


@runtime_checkable
class MemberWall(Protocol):
    """A backend whose database itself limits what the member read path may return
    (PostgreSQL's row-level security with the member's settings): a second wall behind
    the service's scope resolution. Backends without it rely on that resolution alone."""

    def readable_notes(
        self, agent: str, member: str, channel: str, note_ids: Collection[str]
    ) -> set[str]:
        """The ids among ``note_ids`` whose rows the database lets ``member`` read in
        their DM ``channel`` of ``agent`` (their user notes, that channel's notes and the
        agent-wide notes); any other id is one scope resolution should not have shown."""
        ...


class Backend(ConfigStore, Protocol):
    """A data location: every agent's events and traces, the config store, caches."""

    url: str

    def agents(self) -> list[str]: ...

    def event_log(self, agent: str) -> EventLog: ...

    def trace_log(self, agent: str) -> TraceLog: ...

    def trash_agent(self, agent: str) -> str: ...

    def scrub(self, agent: str) -> list[str]:
        """Remove derived files that may hold erased content; returns what was removed.

        This includes every :meth:`cache`: caches are rebuilt from the log, so
        erased content must not survive in them.
        """
        ...

    def cache(self, agent: str, name: str) -> Cache | None:
        """The agent's rebuildable cache called ``name`` (``[a-z0-9_]+``), kept next to
        its events; ``None`` when this backend keeps none (caches stay in memory)."""
        ...

    def close(self) -> None: ...

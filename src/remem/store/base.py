"""Storage protocols. Every backend passes the contract suite in ``remem.testing``.

An :class:`EventLog` is one agent's append-only event log. Writers work inside
:meth:`EventLog.transaction`, which holds the backend's exclusive writer lock,
first brings the caller up to date with what other processes appended
(``caught_up``), and makes :meth:`LogTransaction.append` durable before it
returns. Event ids (``eid``) are idempotent: appending an event whose eid is
already in the log is a no-op, so a retried write is never duplicated.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from remem.core.events import Event


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

    def rewrite(self, events: Sequence[Event]) -> list[Event]:
        """Atomically replace the whole log with ``events`` (compaction); returns them as
        written: events keep their seq, new ones (seq 0) are numbered after the last."""
        ...

    def all_events(self) -> list[Event]:
        """Every event in the log, in order (compaction reads this under the lock)."""
        ...


Visitor = Callable[[dict[str, Any], int], None]


class EventLog(Protocol):
    def read_new(self) -> Batch:
        """Events appended since the previous read (by this or any other process)."""
        ...

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

    def history(self, note_id: str) -> list[Event]:
        """Every event in the log that refers to ``note_id``, in log order."""
        ...

    @property
    def repairs(self) -> list[TornTail]:
        """Torn tails this handle cut and saved aside."""
        ...

    def close(self) -> None: ...


class TraceLog(Protocol):
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


class Backend(Protocol):
    """A data location holding every agent's logs, traces, rules and the policy file."""

    url: str

    def agents(self) -> list[str]: ...

    def event_log(self, agent: str) -> EventLog: ...

    def trace_log(self, agent: str) -> TraceLog: ...

    def read_rules(self, agent: str) -> dict[str, str]: ...

    def write_rule(self, agent: str, name: str, content: str) -> None: ...

    def policy_source(self) -> tuple[str, str] | None:
        """``(text, version)`` of the policy file, or None when there is none."""
        ...

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

    def agent_secret(self, agent: str) -> bytes:
        """The agent's random secret for keyed hashes (32 bytes), created on first need.

        Kept outside the log and the caches (never scrubbed), the same across reopening
        and for every process using this location.
        """
        ...

    def close(self) -> None: ...

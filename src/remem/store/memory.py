"""A backend in memory: no files, no durability, nothing shared between opens.

``Memory.open("memory://")`` makes a new private store on every call (there is no
registry of stores by name: two opens are two stores). It serves tests and anyone
embedding remem without durability, and it is the proof that the storage ports of
:mod:`remem.store.base` are not shaped like files: it passes the same contract
suites as the JSONL log (:mod:`remem.testing.contract`,
:mod:`remem.testing.memory_contract`).

Positions are the events' ``seq`` (the JSONL adapter's are byte offsets); a handle
is a cursor on one agent's shared list of events, so several handles on one
agent behave like several processes on one log.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from remem.core.events import Erased, Event, sequenced, to_dict
from remem.core.names import check_agent
from remem.errors import Conflict, NotFound
from remem.store.base import Batch, TornTail, Visitor
from remem.store.config import MemoryRecords
from remem.store.rules import check_rule_name

URL = "memory://"


class _Shelf:
    """One agent's events, shared by every handle on it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.events: list[Event] = []
        #: Where each seq is in ``events`` (a rewrite may keep events in any order).
        self.at: dict[int, int] = {}
        #: Every eid stored, and those a compaction erased (never stored again).
        self.eids: set[str] = set()
        self.last_seq = 0
        #: Bumped by each rewrite: a handle that read another generation starts over.
        self.generation = 0

    def take(self, events: Sequence[Event]) -> None:
        for ev in events:
            self.at[ev.seq] = len(self.events)
            self.events.append(ev)
            self.eids.add(ev.eid)
            if isinstance(ev, Erased):
                self.eids.update(ev.eids)
        self.last_seq = max([self.last_seq, *(ev.seq for ev in events)])


class MemoryEventLog:
    """A handle on one agent's :class:`_Shelf`; see :mod:`remem.store.base`."""

    def __init__(self, shelf: _Shelf) -> None:
        self._shelf = shelf
        self._generation = shelf.generation
        self._read = 0  # how many of the shelf's events this handle has read

    @property
    def repairs(self) -> list[TornTail]:
        return []  # nothing can tear

    @property
    def last_seq(self) -> int:
        return self._shelf.last_seq

    def _unread(self) -> Batch:
        shelf = self._shelf
        with shelf.lock:
            reset = self._generation != shelf.generation
            if reset:
                self._generation, self._read = shelf.generation, 0
            events = shelf.events[self._read :]
            self._read = len(shelf.events)
            return Batch(events, reset)

    def read_new(self) -> Batch:
        return self._unread()

    def scan_new(self, visit: Visitor, on_reset: Callable[[], None]) -> bool:
        batch = self._unread()
        if batch.reset:
            on_reset()
        for ev in batch.events:
            visit(to_dict(ev), ev.seq)
        return batch.reset

    def read_at(self, positions: Sequence[int]) -> list[Event]:
        shelf = self._shelf
        with shelf.lock:
            out = []
            for seq in positions:
                i = shelf.at.get(seq)
                if i is None:
                    raise NotFound(f"no event at seq {seq} in this in-memory log")
                out.append(shelf.events[i])
            return out

    def mark(self) -> dict[str, Any] | None:
        if not self._read:
            return None
        return {"generation": self._generation, "read": self._read}

    def resume(self, mark: dict[str, Any]) -> bool:
        shelf = self._shelf
        with shelf.lock:
            if self._read or mark["generation"] != shelf.generation:
                return False
            if mark["read"] > len(shelf.events):
                return False
            self._generation, self._read = shelf.generation, int(mark["read"])
            return True

    def restart(self) -> None:
        self._read = 0

    @contextmanager
    def transaction(
        self, visit: Visitor | None = None, on_reset: Callable[[], None] | None = None
    ) -> Iterator[_MemoryTxn]:
        with self._shelf.lock:
            if visit is None:
                caught_up = self._unread()
            else:
                reset = self.scan_new(visit, on_reset or _nothing)
                caught_up = Batch([], reset)
            yield _MemoryTxn(self, caught_up)

    def read_after(self, seq: int) -> list[Event]:
        shelf = self._shelf
        with shelf.lock:
            return [ev for ev in shelf.events if ev.seq > seq]

    def history(self, note_id: str) -> list[Event]:
        with self._shelf.lock:
            return [
                ev
                for ev in self._shelf.events
                if getattr(ev, "note_id", None) == note_id or getattr(ev, "by", None) == note_id
            ]

    def find(self, eid: str) -> Event | None:
        shelf = self._shelf
        with shelf.lock:
            if eid not in shelf.eids:
                return None
            erased = None
            for ev in shelf.events:
                if ev.eid == eid:
                    return ev
                if isinstance(ev, Erased) and eid in ev.eids:
                    erased = ev
            return erased

    def close(self) -> None:
        pass

    # -- inside a transaction (the shelf's lock held) ----------------------------------------

    def _append(self, events: Sequence[Event], expect_seq: int | None) -> list[Event]:
        shelf = self._shelf
        if expect_seq is not None and expect_seq != shelf.last_seq:
            raise Conflict(
                f"the log is at seq {shelf.last_seq}, not {expect_seq}; read what was "
                "appended since and build the events again (nothing was written)"
            )
        todo: dict[str, Event] = {}
        for ev in events:
            if ev.eid not in shelf.eids and ev.eid not in todo:
                todo[ev.eid] = ev
        appended = sequenced(list(todo.values()), shelf.last_seq + 1)
        shelf.take(appended)
        self._read = len(shelf.events)
        return appended

    def _rewrite(self, events: Sequence[Event]) -> list[Event]:
        shelf = self._shelf
        fresh = iter(sequenced([ev for ev in events if not ev.seq], shelf.last_seq + 1))
        written = [ev if ev.seq else next(fresh) for ev in events]
        last = shelf.last_seq
        shelf.events, shelf.at, shelf.eids = [], {}, set()
        shelf.take(written)
        shelf.last_seq = max(last, shelf.last_seq)  # a seq is never given twice
        shelf.generation += 1
        self._generation, self._read = shelf.generation, len(shelf.events)
        return written


def _nothing() -> None:
    pass


class _MemoryTxn:
    def __init__(self, log: MemoryEventLog, caught_up: Batch) -> None:
        self._log = log
        self.caught_up = caught_up
        self.positions: list[int] = []

    def append(self, events: Sequence[Event], expect_seq: int | None = None) -> list[Event]:
        appended = self._log._append(events, expect_seq)
        self.positions = [ev.seq for ev in appended]
        return appended

    def stage(self, events: Sequence[Event]) -> list[Event]:
        """Nothing here is durable: a staged event is appended at once (the shelf's lock
        is held, so no other handle reads it before the transaction ends)."""
        return self.append(events)

    def commit(self) -> None:
        pass

    def rewrite(self, events: Sequence[Event]) -> list[Event]:
        written = self._log._rewrite(events)
        self.positions = [ev.seq for ev in written]
        return written

    def all_events(self) -> list[Event]:
        return list(self._log._shelf.events)


class MemoryTraceLog:
    """One agent's recall traces, in a list."""

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []
        self._shared: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def append(self, record: dict[str, Any], shared: dict[str, Any] | None = None) -> None:
        with self._lock:
            if shared is not None:
                self._shared[str(shared["ref"])] = dict(shared)
            self._records.append(dict(record))

    def shared(self, ref: str) -> dict[str, Any] | None:
        return self._shared.get(ref)

    def find(self, run_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self._records if r.get("run_id") == run_id]

    def latest(self, actor: str, channel: str | None) -> dict[str, Any] | None:
        with self._lock:
            ours = [
                r for r in self._records if (r.get("actor"), r.get("channel")) == (actor, channel)
            ]
        return ours[-1] if ours else None

    def rewrite(self, records: Sequence[dict[str, Any]]) -> None:
        with self._lock:
            self._records = [dict(r) for r in records]
            refs = {r.get("ref") for r in self._records}
            self._shared = {k: v for k, v in self._shared.items() if k in refs}

    def all(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._records)

    def close(self) -> None:
        pass


class MemoryBackend:
    """Every agent's events, traces, rules and secret, in this process's memory."""

    url = URL

    def __init__(self, policy: str | None = None) -> None:
        self._shelves: dict[str, _Shelf] = {}
        self._traces: dict[str, MemoryTraceLog] = {}
        self._rules: dict[str, dict[str, str]] = {}
        self._secrets: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._policy = None if policy is None else (policy, f"memory:{hash(policy):x}")
        self._records = MemoryRecords()
        self.read_record = self._records.read_record
        self.write_record = self._records.write_record
        self.record_keys = self._records.record_keys

    def _shelf(self, agent: str) -> _Shelf:
        check_agent(agent)
        with self._lock:
            shelf = self._shelves.get(agent)
            if shelf is None:
                shelf = self._shelves[agent] = _Shelf()
            return shelf

    def agents(self) -> list[str]:
        with self._lock:
            names = {a for a, s in self._shelves.items() if s.events} | set(self._rules)
            return sorted(names)

    def event_log(self, agent: str) -> MemoryEventLog:
        return MemoryEventLog(self._shelf(agent))

    def trace_log(self, agent: str) -> MemoryTraceLog:
        check_agent(agent)
        with self._lock:
            traces = self._traces.get(agent)
            if traces is None:
                traces = self._traces[agent] = MemoryTraceLog()
            return traces

    def read_rules(self, agent: str) -> dict[str, str]:
        check_agent(agent)
        return dict(sorted(self._rules.get(agent, {}).items()))

    def write_rule(self, agent: str, name: str, content: str) -> None:
        check_agent(agent)
        check_rule_name(name)
        with self._lock:
            rules = self._rules.setdefault(agent, {})
            if content:
                rules[name] = content
            else:
                rules.pop(name, None)
                if not rules:
                    del self._rules[agent]

    def policy_source(self) -> tuple[str, str] | None:
        return self._policy

    def trash_agent(self, agent: str) -> str:
        check_agent(agent)
        with self._lock:
            if agent not in self._shelves and agent not in self._rules:
                raise NotFound(f"no agent named {agent!r} in this in-memory store")
            self._shelves.pop(agent, None)
            self._traces.pop(agent, None)
            self._rules.pop(agent, None)
            self._secrets.pop(agent, None)
        return f"{URL}(discarded {agent})"

    def scrub(self, agent: str) -> list[str]:
        return []  # no derived files: caches live in the agent's state only

    def cache(self, agent: str, name: str) -> None:
        return None  # caches stay in the agent's state

    def agent_secret(self, agent: str) -> bytes:
        check_agent(agent)
        with self._lock:
            secret = self._secrets.get(agent)
            if secret is None:
                secret = self._secrets[agent] = os.urandom(32)
            return secret

    def close(self) -> None:
        pass

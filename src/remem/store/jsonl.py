"""The embedded backend: a directory of JSONL logs (DESIGN §4.3, §5).

::

    <data>/remem.toml                     policy (optional)
    <data>/agents/<agent>/memory.jsonl    append-only event log: the source of truth
    <data>/agents/<agent>/traces.jsonl    recall traces
    <data>/agents/<agent>/rules/*.md      always-injected rules
    <data>/agents/<agent>/*.cache         rebuildable caches (note vectors); scrubbed
    <data>/agents/<agent>/memory.jsonl.torn-*     torn tails cut by a writer (kept; reported)
    <data>/agents/<agent>/memory.jsonl.damaged-*  lines cut by ``remem repair`` (kept)
    <data>/agents/<agent>/memory.jsonl.cleanup    a compaction's clean-up is unfinished
    <data>/agents/<agent>/secret.key      the agent's secret for keyed hashes (0600)
    <data>/config/<collection>/<key>.json the config store's records (remem.store.config)

Every file is created 0600 and every directory 0700 (:mod:`remem.store.private`).

Each event line carries its ``seq`` (see :mod:`remem.store.base`), written at
append. Lines of logs written before ``seq`` existed have none: a reader numbers
them by line (1-based), which is what their seq would have been, and a compaction
writes each kept line with its seq, so numbers survive the holes it leaves.

A compaction writes the ``.cleanup`` flag (durably) before it renames the new log
into place and removes it once :meth:`JsonlBackend.scrub` has run; a process that
opens an agent whose flag is there finishes the clean-up first (under the writer
lock, so never in the middle of another process's compaction).

A write whose ``fsync`` failed may be in the file: the process that reported it
withholds those events (by event id) until the store is reopened, so it never
serves a write it reported as failed. Other processes read the file as it is and
may serve them; whether they survive a crash is unknown, which is what the
error said (``StoreError.applied is None``). A write that failed before its
fsync was cut back, and no process sees it after the cut.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from remem.core.events import (
    EVENT_TYPES,
    SCHEMA_VERSION,
    Erased,
    Event,
    encode,
    from_dict,
    sequenced,
)
from remem.core.names import check_agent
from remem.errors import Conflict, CorruptLog, InvalidInput, NotFound, StoreError
from remem.store import private, syscalls
from remem.store.base import Batch, TornTail
from remem.store.cachefile import FileCache
from remem.store.config import FileRecords
from remem.store.durable import ensure_dir, fsync_dir, reason
from remem.store.jsonl_rules import read_rule_files, write_rule_file
from remem.store.jsonl_traces import JsonlTraceLog
from remem.store.scrub import cleanup_flag, scrub_folder
from remem.store.sealed import SealedFile, Visitor
from remem.store.secret import load_or_create_secret
from remem.store.staged import Staged

_RACY_NS = 2_000_000_000
_CACHE_NAME = re.compile(r"^[a-z0-9_]{1,64}$")


_log = logging.getLogger("remem.store")


def _parse_event(data: dict[str, Any], where: str) -> Event:
    return from_dict(data, where)


def _nothing() -> None:
    pass


class _Txn:
    """One transaction: holds the writer lock from ``__enter__`` to ``__exit__``."""

    caught_up: Batch

    def __init__(self, log: JsonlEventLog, visit: Visitor | None) -> None:
        self._log = log
        self._visit = visit
        self.positions: list[int] = []

    def __enter__(self) -> _Txn:
        held = self._held = self._log._file.locked(self._visit)
        records, reset = held.__enter__()
        if self._visit is None:
            self.caught_up = self._log._track(records, reset)
        else:
            self.caught_up = Batch([], reset)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._log._staged.events:  # staged and never committed: nothing was written
            self._log._staged = Staged()
        self._held.__exit__(*exc)

    def append(self, events: Sequence[Event], expect_seq: int | None = None) -> list[Event]:
        appended, self.positions = self._log._append(events, expect_seq)
        return appended

    def stage(self, events: Sequence[Event]) -> list[Event]:
        appended, self.positions = self._log._stage(events)
        return appended

    def commit(self) -> None:
        self._log._commit()

    def rewrite(self, events: Sequence[Event]) -> list[Event]:
        written, self.positions = self._log._rewrite(events)
        return written

    def all_events(self) -> list[Event]:
        return self._log._file.scan(lambda line: True)


class JsonlEventLog:
    """One agent's ``memory.jsonl``; see :mod:`remem.store.base` for the contract."""

    def __init__(self, path: Path) -> None:
        agents = path.parent.parent
        hint = (
            f"to save the damaged line aside and cut it out of the log, run: remem --data "
            f"{agents.parent} repair --agent {path.parent.name} (or restore the file from a "
            "backup)"
        )
        dirs = (path.parent, agents, agents.parent, agents.parent.parent)
        self._file: SealedFile[Event] = SealedFile(
            path, _parse_event, durable=True, repair_hint=hint, dirs=dirs, number_key="seq"
        )
        #: The highest ``seq`` read or written (the next append numbers from it).
        self._seq = 0
        #: Event ids of writes this handle reported as failed with an unknown outcome:
        #: never served by this process (they stay in ``_eids`` across resets).
        self._withheld: set[str] = set()
        self._eids: set[str] = set()
        #: Events staged in the open transaction, not yet written (see remem.store.staged).
        self._staged = Staged()
        # The wrappers last made around a caller's visitor and reset hook (see _checked).
        self._made_checked: tuple[Visitor, Visitor] | None = None
        self._made_resetter: tuple[Callable[[], None], Callable[[], None]] | None = None

    @property
    def path(self) -> Path:
        return self._file.path

    @property
    def repairs(self) -> list[TornTail]:
        return self._file.repairs

    def read_new(self) -> Batch:
        events, reset = self._file.read_new()
        return self._track(events, reset)

    def scan_new(self, visit: Visitor, on_reset: Callable[[], None]) -> bool:
        """Hand each new record to ``visit(data, position)`` without building events.

        ``on_reset`` runs first when the log was replaced; returns whether it was.
        """
        self._file.on_reset = self._resetter(on_reset)
        _, reset = self._file.read_new(self._checked(visit))
        return reset

    def _resetter(self, on_reset: Callable[[], None]) -> Callable[[], None]:
        if self._made_resetter is not None and self._made_resetter[0] == on_reset:
            return self._made_resetter[1]  # the same caller on every write: made once

        def run() -> None:
            self._eids = set(self._withheld)
            self._seq = 0
            on_reset()

        self._made_resetter = (on_reset, run)
        return run

    def _checked(self, visit: Visitor) -> Visitor:
        """Refuse newer schemas and unknown ops, skip duplicate eids, then visit."""
        if self._made_checked is not None and self._made_checked[0] == visit:
            return self._made_checked[1]
        checked = self._make_checked(visit)
        self._made_checked = (visit, checked)
        return checked

    def _make_checked(self, visit: Visitor) -> Visitor:

        # Runs once per log line when a store opens: names bound locally, one lookup each.
        def checked(
            data: dict[str, Any], pos: int, _types: Any = EVENT_TYPES, _v: int = SCHEMA_VERSION
        ) -> None:
            get = data.get
            op = get("op")
            if op not in _types or get("v", 1) != _v:
                from_dict(data, f"{self.path} at byte {pos}")  # raises the precise error
            seq = data["seq"]  # numbered by the reader when the line predates seq
            if seq > self._seq:
                self._seq = seq
            eid = get("eid")
            if type(eid) is not str:
                raise CorruptLog(f"{self.path} at byte {pos}: event without an eid")
            eids = self._eids  # replaced on reset, so looked up per record
            if eid in eids:
                return
            eids.add(eid)
            if op == "erased":
                eids.update(get("eids", ()))
            visit(data, pos)

        return checked

    def read_at(self, positions: Sequence[int]) -> list[Event]:
        """The events starting at ``positions`` (from :meth:`scan_new` or ``positions``),
        staged ones of the open transaction included."""
        staged = self._staged.at
        if not staged:
            return self._file.read_at(positions)
        on_disk = iter(self._file.read_at([p for p in positions if p not in staged]))
        return [staged[p] if p in staged else next(on_disk) for p in positions]

    def mark(self) -> dict[str, Any] | None:
        """Where reading stands (for a snapshot of what was folded up to here)."""
        mark = self._file.mark()
        if mark is None or self._withheld:
            return None  # a snapshot would hide withheld lines from the next process
        return {**mark, "seq": self._seq, "eids": list(self._eids)}  # eids: order is moot

    def restart(self) -> None:
        """Read from the start again (after an unusable snapshot)."""
        self._file.restart()
        self._eids = set(self._withheld)
        self._seq = 0

    def resume(self, mark: dict[str, Any]) -> bool:
        """Continue reading after ``mark`` if the log still starts with what it covered."""
        if not self._file.resume(mark):
            return False
        self._eids = set(mark["eids"]) | self._withheld
        self._seq = int(mark.get("seq", mark["lineno"]))
        return True

    def _track(self, events: list[Event], reset: bool) -> Batch:
        if reset:
            self._eids = set(self._withheld)
            self._seq = 0
        fresh = []
        for ev in events:
            self._seq = max(self._seq, ev.seq)
            if ev.eid not in self._eids:
                self._remember_eids(ev)
                fresh.append(ev)
        return Batch(fresh, reset)

    def _remember_eids(self, ev: Event) -> None:
        self._eids.add(ev.eid)
        if isinstance(ev, Erased):
            # Compaction removed these events; a late retry of one must not bring it back.
            self._eids.update(ev.eids)

    def transaction(
        self, visit: Visitor | None = None, on_reset: Callable[[], None] | None = None
    ) -> _Txn:
        if visit is None:
            return _Txn(self, None)
        self._file.on_reset = self._resetter(on_reset or _nothing)
        return _Txn(self, self._checked(visit))

    @property
    def last_seq(self) -> int:
        """The highest ``seq`` this handle has read or written (0: none)."""
        return self._seq

    def _append(
        self, events: Sequence[Event], expect_seq: int | None = None
    ) -> tuple[list[Event], list[int]]:
        if expect_seq is not None and expect_seq != self._seq:
            raise Conflict(
                f"{self.path}: the log is at seq {self._seq}, not {expect_seq}; read what "
                "was appended since and build the events again (nothing was written)"
            )
        if self._staged.events:  # a group's batches wait: this one is written with them
            todo, positions = self._stage(events)
            self._commit()
            return todo, positions
        # The common case, one batch alone: no staging (it costs ~10 µs a write).
        todo = []
        seen: set[str] = set()
        for ev in events:
            if ev.eid not in self._eids and ev.eid not in seen:
                seen.add(ev.eid)
                todo.append(ev)
        todo = sequenced(todo, self._seq + 1)
        if not todo:
            return todo, []
        return todo, self._write(todo, [encode(ev) for ev in todo])

    def _stage(self, events: Sequence[Event]) -> tuple[list[Event], list[int]]:
        """Number and encode the events not already in the log nor staged; written by
        the next :meth:`_commit` (the transaction's ``stage``)."""
        staged = self._staged
        todo = []
        seen = staged.eids
        for ev in events:
            if ev.eid not in self._eids and ev.eid not in seen:
                seen.add(ev.eid)
                todo.append(ev)
        todo = sequenced(todo, staged.next_seq(self._seq))
        return todo, staged.add(todo, [encode(ev) for ev in todo], self._file.end)

    def _commit(self) -> None:
        """Write every staged line with one write and one fsync (the transaction's
        ``commit``): durable before it returns, or a ``StoreError`` for them all."""
        staged, self._staged = self._staged, Staged()
        if staged.events:
            self._write(staged.events, staged.lines)

    def _write(self, todo: list[Event], lines: list[bytes]) -> list[int]:
        """Append ``lines`` (the encoded ``todo``) with one write and one fsync; returns
        their positions. A write that may be in the file after an error is withheld."""
        try:
            positions = self._file.append(lines)
        except StoreError as exc:
            if exc.applied is None:  # maybe in the file: never served by this process
                self._withheld.update(ev.eid for ev in todo)
                self._eids.update(ev.eid for ev in todo)
            raise
        for ev in todo:
            self._remember_eids(ev)
        self._seq = todo[-1].seq
        return positions

    def _rewrite(self, events: Sequence[Event]) -> tuple[list[Event], list[int]]:
        """Events kept keep their seq; new ones (seq 0: a compaction's markers) are
        numbered after the highest seq the log had, so no seq is ever given twice."""
        self._file._check_writable()
        self._flag_cleanup()
        fresh = sequenced([ev for ev in events if not ev.seq], self._seq + 1)
        it = iter(fresh)
        events = [ev if ev.seq else next(it) for ev in events]
        positions = self._file.rewrite([encode(ev) for ev in events])
        self._eids = set(self._withheld)
        for ev in events:
            self._remember_eids(ev)
        if fresh:
            self._seq = fresh[-1].seq
        return list(events), positions

    def _flag_cleanup(self) -> None:
        """Durably flag a compaction's clean-up as due, before the log is replaced."""
        flag = cleanup_flag(self.path)
        try:
            syscalls.close(private.open_file(flag, os.O_WRONLY))
        except OSError as exc:
            raise StoreError(
                f"cannot write {flag}: {reason(exc)} (nothing was compacted)"
            ) from None
        try:
            fsync_dir(flag.parent)
        except OSError as exc:
            self._file._stop(exc)  # the log's directory: no more writes until reopened
            raise StoreError(
                f"cannot write {flag}: {reason(exc)} (nothing was compacted)"
            ) from None

    def read_after(self, seq: int) -> list[Event]:
        """A scan of the whole file (catch-up by seq is rare in the embedded store)."""
        return [
            ev
            for ev in self._file.scan(lambda line: True)
            if ev.seq > seq and ev.eid not in self._withheld
        ]

    def history(self, note_id: str) -> list[Event]:
        needle = orjson.dumps(note_id)
        return [
            ev
            for ev in self._file.scan(lambda line: needle in line)
            if (getattr(ev, "note_id", None) == note_id or getattr(ev, "by", None) == note_id)
            and ev.eid not in self._withheld
        ]

    def find(self, eid: str) -> Event | None:
        """See :meth:`remem.store.base.EventStore.find`: the set of eids read says whether
        the file holds it; only then is the file scanned for it (a retry, rare)."""
        staged = self._staged
        if eid in staged.eids:
            return next(ev for ev in staged.events if ev.eid == eid)
        if eid not in self._eids or eid in self._withheld:
            return None
        needle = orjson.dumps(eid)
        erased = None
        for ev in self._file.scan(lambda line: needle in line):
            if ev.eid == eid:
                return ev
            if isinstance(ev, Erased) and eid in ev.eids:
                erased = ev
        return erased

    def close(self) -> None:
        self._file.close()


class JsonlBackend:
    """A data directory. Opening checks that it is a usable directory (never a silent fallback)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"jsonl://{root}"
        self._check_root()
        self._logs: dict[str, JsonlEventLog] = {}
        self._traces: dict[str, JsonlTraceLog] = {}
        self._handles_lock = threading.Lock()
        self._policy: tuple[tuple[int, int, int], tuple[str, str]] | None = None
        self._policy_path = root / "remem.toml"
        self._policy_name = str(self._policy_path)
        self._rules_dirs: dict[str, Path] = {}
        self._records = FileRecords(root)
        self.read_record = self._records.read_record
        self.write_record = self._records.write_record
        self.record_keys = self._records.record_keys
        self.record_collections = self._records.collections

    def _check_root(self) -> None:
        root = self.root
        if root.exists() and not root.is_dir():
            raise StoreError(f"data directory {root} is a file, not a directory")
        try:
            ensure_dir(root)  # created with its ancestors, each durable in its parent
        except StoreError as exc:
            raise StoreError(f"cannot create data directory {root}: {exc.message}") from None
        if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
            raise StoreError(
                f"data directory {root} is not readable and writable by this user; "
                "fix its permissions or choose another with --data / REMEM_DATA"
            )
        agents = root / "agents"
        if agents.exists() and not agents.is_dir():
            raise StoreError(f"{agents} should be a directory; the data directory is malformed")

    def agent_dir(self, agent: str) -> Path:
        """The agent's directory (``InvalidInput`` for a name no input may use: every
        path of this backend to an agent's files goes through here)."""
        return self.root / "agents" / check_agent(agent)

    def agents(self) -> list[str]:
        base = self.root / "agents"
        if not base.is_dir():
            return []
        try:
            names = syscalls.listdir(base)
        except OSError as exc:
            raise StoreError(f"cannot list {base}: {reason(exc)}") from None
        return sorted(n for n in names if not n.startswith(".") and (base / n).is_dir())

    def event_log(self, agent: str) -> JsonlEventLog:
        with self._handles_lock:  # one handle per log and process
            log = self._logs.get(agent)
            if log is None:
                log = JsonlEventLog(self.agent_dir(agent) / "memory.jsonl")
                if cleanup_flag(log.path).exists():
                    self._finish_cleanup(agent, log)
                self._logs[agent] = log
            return log

    def _finish_cleanup(self, agent: str, log: JsonlEventLog) -> None:
        """A compaction replaced the log but did not finish its clean-up: finish it now,
        under the writer lock (the flag is written before the rename, under that lock)."""
        with log._file._lock:
            if cleanup_flag(log.path).exists():
                removed = self.scrub(agent)
                _log.warning("finished an interrupted compaction's clean-up: %s", removed)

    def trace_log(self, agent: str) -> JsonlTraceLog:
        with self._handles_lock:
            log = self._traces.get(agent)
            if log is None:
                path = self.agent_dir(agent) / "traces.jsonl"
                log = self._traces[agent] = JsonlTraceLog(path)
            return log

    def read_rules(self, agent: str) -> dict[str, str]:
        rules_dir = self._rules_dirs.get(agent)
        if rules_dir is None:
            rules_dir = self._rules_dirs[agent] = self.agent_dir(agent) / "rules"
        return read_rule_files(rules_dir)

    def write_rule(self, agent: str, name: str, content: str) -> None:
        write_rule_file(self.agent_dir(agent) / "rules", name, content)

    def policy_source(self) -> tuple[str, str] | None:
        path = self._policy_path
        # Checked on every write: an absent file (the common case) costs one access()
        # call, where stat() would raise and catch an exception.
        if not os.access(self._policy_name, os.F_OK):
            self._policy = None
            return None
        try:
            st = os.stat(self._policy_name)
        except FileNotFoundError:
            self._policy = None
            return None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        # A stamp is trusted only once it is old enough that a same-size edit within the
        # same mtime tick cannot hide behind it (the "racy timestamp" problem git solves
        # the same way); until then the file is re-read and compared by content hash.
        settled = time.time_ns() - st.st_mtime_ns > _RACY_NS
        if self._policy is not None and self._policy[0] == stamp and settled:
            return self._policy[1]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror}") from None
        if len(data) > 1_000_000:
            raise StoreError(f"{path} is larger than 1 MB; it cannot be a policy file")
        source = (data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest())
        self._policy = (stamp, source)
        return source

    def trash_agent(self, agent: str) -> str:
        src = self.agent_dir(agent)
        if not src.is_dir():
            raise NotFound(f"no agent named {agent!r} in {self.root}")
        for cache in (self._logs.pop(agent, None), self._traces.pop(agent, None)):
            if cache is not None:
                cache.close()
        trash = self.root / ".trash"
        dest = trash / f"{agent}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
        try:
            ensure_dir(trash)
            shutil.move(str(src), str(dest))
        except OSError as exc:
            raise StoreError(
                f"cannot move {src} to {dest}: {reason(exc)} (check both; the agent may be "
                "partly moved)",
                applied=None,
            ) from None
        return str(dest)

    def scrub(self, agent: str) -> list[str]:
        """See :func:`remem.store.scrub.scrub_folder`."""
        return scrub_folder(self.agent_dir(agent), lambda: self._erased_ids(agent))

    def _erased_ids(self, agent: str) -> list[bytes]:
        """Each erased note's id as it appears in a log line (a JSON string)."""
        log = self._logs.get(agent)
        path = self.agent_dir(agent) / "memory.jsonl"
        file = log._file if log is not None else SealedFile(path, _parse_event)
        return [
            orjson.dumps(ev.note_id)
            for ev in file.scan(lambda line: b'"op":"erased"' in line)
            if isinstance(ev, Erased)
        ]

    def cache(self, agent: str, name: str) -> FileCache:
        """``<data>/agents/<agent>/<name>.cache``: a rebuildable cache next to the log."""
        if not _CACHE_NAME.match(name):
            raise InvalidInput(f"cache name {name!r} is not allowed: use [a-z0-9_]+")
        return FileCache(self.agent_dir(agent) / f"{name}.cache")

    def agent_secret(self, agent: str) -> bytes:
        """``<data>/agents/<agent>/secret.key`` (mode 0600), created on first need."""
        return load_or_create_secret(self.agent_dir(agent) / "secret.key")

    def close(self) -> None:
        for log in self._logs.values():
            log.close()
        for trace in self._traces.values():
            trace.close()
        self._logs.clear()
        self._traces.clear()
        self._records.close()

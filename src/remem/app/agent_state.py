"""One agent's live state: its event log, the projection folded from it, and the write path.

Every read first catches up with what other processes appended; every write
runs under the log's exclusive lock: catch up, validate against the fresh
state, append durably, then apply to RAM.

The recall indexes (lexical, vectors) are derived from the projection. New and
reinforced notes (this process's or another's) reach them later, never earlier:
before the next read, or once ``UNINDEXED_MAX`` of them wait, in one batch
(embedding texts together costs far less per text than one at a time, and the
write path stays short). Every other change (a forget, a correction...) reaches
them before its write returns.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson

from remem.app.change_feed import ChangeFeed
from remem.app.group_commit import WriteQueue, Writer
from remem.core.events import Event, Reinforced, Remembered
from remem.core.projection import ScopeKey, State
from remem.formation import learned_rules
from remem.providers.embed import Embedder
from remem.recall.embeddings import make_vector_index
from remem.recall.index import LexicalIndex
from remem.recall.memos import AgentMemos
from remem.runwrites import RunWrites
from remem.store.base import Backend, Cache, EventLog, LogTransaction, TraceLog
from remem.store.catalog import CatalogState

R = TypeVar("R")
#: Events whose index upkeep may wait for the next read: they add or reinforce notes.
#: Every other change reaches the indexes before its write returns.
_DEFERRABLE = frozenset({Remembered, Reinforced})
#: Events waiting for the indexes at most: the write that queues this many hands them over.
UNINDEXED_MAX = 1024
CATALOG_VERSION = 1
log = logging.getLogger("remem.store")
#: A scan that folded at least this many events writes the catalog snapshot (a log this
#: big is worth opening from it next time). The process's garbage collector is left
#: alone: pausing it during the scan and freezing what survived did not pay (measured
#: in benchmarks/README.md, "GC switches"): the catalog is dicts of strings and ints,
#: which the collector does not track.
FREEZE_AFTER = 100_000


class AgentLog:
    """Projection + log of one agent; thread-safe within a process."""

    #: Group commit (see :meth:`write`); off only to measure it (benchmarks/group_commit.py).
    group_commit = True

    def __init__(
        self, backend: Backend, agent: str, *, embedder: Embedder | bool | None = True
    ) -> None:
        self.agent = agent
        self.log: EventLog = backend.event_log(agent)
        self.traces: TraceLog = backend.trace_log(agent)
        self.lock = threading.RLock()
        #: Prepared recall candidates by run shape (see remem.recall.engine.prepare).
        self.recall_cache: dict[Any, Any] = {}
        #: The notes each recent run changed through this process (ids and ops, no text).
        self.run_writes = RunWrites()
        #: Per channel, the last (recorded kind, run kind, actor) allowed to act there
        #: (:mod:`remem.app.channel_facts`): the same envelope again needs no decision.
        self.kind_checks: dict[str, tuple[Any, ...]] = {}
        self._writes = WriteQueue()
        #: Recent changes for subscribers (kept once one subscribes: see open_feed).
        self.feed: ChangeFeed | None = None
        self._seen: list[Event] = []
        #: Events folded (durable) that the indexes have not taken yet, in log order.
        self._unindexed: list[Event] = []
        self._scanned = 0
        self._opened = False
        self._catalog: Cache | None = backend.cache(agent, "catalog")
        self.state = self._new_state()
        #: The agent's secret for keyed hashes (remem.core.veto), read when first needed.
        self.secret: Callable[[], bytes] = lambda: backend.agent_secret(agent)
        self._listeners: list[Callable[[State, Sequence[Event], bool], None]] = []
        #: Memos of text derived from notes (renderings, stems...): see forget_texts.
        self.memos = AgentMemos()
        self.lexical = LexicalIndex(stems=self.memos.stems)
        self.on_change(self._update_lexical)
        # A learned rule goes with the note it was learned from.
        self.on_change(learned_rules.follow(backend, agent))
        # Note vectors (hybrid recall) when an embedder is available; else recall is lexical.
        self.vectors = make_vector_index(backend, agent, embedder, words=self.memos.words)
        if self.vectors is not None:
            self.lexical.vectors = self.vectors
            self.on_change(self._update_vectors)

    def forget_texts(self) -> None:
        """Drop every memo of this agent that may hold words or text of notes (the
        renderings, stems, normalized texts and embedder words of :attr:`memos`, what an
        embedder of its own keeps, the prepared recalls): the one call compaction makes
        so that no erased text outlives it in memory. All are rebuilt as recalls need."""
        with self.lock:
            self.memos.clear()
            self.recall_cache.clear()
            if self.vectors is not None:
                self.vectors.forget_texts()

    def close(self) -> None:
        """Bring the indexes up to date and release their open files (the logs close with
        the backend)."""
        with self.lock:
            self._index_pending()
        if self.vectors is not None:
            self.vectors.close()

    def _update_lexical(self, state: State, events: Sequence[Event], reset: bool) -> None:
        if reset:
            self.lexical.reset()
        else:
            self.lexical.update(state, events)

    def _update_vectors(self, state: State, events: Sequence[Event], reset: bool) -> None:
        assert self.vectors is not None
        if reset:
            self.vectors.reset(state, events)
        else:
            self.vectors.update(state, events)

    def on_change(self, listener: Callable[[State, Sequence[Event], bool], None]) -> None:
        """Call ``listener(state, events, reset)`` after events are applied (index upkeep)."""
        self._listeners.append(listener)

    def _new_state(self) -> CatalogState:
        state = CatalogState(self.agent, loader=self.log.read_at)
        state.on_load = self._on_load
        state.on_evict = self._on_evict
        return state

    def _on_evict(self, key: ScopeKey) -> None:
        """A folded scope left memory: so do its indexes and prepared recalls."""
        self.lexical.evict(key)
        if self.vectors is not None:
            self.vectors.evict(key)
        for cache_key in [k for k in self.recall_cache if key in k[4]]:
            del self.recall_cache[cache_key]

    def _notify(self, events: Sequence[Event], reset: bool) -> None:
        if events or reset:
            for listener in self._listeners:
                listener(self.state, events, reset)

    def _on_load(self, events: list[Event]) -> None:
        """A scope was folded lazily: its events reach the indexes like any others."""
        self._notify(events, False)

    def open_feed(self) -> ChangeFeed:
        """The change feed, kept from now on (from the log's current end)."""
        with self.lock:
            self.sync()
            if self.feed is None:
                self.feed = ChangeFeed(self.log.last_seq)
            return self.feed

    def _visit(self, data: dict[str, Any], pos: int) -> None:
        self._scanned += 1
        if self.feed is not None:
            self.feed.take_record(data)
        folded = self.state.observe(data, pos)
        if folded:
            self._seen.extend(folded)

    def _reset(self) -> None:
        self.state = self._new_state()
        self._seen = []
        self._unindexed = []  # the reset rebuilds the indexes from the new state
        self.recall_cache.clear()

    def _catch_up(self, reset: bool) -> None:
        """Hand what a read of the log folded to the indexes (or queue it, see above)."""
        seen, self._seen = self._seen, []
        if self.feed is not None and self._scanned:
            self.feed.woken()
        if reset:  # _reset() dropped what waited: the new state is all there is
            self._notify(seen, True)
        elif seen:
            self._defer(seen)
        self._scanned = 0

    def sync(self) -> State:
        """Catch up with the log and return the current state."""
        with self.lock:
            if not self._opened:
                self._opened = True
                self._resume_catalog()
            reset = self.log.scan_new(self._visit, self._reset)
            scanned = self._scanned
            self._catch_up(reset)
            self._index_pending()
            if scanned >= FREEZE_AFTER:
                self._save_catalog()
            return self.state

    def current(self) -> State:
        """The state as last read (read first if this log never was): for facts every call
        checks, such as a channel's recorded kind, without a read of the log each time."""
        if not self._opened:
            return self.sync()
        return self.state

    # -- the catalog snapshot: a derived cache that lets a big log open fast ---------------

    def _resume_catalog(self) -> None:
        """Start from the catalog snapshot when it matches the log; otherwise scan it all."""
        cache = self._catalog
        if cache is None:
            return
        try:
            with cache.mapped() as body:
                if body is None:
                    return
                data = orjson.loads(memoryview(body))
            if data.get("v") != CATALOG_VERSION or not self.log.resume(data["log"]):
                return
            self.state.adopt(data["state"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # A damaged or foreign cache costs a full scan, never correctness.
            log.warning("ignoring catalog cache %s: %s", cache.label, exc)
            self._reset()
            self.log.restart()

    def refresh_caches(self) -> None:
        """Write the derived caches again from memory (after compaction scrubbed them), so
        that the next open of a large log need not scan it. Holds no note text."""
        with self.lock:
            self._index_pending()
            if self.log.last_seq >= FREEZE_AFTER:  # a log worth opening from the snapshot
                self._save_catalog()
            if self.vectors is not None:
                self.vectors.resnapshot()

    def _save_catalog(self) -> None:
        cache = self._catalog
        mark = self.log.mark()
        if cache is None or mark is None:
            return
        body = orjson.dumps({"v": CATALOG_VERSION, "log": mark, "state": self.state.catalog()})
        try:
            cache.replace([body])
        except OSError as exc:
            log.warning("could not write catalog cache %s: %s", cache.label, exc)

    def write(self, build: Callable[[State], tuple[list[Event], R]]) -> R:
        """Under the writer lock: catch up, ``build`` events from fresh state, append, apply.

        ``build`` may raise to abort (nothing is written). It returns the events
        to append and a result computed from them. Concurrent writes of this process
        share one write + fsync (group commit, :mod:`remem.app.group_commit`): each
        build still runs alone against fresh state (the batches built before it in its
        group included), and no write returns before the fsync that covers it.
        """
        if not self._opened:
            self.sync()  # the first read of this agent: from the catalog cache if it can
        if not self.group_commit:
            return self._write_alone(build)
        writer = Writer(build)
        group = self._writes.join(writer)
        if group == [writer]:  # no one else waits: one write, one fsync, no staging
            try:
                return self._write_alone(build)
            finally:
                self._writes.hand_over(group)
        if group:
            try:
                self._write_group(group)
            finally:
                self._writes.hand_over(group)
        result: R = writer.outcome()
        return result

    def _write_alone(self, build: Callable[[State], tuple[list[Event], R]]) -> R:
        """One write, one fsync: a writer alone in its group, and the benchmark's baseline
        with group commit off (staging costs ~10 µs a write that no one shares)."""
        with self.lock, self.log.transaction(self._visit, self._reset) as txn:
            self._catch_up(txn.caught_up.reset)
            events, result = build(self.state)
            if not events:
                return result
            appended = txn.append(events)
            # Durable now: only then does this process's projection take the events.
            for event, pos in zip(appended, txn.positions, strict=True):
                self.state.record(event, pos)
            self.run_writes.add(appended)
            if self.feed is not None:
                self.feed.take(appended)
            self._defer(appended)
            return result

    def _write_group(self, group: list[Writer]) -> None:
        """Run the group's builds in order, commit their events at once, then apply them;
        every writer of the group gets its outcome (a failed commit: its error, for all)."""
        try:
            with self.lock, self.log.transaction(self._visit, self._reset) as txn:
                self._catch_up(txn.caught_up.reset)
                unapplied = self._build_group(txn, group)
                try:
                    txn.commit()
                except BaseException:
                    if any(w.appended for w in group if w is not unapplied):
                        self._forget_group()  # some batches reached the state before it
                    raise
                # Durable now: the last batch was held back from the state until here.
                if unapplied is not None:
                    self._apply(unapplied)
                appended = [ev for writer in group for ev in writer.appended]
                self.run_writes.add(appended)
                if self.feed is not None:
                    self.feed.take(appended)
                self._defer(appended)
        except BaseException as exc:
            for writer in group:
                writer.error = exc
            if not isinstance(exc, Exception):
                raise

    def _build_group(self, txn: LogTransaction, group: list[Writer]) -> Writer | None:
        """Each writer's build in turn against the state holding the batches staged before
        it (applied before their commit, but the lock keeps every reader out until it);
        returns the writer whose batch is staged but not applied yet."""
        unapplied: Writer | None = None
        for writer in group:
            if unapplied is not None:
                self._apply(unapplied)
                unapplied = None
            try:
                events, writer.result = writer.build(self.state)
            except Exception as exc:  # this write fails alone; the others go on
                writer.error = exc
                continue
            if events:
                writer.appended = txn.stage(events)
                writer.positions = txn.positions
                unapplied = writer
        return unapplied

    def _apply(self, writer: Writer) -> None:
        for event, pos in zip(writer.appended, writer.positions, strict=True):
            self.state.record(event, pos)

    def _forget_group(self) -> None:
        """A group's commit failed after some of its batches reached the state: fold the
        log again (without them: the store withholds or cut them) and rebuild the indexes."""
        self._reset()
        self.log.restart()
        self._notify([], True)

    def _defer(self, events: list[Event]) -> None:
        """Queue folded events for the indexes; forgets, corrections and the like go
        through at once (with everything queued before them), as does a full queue."""
        self._unindexed += events
        if len(self._unindexed) >= UNINDEXED_MAX or any(type(e) not in _DEFERRABLE for e in events):
            self._index_pending()

    def index_pending(self) -> None:
        """Give the indexes what waits (a reader about to use them calls this after taking
        its candidates from the state). Takes the lock even when nothing seems to wait: a
        write in progress may have folded a note it has not queued yet."""
        with self.lock:
            self._index_pending()

    def _index_pending(self) -> None:
        """Give the indexes the queued events (called with :attr:`lock` held)."""
        events, self._unindexed = self._unindexed, []
        if not events:
            return
        try:
            self._notify(events, False)
        except BaseException:
            self._unindexed[:0] = events  # tried again by the next read or write
            raise

    def rewrite(self, build: Callable[[State, list[Event]], list[Event]]) -> list[Event]:
        """Under the writer lock, replace the log with ``build(state, all_events)`` and refold."""
        with self.lock, self.log.transaction(self._visit, self._reset) as txn:
            self._catch_up(txn.caught_up.reset)
            events = txn.rewrite(build(self.state, txn.all_events()))
            self._reset()
            for event, pos in zip(events, txn.positions, strict=True):
                self.state.record(event, pos)
            if self.feed is not None:
                self.feed.take(events)  # the compaction's markers (kept events are older)
            self._notify(events, True)
            return events

"""One agent's events in ``remem_events``: the event store port on PostgreSQL.

Positions are the events' ``seq``. A writer's transaction locks the agent's row of
``remem_agents`` (``SELECT ... FOR UPDATE``) before it reads what is new or numbers
anything, and holds it until its ``COMMIT``: seqs are given one writer at a time,
``last + 1``..., and a seq becomes visible only once every smaller one is (the
writer of ``n + 1`` could not number before ``n``'s commit released the row). So a
reader that read up to ``n`` never skips a position that a slower transaction fills
later. Event ids are unique per agent (a constraint as well as the check before
numbering); eids a compaction erased stay in ``remem_tombstones`` so a retried write
cannot bring erased content back. Staged events (group commit) wait in this handle
and are inserted together by :meth:`_PgTxn.commit`: one ``COMMIT`` for the group.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson

from remem.core.events import (
    Corrected,
    Erased,
    Event,
    NoteEvent,
    Remembered,
    from_dict,
    sequenced,
    to_dict,
)
from remem.core.model import Scope
from remem.errors import Conflict, NotFound, StoreError
from remem.store.base import Batch, TornTail, Visitor
from remem.store.postgres.changes import notify
from remem.store.postgres.connect import Pool, db_error
from remem.store.postgres.keyring import Keyring, seal, unseal

#: Bytes of event JSON a handle keeps for :meth:`PgEventLog.read_at` (what the page cache
#: is to the JSONL log: the catalog reloads scopes lazily, one ``read_at`` per scope, and
#: a round trip per scope made a 2,000-scope listing take seconds). Beyond it, the rest
#: is read from the database. Dropped with everything else on a rewrite (compaction).
TEXT_CACHE_BYTES = 256 * 1024 * 1024
#: Reads by position that missed the kept texts before the rest is read in one go.
PREFETCH_AFTER = 32

_NEW = (
    "SELECT a.generation, a.last_seq, e.data FROM remem_agents a LEFT JOIN remem_events e "
    "ON e.agent = a.agent AND (e.seq > %s OR a.generation <> %s) "
    "WHERE a.agent = %s ORDER BY e.ord"
)
_INSERT = (
    "INSERT INTO remem_events (agent, seq, ord, eid, note_id, by_id, data, subject, "
    "note_scope, note_scope_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_SCOPE_OF_NOTE = (
    "SELECT note_scope, note_scope_id FROM remem_events WHERE agent = %s AND note_id = %s "
    "AND note_scope IS NOT NULL ORDER BY ord DESC LIMIT 1"
)
_MOVE_NOTE = (
    "UPDATE remem_events SET note_scope = %s, note_scope_id = %s WHERE agent = %s AND note_id = %s"
)
_SUBJECT_OF_NOTE = (
    "SELECT subject FROM remem_events WHERE agent = %s AND note_id = %s "
    "AND subject IS NOT NULL ORDER BY ord LIMIT 1"
)


def scope_subject(ev: Remembered) -> str:
    """The subject whose data key seals a note's text: its user, its channel, or the agent."""
    if ev.scope in (Scope.USER, Scope.CHANNEL) and ev.scope_id:
        return f"{ev.scope.value}:{ev.scope_id}"
    return "agent"


class PgEventLog:
    """A handle on one agent's events; see the module docstring and :mod:`remem.store.base`."""

    def __init__(self, pool: Pool, agent: str, keyring: Keyring | None = None) -> None:
        self.pool = pool
        self.agent = agent
        self.keyring = keyring
        self._generation: int | None = None  # of what this handle read (None: nothing yet)
        self._read = 0  # the highest seq this handle read or wrote
        self._last = 0  # the agent's last seq as this handle last saw it
        self._staged: dict[int, Event] = {}
        self._texts: dict[int, str] = {}  # seq -> the event's JSON, read or written here
        self._text_bytes = 0
        self._misses = 0  # reads by position the kept texts did not answer
        self._prefetched = False
        self._txn: _PgTxn | None = None
        self._owner = 0  # the thread holding the transaction

    @property
    def repairs(self) -> list[TornTail]:
        return []  # the database keeps its own integrity

    @property
    def last_seq(self) -> int:
        return self._last

    @contextmanager
    def _reading(self) -> Iterator[Any]:
        """A connection seeing this agent's rows: the open transaction's (in its thread),
        else one of the pool's."""
        txn = self._txn
        if txn is not None and self._owner == threading.get_ident():
            yield txn.connection()
        else:
            with self.pool.scoped(self.agent) as conn:
                yield conn

    def _unread(self, conn: Any) -> tuple[list[dict[str, Any]], bool]:
        """The records after what this handle read (all of them after a rewrite)."""
        known = -1 if self._generation is None else self._generation
        rows = conn.execute(_NEW, (self._read, known, self.agent)).fetchall()
        if not rows:
            return [], False
        generation, last = int(rows[0][0]), int(rows[0][1])
        reset = self._generation is not None and generation != self._generation
        if reset:
            self._read = 0
            self.forget_texts()
        records = []
        for row in rows:
            if row[2] is not None:
                records.append(self.load(row[2]))
                self.keep_text(int(records[-1]["seq"]), row[2])
        self._generation, self._last = generation, last
        self._read = max([self._read, *(int(d["seq"]) for d in records)])
        return records, reset

    def _prefetch(self) -> None:
        """Keep every event's JSON in one read (the reads by position of a whole listing
        after resuming from a snapshot would otherwise cost a round trip per scope)."""
        self._prefetched = True
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT seq, data FROM remem_events WHERE agent = %s AND seq <= %s",
                (self.agent, self._read),
            ).fetchall()
        for seq, text in rows:
            if int(seq) not in self._texts:
                self.keep_text(int(seq), text)

    def load(self, text: str) -> dict[str, Any]:
        """An event's record from its stored JSON, its text unsealed."""
        data: dict[str, Any] = orjson.loads(text)
        if "sealed" not in data:
            return data
        sealed = data.pop("sealed")
        subject = sealed["by"]
        if self.keyring is None:
            raise StoreError(
                f"agent {self.agent!r} has sealed note text: open the store with the key "
                "file it was written with ($REMEM_KEY_FILE)"
            )
        key = self.keyring.data_key(self.agent, subject, create=False)
        if key is None:
            raise StoreError(f"the data key of {subject} (agent {self.agent!r}) was erased")
        plain = unseal(key, base64.b64decode(sealed["ct"]), data["eid"].encode())
        data[sealed["field"]] = plain.decode()
        return data

    def keep_text(self, seq: int, text: str) -> None:
        """Keep an event's JSON for :meth:`read_at` (within :data:`TEXT_CACHE_BYTES`)."""
        if self._text_bytes + len(text) <= TEXT_CACHE_BYTES:
            self._texts[seq] = text
            self._text_bytes += len(text)

    def forget_texts(self) -> None:
        self._texts, self._text_bytes = {}, 0
        self._misses, self._prefetched = 0, False

    def read_new(self) -> Batch:
        with self._reading() as conn:
            records, reset = self._unread(conn)
        return Batch([from_dict(d) for d in records], reset)

    def scan_new(self, visit: Visitor, on_reset: Callable[[], None]) -> bool:
        with self._reading() as conn:
            records, reset = self._unread(conn)
        if reset:
            on_reset()
        for data in records:
            visit(data, int(data["seq"]))
        return reset

    def read_at(self, positions: Sequence[int]) -> list[Event]:
        if not positions:
            return []
        asked = set(positions)
        found = {seq: ev for seq, ev in self._staged.items() if seq in asked}
        for seq in asked - found.keys():
            text = self._texts.get(seq)
            if text is not None:
                found[seq] = from_dict(self.load(text))
        wanted = [p for p in positions if p not in found]
        if wanted and not self._prefetched:
            self._misses += 1
            if self._misses > PREFETCH_AFTER:
                self._prefetch()
                return self.read_at(positions)
        if wanted:
            with self._reading() as conn:
                rows = conn.execute(
                    "SELECT seq, data FROM remem_events WHERE agent = %s AND seq = ANY(%s)",
                    (self.agent, wanted),
                ).fetchall()
            found.update((int(seq), from_dict(self.load(data))) for seq, data in rows)
        missing = [p for p in positions if p not in found]
        if missing:
            raise NotFound(f"no event at seq {missing[0]} of agent {self.agent!r}")
        return [found[p] for p in positions]

    def mark(self) -> dict[str, Any] | None:
        if not self._read or self._generation is None:
            return None
        return {"generation": self._generation, "seq": self._read}

    def resume(self, mark: dict[str, Any]) -> bool:
        if self._read:
            return False
        with self._reading() as conn:
            row = conn.execute(
                "SELECT generation, last_seq FROM remem_agents WHERE agent = %s", (self.agent,)
            ).fetchone()
        if row is None or int(mark["generation"]) != row[0] or int(mark["seq"]) > row[1]:
            return False
        self._generation, self._read, self._last = int(row[0]), int(mark["seq"]), int(row[1])
        return True

    def restart(self) -> None:
        self._read = 0
        self.forget_texts()

    @contextmanager
    def transaction(
        self, visit: Visitor | None = None, on_reset: Callable[[], None] | None = None
    ) -> Iterator[_PgTxn]:
        with self.pool.connection() as conn:
            txn = _PgTxn(self, conn)
            self._txn, self._owner = txn, threading.get_ident()
            try:
                txn.lock()
                records, reset = self._unread(conn)
                if visit is None:
                    txn.caught_up = Batch([from_dict(d) for d in records], reset)
                else:
                    if reset:
                        (on_reset or _nothing)()
                    for data in records:
                        visit(data, int(data["seq"]))
                    txn.caught_up = Batch([], reset)
                yield txn
                txn.finish()
            except self.pool.errors as exc:
                conn.rollback()
                raise db_error(exc, self.pool.url) from None
            except BaseException:
                conn.rollback()
                raise
            finally:
                self._txn, self._staged = None, {}

    def read_after(self, seq: int) -> list[Event]:
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT data FROM remem_events WHERE agent = %s AND seq > %s ORDER BY ord",
                (self.agent, seq),
            ).fetchall()
        return [from_dict(self.load(r[0])) for r in rows]

    def history(self, note_id: str) -> list[Event]:
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT data FROM remem_events WHERE agent = %s AND (note_id = %s OR by_id = %s) "
                "ORDER BY ord",
                (self.agent, note_id, note_id),
            ).fetchall()
        return [from_dict(self.load(r[0])) for r in rows]

    def find(self, eid: str) -> Event | None:
        """See :meth:`remem.store.base.EventStore.find`: one lookup by the unique
        ``(agent, eid)`` index, on the open transaction's connection in its thread (the
        ``Erased`` event listing a tombstoned eid is searched for only when one is)."""
        for ev in self._staged.values():
            if ev.eid == eid:
                return ev
        with self._reading() as conn:
            row = conn.execute(
                "SELECT data FROM remem_events WHERE agent = %s AND eid = %s UNION ALL "
                "SELECT NULL FROM remem_tombstones WHERE agent = %s AND eid = %s LIMIT 1",
                (self.agent, eid, self.agent, eid),
            ).fetchone()
            if row is None:
                return None
            if row[0] is not None:
                return from_dict(self.load(row[0]))
            rows = conn.execute(
                "SELECT data FROM remem_events WHERE agent = %s AND strpos(data, %s) > 0 "
                'AND strpos(data, \'"op":"erased"\') > 0',
                (self.agent, orjson.dumps(eid).decode()),
            ).fetchall()
        for (data,) in rows:
            ev = from_dict(self.load(data))
            if isinstance(ev, Erased) and eid in ev.eids:
                return ev
        return None

    def close(self) -> None:
        pass  # the connections belong to the backend's pool


def _nothing() -> None:
    pass


class _PgTxn:
    """A writer's transaction: the agent's row locked until each commit (and again, on
    the next use, after one)."""

    def __init__(self, log: PgEventLog, conn: Any) -> None:
        self._log = log
        self._conn = conn
        self.caught_up = Batch()
        self.positions: list[int] = []
        self._locked = False
        self._last = 0  # the agent's last seq, under the lock
        self._staged: list[Event] = []
        self._subjects: dict[str, str] = {}  # note id -> the subject sealing its text
        # note id -> its scope and scope id (for the member wall), within one transaction
        self._scopes: dict[str, tuple[str | None, str | None]] = {}
        self._moved: set[str] = set()  # notes whose scope an event of this commit changed

    def connection(self) -> Any:
        self.lock()
        return self._conn

    def lock(self) -> None:
        """Begin a transaction that holds the agent's row (creating it on first use)."""
        if self._locked:
            return
        conn, agent = self._conn, self._log.agent
        self._scopes, self._moved = {}, set()  # another host may have moved a note since
        self._log.pool.set_scope(conn, agent)
        lock = "SELECT last_seq FROM remem_agents WHERE agent = %s FOR UPDATE"
        row = conn.execute(lock, (agent,)).fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO remem_agents (agent) VALUES (%s) ON CONFLICT DO NOTHING", (agent,)
            )
            row = conn.execute(lock, (agent,)).fetchone()
        self._last, self._locked = int(row[0]), True

    def finish(self) -> None:
        """End the transaction (staged events never committed are dropped)."""
        if self._locked:
            self._conn.commit()
            self._locked = False

    def _row(self, ev: Event, ord_: int) -> tuple[Any, ...]:
        """The row of ``ev``: its text sealed under its subject's data key (with a keyring)."""
        data = to_dict(ev)
        agent, keyring, subject = self._log.agent, self._log.keyring, None
        if keyring is not None and isinstance(ev, Remembered | Corrected) and ev.text is not None:
            subject = self._subject(ev)
            key = keyring.data_key(agent, subject, create=True)
            assert key is not None
            field = "note" if isinstance(ev, Remembered) else "text"  # the stored name
            sealed = seal(key, data.pop(field).encode(), ev.eid.encode())
            data["sealed"] = {
                "field": field,
                "by": subject,
                "ct": base64.b64encode(sealed).decode(),
            }
        text = orjson.dumps(data, option=orjson.OPT_UTC_Z).decode()
        note_id, by = getattr(ev, "note_id", None), getattr(ev, "by", None)
        return (agent, ev.seq, ord_, ev.eid, note_id, by, text, subject, *self._scope(ev))

    def _scope(self, ev: Event) -> tuple[str | None, str | None]:
        """The scope of ``ev``'s note after ``ev`` (``None``s for an event about no note)."""
        if not isinstance(ev, NoteEvent):
            return None, None
        if isinstance(ev, Remembered | Corrected) and ev.scope is not None:
            if isinstance(ev, Corrected):
                self._moved.add(ev.note_id)
            self._scopes[ev.note_id] = (ev.scope.value, ev.scope_id)
        elif ev.note_id not in self._scopes:
            row = self._conn.execute(_SCOPE_OF_NOTE, (self._log.agent, ev.note_id)).fetchone()
            self._scopes[ev.note_id] = (row[0], row[1]) if row else (None, None)
        return self._scopes[ev.note_id]

    def _rows(self, events: Sequence[Event], ords: Sequence[int]) -> list[tuple[Any, ...]]:
        """The rows of ``events``, every row of a note with the note's scope after them all
        (a move in the same batch included: the member wall reads the note's scope now)."""
        rows = [self._row(ev, o) for ev, o in zip(events, ords, strict=True)]
        return [r if r[4] is None else (*r[:8], *self._scopes[r[4]]) for r in rows]

    def _follow_moves(self) -> None:
        """Give the earlier rows of every note this commit moved the note's new scope."""
        agent, moved, self._moved = self._log.agent, self._moved, set()
        for note_id in sorted(moved):
            scope = self._scopes[note_id]
            self._conn.execute(_MOVE_NOTE, (*scope, agent, note_id))

    def _subject(self, ev: Remembered | Corrected) -> str:
        if isinstance(ev, Remembered):
            self._subjects[ev.note_id] = scope_subject(ev)
        elif ev.note_id not in self._subjects:
            row = self._conn.execute(_SUBJECT_OF_NOTE, (self._log.agent, ev.note_id)).fetchone()
            self._subjects[ev.note_id] = row[0] if row else "agent"
        return self._subjects[ev.note_id]

    def _fresh(self, events: Sequence[Event]) -> list[Event]:
        """The events whose eids are in neither the log, its tombstones nor the staging."""
        todo: dict[str, Event] = {}
        staged = {ev.eid for ev in self._staged}
        for ev in events:
            if ev.eid not in staged and ev.eid not in todo:
                todo[ev.eid] = ev
        if not todo:
            return []
        eids = list(todo)
        rows = self._conn.execute(
            "SELECT eid FROM remem_events WHERE agent = %s AND eid = ANY(%s) "
            "UNION ALL SELECT eid FROM remem_tombstones WHERE agent = %s AND eid = ANY(%s)",
            (self._log.agent, eids, self._log.agent, eids),
        ).fetchall()
        for (eid,) in rows:
            todo.pop(eid, None)
        return list(todo.values())

    def _next(self) -> int:
        return self._last + len(self._staged) + 1

    def stage(self, events: Sequence[Event]) -> list[Event]:
        self.lock()
        numbered = sequenced(self._fresh(events), self._next())
        self._staged += numbered
        self._log._staged.update((ev.seq, ev) for ev in numbered)
        self.positions = [ev.seq for ev in numbered]
        return numbered

    def append(self, events: Sequence[Event], expect_seq: int | None = None) -> list[Event]:
        self.lock()
        if expect_seq is not None and expect_seq != self._last + len(self._staged):
            raise Conflict(
                f"the log is at seq {self._last}, not {expect_seq}; read what was appended "
                "since and build the events again (nothing was written)"
            )
        appended = self.stage(events)  # sets positions; commit() leaves them
        self.commit()
        return appended

    def commit(self) -> None:
        staged, self._staged = self._staged, []
        if not staged:
            return
        self.lock()
        agent, conn = self._log.agent, self._conn
        rows = self._rows(staged, [ev.seq for ev in staged])
        with conn.cursor() as cur:
            cur.executemany(_INSERT, rows)
        self._follow_moves()
        self._tombstones(staged)
        last = staged[-1].seq
        conn.execute("UPDATE remem_agents SET last_seq = %s WHERE agent = %s", (last, agent))
        notify(conn, agent, last)
        conn.commit()
        self._locked = False
        log = self._log
        log._read, log._last, self._last = max(log._read, last), last, last
        for row in rows:
            log.keep_text(row[1], row[6])

    def _tombstones(self, events: Sequence[Event]) -> None:
        erased = [
            (self._log.agent, eid) for ev in events if isinstance(ev, Erased) for eid in ev.eids
        ]
        if erased:
            with self._conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO remem_tombstones (agent, eid) VALUES (%s, %s) "
                    "ON CONFLICT DO NOTHING",
                    erased,
                )

    def rewrite(self, events: Sequence[Event]) -> list[Event]:
        self.lock()
        self._staged = []
        agent, conn = self._log.agent, self._conn
        fresh = iter(sequenced([ev for ev in events if not ev.seq], self._last + 1))
        written = [ev if ev.seq else next(fresh) for ev in events]
        last = max([self._last, *(ev.seq for ev in written)])
        rows = self._rows(written, range(1, len(written) + 1))  # subjects: read first
        conn.execute("DELETE FROM remem_events WHERE agent = %s", (agent,))
        conn.execute("DELETE FROM remem_tombstones WHERE agent = %s", (agent,))
        with conn.cursor() as cur:
            cur.executemany(_INSERT, rows)
        self._moved = set()  # every row of the agent was written with its note's scope now
        self._tombstones(written)
        # A subject none of whose text is left loses its data key (crypto-shredding).
        shredded = [
            r[0]
            for r in conn.execute(
                "DELETE FROM remem_keys k WHERE k.agent = %s AND NOT EXISTS (SELECT 1 FROM "
                "remem_events e WHERE e.agent = k.agent AND e.subject = k.subject) "
                "RETURNING k.subject",
                (agent,),
            ).fetchall()
        ]
        row = conn.execute(
            "UPDATE remem_agents SET last_seq = %s, generation = generation + 1 "
            "WHERE agent = %s RETURNING generation",
            (last, agent),
        ).fetchone()
        notify(conn, agent, last)
        conn.commit()
        self._locked = False
        log = self._log
        log._generation, log._read, log._last, self._last = int(row[0]), last, last, last
        log.forget_texts()  # what the rewrite dropped (erased content) goes from memory too
        for kept in rows:
            log.keep_text(kept[1], kept[6])
        self.positions = [ev.seq for ev in written]
        if shredded and log.keyring is not None:
            log.keyring.erased(agent, sorted(shredded))  # the ledger, then a KEK rotation
        return written

    def all_events(self) -> list[Event]:
        self.lock()
        rows = self._conn.execute(
            "SELECT data FROM remem_events WHERE agent = %s ORDER BY ord", (self._log.agent,)
        ).fetchall()
        return [from_dict(self._log.load(r[0])) for r in rows]

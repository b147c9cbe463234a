"""A writer process for the crash test (tests/store/test_crash.py); SIGKILLed at random.

    python crash_writer.py DATA AGENT WRITER_ID ACK_DIR MODE SEED START SECONDS

``MODE`` is ``raw`` (events straight into ``JsonlEventLog``, records from
~150 bytes to 1 MB; the budget for big ones ramps up from wall time START over
SECONDS) or ``memory`` (``Memory.remember`` with short texts).

Before each write the writer saves what it is about to write (its *intent*)
in ``ACK_DIR/<id>.intent`` by an atomic rename; after the append returns it
appends one JSON line to ``ACK_DIR/<id>.ack`` and fsyncs it. Only acknowledged
writes are promised. On start, a writer whose last intent has no
acknowledgement retries exactly that write first (same eid, same note id, same
bytes; for ``memory``, the same text in the same scope), which is what
exercises idempotency.

Fault injection (raw writers): writes larger than 32 KiB go to the kernel in
32 KiB pieces with a short pause between them, as a slow disk or a signal
would split them. The store handles short writes; the pauses widen the window
in which a SIGKILL leaves a torn tail.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from remem.core.events import Event, Pinned, Remembered, Unpinned
from remem.core.ids import new_id
from remem.core.model import Basis, Kind, Scope

BIG_BUDGET = 24 * 1024 * 1024  # records over 10 KB only while the log is under this (ramped)
_PIECE = 32 * 1024
_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india")


def _slow_writes() -> None:
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        if len(data) <= _PIECE:
            return real_write(fd, data)
        n = real_write(fd, memoryview(data)[:_PIECE])
        time.sleep(0.001)
        return n

    from remem.store import syscalls

    syscalls.write = write  # the store's writes go through this seam


class Acks:
    def __init__(self, ack_dir: Path, writer: str) -> None:
        self.path = ack_dir / f"{writer}.ack"
        self.intent_path = ack_dir / f"{writer}.intent"
        self.done: set[str] = set()
        if self.path.exists():
            for line in self.path.read_bytes().splitlines():
                try:
                    self.done.add(json.loads(line)["key"])
                except (ValueError, KeyError):
                    continue  # killed while writing this ack line: it was never acknowledged
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def intend(self, intent: dict[str, Any]) -> None:
        tmp = self.intent_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(intent))
        os.replace(tmp, self.intent_path)

    def pending(self) -> dict[str, Any] | None:
        try:
            intent: dict[str, Any] = json.loads(self.intent_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return None if intent["key"] in self.done else intent

    def ack(self, record: dict[str, Any]) -> None:
        os.write(self.fd, json.dumps(record).encode() + b"\n")
        os.fsync(self.fd)
        self.done.add(record["key"])


def _text(key: str, size: int) -> str:
    unit = f"{key} "
    return (unit * (size // len(unit) + 1))[:size]


def _record_size(rng: random.Random, log_size: int, ramp: tuple[float, float]) -> int:
    """Line sizes from ~150 bytes (pins) to 1 MB, skewed small.

    Big records (which every restarted writer must read back, and ``Memory`` must
    fold) stay within a budget that grows over the run, so they keep coming
    until the end instead of using the budget up in the first seconds.
    """
    start, seconds = ramp
    budget = BIG_BUDGET * min(1.0, max(0.0, time.time() - start) / seconds) + 1_000_000
    big_ok = log_size < budget
    r = rng.random()
    if big_ok and r < 0.04:
        return 1_000_000
    if big_ok and r < 0.20:
        return int(math.exp(rng.uniform(math.log(10_000), math.log(1_000_000))))
    return int(math.exp(rng.uniform(math.log(100), math.log(10_000))))


def _raw_event(intent: dict[str, Any]) -> Event:
    ts = datetime.fromisoformat(intent["ts"])
    if intent["op"] in ("pin", "unpin"):
        cls = Pinned if intent["op"] == "pin" else Unpinned
        return cls(eid=intent["key"], ts=ts, note_id=intent["note_id"])
    return Remembered(
        eid=intent["key"],
        ts=ts,
        note_id=intent["note_id"],
        scope=Scope.USER,
        scope_id=intent["scope_id"],
        kind=Kind.FACT,
        text=_text(intent["key"], intent["text_size"]),
        basis=Basis.EXPLICIT,
    )


def run_raw(
    data: Path, agent: str, writer: str, acks: Acks, rng: random.Random, ramp: tuple[float, float]
) -> None:
    from remem.store.jsonl import JsonlEventLog

    _slow_writes()
    path = data / "agents" / agent / "memory.jsonl"
    log = JsonlEventLog(path)
    mine: list[str] = []

    def write(intent: dict[str, Any], retry: bool) -> None:
        with log.transaction() as txn:
            stored = txn.append([_raw_event(intent)])
        # Acknowledged only now, after the append returned (durable).
        acks.ack(
            {
                "key": intent["key"],
                "note_id": intent["note_id"],
                "op": intent["op"],
                "retry": ("stored" if stored else "duplicate") if retry else None,
            }
        )

    intent = acks.pending()
    if intent is not None:
        write(intent, retry=True)
    while True:
        try:
            log_size = path.stat().st_size
        except FileNotFoundError:
            log_size = 0
        size = _record_size(rng, log_size, ramp)
        ts = datetime.now(UTC).isoformat()
        if size < 400 and mine:
            intent = {
                "key": new_id("ev"),
                "ts": ts,
                "op": rng.choice(["pin", "unpin"]),
                "note_id": rng.choice(mine),
            }
        else:
            intent = {
                "key": new_id("ev"),
                "ts": ts,
                "op": "remember",
                "note_id": new_id("note"),
                "scope_id": f"crash:{writer}",
                "text_size": max(1, size - 330),
            }
            mine.append(intent["note_id"])
        acks.intend(intent)
        write(intent, retry=False)


def _memory_retry(evidence: int) -> str:
    # The retried text either was not written (a new note) or reinforced the note it made.
    return "duplicate" if evidence > 1 else "stored"


def run_memory(data: Path, agent: str, writer: str, acks: Acks, rng: random.Random) -> None:
    from remem import Memory, RunContext

    mem = Memory.open(data)

    def write(intent: dict[str, Any], retry: bool) -> None:
        user = intent["user"]  # a DM has one member: one DM channel per user
        ctx = RunContext.dm(agent=agent, channel=f"dm:{user}", user=user)
        note = mem.remember(ctx, intent["text"], kind="fact")
        acks.ack(
            {
                "key": intent["key"],
                "note_id": note.id,
                "text": intent["text"],
                "user": intent["user"],
                "retry": _memory_retry(note.evidence) if retry else None,
            }
        )

    intent = acks.pending()
    if intent is not None:
        write(intent, retry=True)
    counter = len(acks.done)
    while True:
        counter += 1
        key = f"{writer}-{os.getpid()}-{counter}"
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 70)))
        intent = {
            "key": key,
            "user": f"crash:{writer}-{counter // 500}",
            "text": f"Crash item {key} says {words}."[:500],
        }
        acks.intend(intent)
        write(intent, retry=False)


def main() -> None:
    data, agent, writer, ack_dir, mode, seed, start, seconds = sys.argv[1:9]
    rng = random.Random(f"{seed}-{os.getpid()}")
    acks = Acks(Path(ack_dir), writer)
    if mode == "raw":
        run_raw(Path(data), agent, writer, acks, rng, (float(start), float(seconds)))
    elif mode == "memory":
        run_memory(Path(data), agent, writer, acks, rng)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()

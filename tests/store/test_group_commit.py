"""Group commit: concurrent writes to one agent share one write + fsync, and each is
acknowledged only after the fsync that covers it (DESIGN §5)."""

from __future__ import annotations

import errno
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from remem import Memory, RunContext
from remem.errors import NotFound, StoreError
from remem.store import syscalls

AGENT = "gc"
OWNER = RunContext.owner(AGENT)
THREADS = 32
PER_THREAD = 5


def _writers(mem: Memory, threads: int, per_thread: int, prefix: str) -> dict[str, Any]:
    """``threads`` threads each remembering ``per_thread`` distinct notes at once; the
    ids acknowledged and the errors raised, by text."""
    acked: dict[str, str] = {}
    errors: dict[str, BaseException] = {}
    start = threading.Barrier(threads)

    def work(i: int) -> None:
        start.wait()
        for j in range(per_thread):
            text = f"{prefix} note {i} {j}"
            try:
                acked[text] = mem.remember(OWNER, text, scope="agent").id
            except StoreError as exc:
                errors[text] = exc

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return {"acked": acked, "errors": errors}


def _slow_fsync(monkeypatch: pytest.MonkeyPatch, calls: list[int], delay: float) -> None:
    real = syscalls.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        time.sleep(delay)  # a slow disk: writers pile up behind the fsync
        real(fd)

    monkeypatch.setattr(syscalls, "fsync", fsync)


def test_concurrent_writers_share_fsyncs_and_every_ack_survives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(tmp_path, embedder=None)
    mem.remember(OWNER, "warm up: the log and its directories exist", scope="agent")
    calls: list[int] = []
    _slow_fsync(monkeypatch, calls, 0.002)
    out = _writers(mem, THREADS, PER_THREAD, "shared")
    monkeypatch.undo()
    acked = out["acked"]
    assert not out["errors"]
    assert len(acked) == THREADS * PER_THREAD
    assert len(calls) < len(acked) / 2  # writes shared their fsyncs
    # Each writer saw its own write at once (read your writes in the process).
    assert {mem.get(OWNER, i).text for i in acked.values()} == set(acked)
    mem.close()
    again = Memory.open(tmp_path, embedder=None)
    notes = again.list(OWNER, scope="agent")
    texts = [n.text for n in notes]
    assert len(texts) == len(set(texts)) == len(acked) + 1  # no duplicate, none lost
    assert {n.id for n in notes} >= set(acked.values())
    seqs = [ev.seq for n in notes for ev in again.history(OWNER, n.id)]
    assert sorted(seqs) == list(range(1, len(acked) + 2))  # one seq each, none twice


def test_a_failed_fsync_fails_its_whole_group_and_later_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(tmp_path, embedder=None)
    mem.remember(OWNER, "warm up: the log and its directories exist", scope="agent")
    real = syscalls.fsync
    calls: list[int] = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            time.sleep(0.3)  # the first writer's fsync: every other writer queues behind it
            real(fd)
            return
        raise OSError(errno.EIO, "Input/output error")  # the group's one fsync fails

    monkeypatch.setattr(syscalls, "fsync", fsync)
    out = _writers(mem, 8, 1, "doomed")
    monkeypatch.undo()
    acked, errors = out["acked"], out["errors"]
    assert len(acked) == 1 and len(errors) == 7  # the first alone, then one group of 7
    assert len(calls) == 2
    assert all(exc.applied is None for exc in errors.values())
    # Not served by the process that reported them failed, though other batches of the
    # group were folded before the commit.
    served = {n.text for n in mem.list(OWNER, scope="agent")}
    assert set(acked) <= served and not served & set(errors)
    with pytest.raises(StoreError):
        mem.remember(OWNER, "a write after the failed fsync", scope="agent")
    with pytest.raises(NotFound):
        mem.get(OWNER, "note_" + "0" * 26)
    mem.close()
    again = Memory.open(tmp_path, embedder=None)
    kept = {n.text for n in again.list(OWNER, scope="agent")}
    assert set(acked) <= kept  # acknowledged: durable


def test_each_build_sees_the_batches_built_before_it_in_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = Memory.open(tmp_path, embedder=None)
    note = mem.remember(OWNER, "version one of the rota", scope="agent")
    calls: list[int] = []
    _slow_fsync(monkeypatch, calls, 0.2)
    blocker = threading.Thread(
        target=mem.remember, args=(OWNER, "a slow write"), kwargs={"scope": "agent"}
    )
    blocker.start()
    time.sleep(0.05)  # the blocker holds the lock in its fsync: the rest form one group
    results: dict[int, Any] = {}

    def correct(i: int) -> None:
        try:  # every writer read version 1: one wins, the others conflict
            results[i] = mem.correct(OWNER, note.id, f"version {i} of the rota", if_version=1)
        except Exception as exc:
            results[i] = exc

    pool = [threading.Thread(target=correct, args=(i,)) for i in range(6)]
    for t in pool:
        t.start()
    for t in [blocker, *pool]:
        t.join()
    monkeypatch.undo()
    assert len(calls) == 2  # the blocker's fsync, then the group's one
    wins = [r for r in results.values() if not isinstance(r, Exception)]
    assert len(wins) == 1
    assert all(type(r).__name__ == "Conflict" for r in results.values() if r not in wins)
    assert mem.get(OWNER, note.id).text == wins[0].text

"""Work overlapped with an fsync (``remem.store.overlap``) and the write path that uses it.

A write's derived work (the new note's embedding) runs in a helper thread while
the calling thread waits in ``fsync``; the write is acknowledged only after both,
and an fsync failure still stops the log exactly as a direct fsync failure does.
"""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from remem.core.events import Event
from remem.errors import StoreError
from remem.store import overlap
from remem.store.jsonl import JsonlEventLog
from remem.testing.contract import remembered


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[int]:
    handle = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        yield handle
    finally:
        os.close(handle)


def test_work_runs_in_another_thread_while_the_caller_fsyncs(
    fd: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}
    real = os.fsync

    def fsync(target: int) -> None:
        seen["fsync_thread"] = threading.get_ident()
        seen["fsync_fd"] = target
        real(target)

    monkeypatch.setattr(os, "fsync", fsync)
    overlap.fsync_during(fd, lambda: seen.setdefault("work_thread", threading.get_ident()))
    assert seen["fsync_fd"] == fd
    assert seen["fsync_thread"] == threading.get_ident()
    assert seen["work_thread"] != threading.get_ident()


def test_an_fsync_failure_is_raised_after_the_work_finished(
    fd: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = threading.Event()

    def fail(target: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError) as caught:
        overlap.fsync_during(fd, done.set)
    assert caught.value.errno == errno.EIO
    assert done.is_set()


def test_a_failing_work_is_handed_back_not_raised_as_the_fsyncs(fd: int) -> None:
    def work() -> None:
        raise OSError(errno.ENOSPC, "derived work failed")

    outcome = overlap.fsync_during(fd, work)  # the fsync itself succeeded
    assert isinstance(outcome, OSError) and "derived work failed" in str(outcome)
    assert overlap.fsync_during(fd, lambda: None) is None  # the helper survived


def test_concurrent_callers_each_get_their_own_result(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    counts = [0] * 8

    def caller(k: int) -> None:
        handle = os.open(tmp_path / f"c{k}", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for _ in range(50):

                def work(k: int = k) -> None:
                    counts[k] += 1

                overlap.fsync_during(handle, work)
        except BaseException as exc:
            errors.append(exc)
        finally:
            os.close(handle)

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert counts == [50] * 8


def _child(path: str, out: mp.Queue) -> None:  # type: ignore[type-arg]
    handle = os.open(path, os.O_WRONLY)
    try:
        box: list[int] = []
        overlap.fsync_during(handle, lambda: box.append(threading.get_ident()))
        out.put(len(box))
    finally:
        os.close(handle)


def test_a_forked_child_does_not_inherit_parked_helpers(fd: int, tmp_path: Path) -> None:
    overlap.fsync_during(fd, lambda: None)  # parks a helper in this process
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_child, args=(str(tmp_path / "f"), out))
    child.start()
    child.join(20)
    assert child.exitcode == 0, "the child hung or failed using a helper it did not have"
    assert out.get(timeout=5) == 1


def test_a_failed_fsync_during_overlapped_work_stops_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = JsonlEventLog(tmp_path / "memory.jsonl")
    with log.transaction() as txn:
        txn.append([remembered("First, durable.")])
    ran: list[list[str]] = []

    def fail(target: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    def work(events: list[Event], positions: list[int]) -> None:
        ran.append([e.eid for e in events])

    second = remembered("Second, not durable.")
    monkeypatch.setattr(os, "fsync", fail)
    stopped = "no more writes until reopened"
    with pytest.raises(StoreError, match=stopped), log.transaction() as txn:
        txn.append([second], work)
    assert ran == [[second.eid]]  # it ran while the fsync did
    monkeypatch.undo()
    with pytest.raises(StoreError, match="refuses writes"), log.transaction() as txn:
        txn.append([remembered("Third.")], work)
    assert ran == [[second.eid]]  # refused before anything ran


def test_a_failing_work_is_raised_after_the_write_is_durable(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "memory.jsonl")
    event = remembered("Durable, though folding it failed.")

    def work(events: list[Event], positions: list[int]) -> None:
        raise RuntimeError("folding failed")

    with pytest.raises(RuntimeError, match="folding failed"), log.transaction() as txn:
        txn.append([event], work)
    with log.transaction() as txn:  # the log still takes writes: the fsync succeeded
        assert txn.append([event]) == []  # and knows the event: no duplicate
    assert [e.eid for e in JsonlEventLog(tmp_path / "memory.jsonl").read_new().events] == [
        event.eid
    ]


def test_memory_after_a_failed_fsync_shows_what_the_file_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remem import Memory, RunContext

    ctx = RunContext.dm(agent="a", channel="dm:1", user="u1")
    with Memory.open(tmp_path) as mem:
        kept = mem.remember(ctx, "Written before the disk failed.")

        def fail(target: int) -> None:
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        monkeypatch.setattr(os, "fsync", fail)
        with pytest.raises(StoreError, match="may not be durable"):
            mem.remember(ctx, "Written while the disk failed.")
        monkeypatch.undo()
        texts = sorted(n.text for n in mem.list(ctx))
        assert texts == ["Written before the disk failed.", "Written while the disk failed."]
        with pytest.raises(StoreError, match="reopen"):
            mem.remember(ctx, "Refused until reopened.")
    with Memory.open(tmp_path) as again:  # reopened: the file decides, each note once
        notes = again.list(ctx)
        assert sorted(n.text for n in notes) == [
            "Written before the disk failed.",
            "Written while the disk failed.",
        ]
        assert kept.id in {n.id for n in notes}
        again.remember(ctx, "Writes again after reopening.")

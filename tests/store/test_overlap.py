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


def test_a_failing_work_is_raised_to_the_caller(fd: int) -> None:
    def work() -> None:
        raise ValueError("derived work failed")

    with pytest.raises(ValueError, match="derived work failed"):
        overlap.fsync_during(fd, work)
    overlap.fsync_during(fd, lambda: None)  # the helper survived and is reused


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
    ran: list[bool] = []

    def fail(target: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fail)
    stopped = "no more writes until reopened"
    with pytest.raises(StoreError, match=stopped), log.transaction() as txn:
        txn.append([remembered("Second, not durable.")], lambda: ran.append(True))
    assert ran == [True]
    monkeypatch.undo()
    with pytest.raises(StoreError, match="refuses writes"), log.transaction() as txn:
        txn.append([remembered("Third.")], lambda: ran.append(True))
    assert ran == [True]  # refused before anything ran

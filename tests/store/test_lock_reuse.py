"""The writer lock and log descriptors stay open between writes, and still exclude.

``flock`` belongs to an open file description: one kept descriptor serves every
write of a process (threads take turns first), a forked child must open its own,
and a log whose directory was moved away (an agent sent to the trash) must lock
the new file, not the one it held.
"""

from __future__ import annotations

import fcntl
import multiprocessing as mp
import os
import shutil
import threading
import time
from pathlib import Path

import orjson

from remem import Memory, RunContext
from remem.core.events import unseal
from remem.store.jsonl import JsonlEventLog, JsonlTraceLog
from remem.testing.contract import remembered


def _locked_by_someone(lock_path: Path) -> bool:
    """Whether another open file description holds the flock on ``lock_path``."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_the_kept_lock_excludes_others_only_while_held(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "memory.jsonl"
    log = JsonlEventLog(path)
    for k in range(3):
        with log.transaction() as txn:
            txn.append([remembered(f"Note {k}.")])
            assert _locked_by_someone(path.with_name("memory.jsonl.lock"))
        assert not _locked_by_someone(path.with_name("memory.jsonl.lock"))


def test_a_moved_directory_makes_the_next_write_lock_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "memory.jsonl"
    log = JsonlEventLog(path)
    with log.transaction() as txn:
        txn.append([remembered("Before the move.")])
    shutil.move(str(tmp_path / "agent"), str(tmp_path / "trashed"))
    with log.transaction() as txn:
        assert _locked_by_someone(path.with_name("memory.jsonl.lock"))
        assert not _locked_by_someone(tmp_path / "trashed" / "memory.jsonl.lock")
        txn.append([remembered("After the move.")])
    fresh = JsonlEventLog(path)
    assert [ev.text for ev in fresh.read_new().events] == ["After the move."]  # type: ignore[attr-defined]


def _child_write(path: str, started: float, out: mp.Queue) -> None:  # type: ignore[type-arg]
    log = _shared[0]
    with log.transaction() as txn:
        out.put(time.monotonic() - started)
        txn.append([remembered("From the child.")])


_shared: list[JsonlEventLog] = []


def test_a_forked_child_does_not_share_the_parents_lock(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "memory.jsonl"
    log = JsonlEventLog(path)
    with log.transaction() as txn:
        txn.append([remembered("Parent, before the fork.")])
    _shared[:] = [log]  # the child uses this very object, with its kept descriptors
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    started = time.monotonic()
    with log.transaction() as txn:
        child = ctx.Process(target=_child_write, args=(str(path), started, out))
        child.start()
        time.sleep(0.5)
        assert out.empty(), "the child took the lock the parent holds"
        txn.append([remembered("Parent, holding the lock.")])
    waited = out.get(timeout=10)
    child.join(10)
    assert child.exitcode == 0
    assert waited >= 0.5
    texts = [ev.text for ev in JsonlEventLog(path).read_new().events]  # type: ignore[attr-defined]
    assert texts == ["Parent, before the fork.", "Parent, holding the lock.", "From the child."]


def test_threads_appending_traces_through_one_log_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    traces = JsonlTraceLog(path)
    payload = "x" * 20_000  # large lines make interleaved writes likely if unlocked

    def writer(k: int) -> None:
        for i in range(40):
            traces.append({"type": "recall", "run_id": f"run_{k}_{i}", "pad": payload})

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_bytes().split(b"\n")[:-1]
    assert len(lines) == 160
    runs = {unseal(line, "trace")["run_id"] for line in lines}
    assert len(runs) == 160


def test_threads_remembering_through_one_memory_each_land_once(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        errors: list[BaseException] = []

        def writer(k: int) -> None:
            ctx = RunContext.dm(agent="a", channel=f"dm:{k}", user=f"u{k}")
            try:
                for i in range(25):
                    mem.remember(ctx, f"Person {k} statement number {i}.")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
    lines = (tmp_path / "agents" / "a" / "memory.jsonl").read_bytes().split(b"\n")[:-1]
    texts = [orjson.loads(line)["note"] for line in lines if b'"op":"remember"' in line]
    assert len(texts) == 100 and len(set(texts)) == 100


def test_threads_writing_and_recalling_at_once_stay_consistent(tmp_path: Path) -> None:
    """Writers (each write embeds during its fsync in a helper thread) and readers share
    one Memory: nothing deadlocks, every write lands once, and every note is findable."""
    errors: list[BaseException] = []
    with Memory.open(tmp_path) as mem:
        owner = RunContext.owner("a")
        written: list[str] = []

        def writer(k: int) -> None:
            ctx = RunContext.dm(agent="a", channel=f"dm:{k}", user=f"u{k}")
            try:
                for i in range(30):
                    written.append(mem.remember(ctx, f"Person {k} likes topic {i}.").id)
            except BaseException as exc:
                errors.append(exc)

        def reader(k: int) -> None:
            ctx = RunContext.dm(agent="a", channel=f"dm:{k}", user=f"u{k}")
            try:
                for i in range(30):
                    mem.recall(ctx, f"topic {i}")
                    mem.list(owner)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
        threads += [threading.Thread(target=reader, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a thread is stuck"
        assert errors == []
        assert sorted(n.id for n in mem.list(owner)) == sorted(written)
        for k in range(3):
            ctx = RunContext.dm(agent="a", channel=f"dm:{k}", user=f"u{k}")
            found = mem.recall(ctx, f"Person {k} likes topic 7")
            assert f"Person {k} likes topic 7." in [n.text for n in found.notes]


def test_two_memories_many_threads_mixed_actions_and_compaction(tmp_path: Path) -> None:
    """Two Memory objects on one data directory (as two components of one process would
    have), threads remembering, forgetting, correcting, pinning, recalling, explaining and
    listing, while another compacts: no error, no stuck thread, and every view agrees
    with a fresh read of the log at the end."""
    import random

    from remem.errors import RememError

    mems = [Memory.open(tmp_path), Memory.open(tmp_path)]
    owner = RunContext.owner("a")
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        rng = random.Random(k)
        mem = mems[k % 2]
        ctx = RunContext.dm(agent="a", channel=f"dm:{k % 3}", user=f"u{k % 3}")
        mine: list[str] = []
        try:
            for i in range(40):
                roll = rng.random()
                try:
                    if roll < 0.45 or not mine:
                        topic = rng.choice(["tea", "cello", "bees", "porto"])
                        mine.append(mem.remember(ctx, f"Person {k} fact {i} on {topic}.").id)
                    elif roll < 0.55:
                        mem.forget(ctx, mine.pop(rng.randrange(len(mine))))
                    elif roll < 0.65:
                        mem.correct(ctx, rng.choice(mine), f"Person {k} corrected fact {i}.")
                    elif roll < 0.7:
                        mem.pin(ctx, rng.choice(mine))
                    elif roll < 0.9:
                        rec = mem.recall(ctx, rng.choice(["tea", "cello", "bees", ""]))
                        mem.explain(owner, rec.run_id)
                    else:
                        mem.list(owner)
                except RememError:
                    pass  # e.g. a note compacted away meanwhile: a clear refusal is fine
        except BaseException as exc:
            errors.append(exc)

    def compactor() -> None:
        try:
            for _ in range(3):
                mems[0].compact(owner)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    threads.append(threading.Thread(target=compactor))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    try:
        assert not any(t.is_alive() for t in threads), "a thread is stuck"
        assert errors == []

        def view(mem: Memory) -> list[tuple[str, str, str]]:
            return sorted((n.id, n.text, n.status.value) for n in mem.list(owner, status=None))

        with Memory.open(tmp_path) as fresh:
            expected = view(fresh)
        assert expected and view(mems[0]) == expected and view(mems[1]) == expected
    finally:
        for mem in mems:
            mem.close()

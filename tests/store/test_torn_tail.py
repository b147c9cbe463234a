"""Damage to the JSONL event log: torn tails are repaired, everything else fails closed.

DESIGN §5: a torn tail (a write cut short by a crash) is cut back to the last
complete line, its bytes saved aside and reported; a bad line in the interior
stops the store with an error naming the file and line, and nothing is
truncated; after a failed fsync the log takes no more writes until reopened.
"""

from __future__ import annotations

import errno
import os
import random
import stat
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from remem import Memory, RunContext
from remem.core.events import Event, encode, seal, to_dict
from remem.errors import CorruptLog, StoreError, UnsupportedLog
from remem.store import syscalls
from remem.store.base import Batch
from remem.store.jsonl import JsonlEventLog
from remem.testing.contract import remembered


def _log_path(tmp_path: Path) -> Path:
    return tmp_path / "agents" / "yuko" / "memory.jsonl"


def _write_log(path: Path, count: int = 5) -> list[Event]:
    """A healthy log of ``count`` events, written through the store."""
    events: list[Event] = [remembered(f"Healthy note number {i}.") for i in range(count)]
    log = JsonlEventLog(path)
    with log.transaction() as txn:
        txn.append(events)
    log.close()
    return events


def _torn_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".torn-*"))


def _random_bytes(seed: int, size: int, *, newlines: bool) -> bytes:
    rng = random.Random(seed)
    data = bytearray(rng.randrange(256) for _ in range(size))
    if not newlines:
        return bytes(b if b != 0x0A else 0x20 for b in data)
    for pos in (size // 4, size // 2):
        data[pos] = 0x0A
    data[-1] = 0x20  # embedded newlines only
    return bytes(data)


_PARTIAL = encode(remembered("A write cut short by SIGKILL. " * 50))
_COMPLETE = remembered("The last line of the batch that did get written whole.")

# name -> (bytes appended after the healthy log, complete events among them)
TAILS: dict[str, tuple[bytes, list[Event]]] = {
    "partial_line": (_PARTIAL[: len(_PARTIAL) // 2], []),
    "partial_line_without_only_its_newline": (_PARTIAL[:-1], []),
    "batch_cut_after_one_whole_line": (encode(_COMPLETE) + _PARTIAL[:100], [_COMPLETE]),
    "zero_filled": (b"\0" * 4096, []),
    "partial_line_then_zeros": (_PARTIAL[:300] + b"\0" * 8192, []),
    "random_garbage": (_random_bytes(1, 2000, newlines=False), []),
}
# Bytes that end in a newline are complete lines: damage, not a torn write (see below).
DAMAGED_TAILS: dict[str, bytes] = {
    "random_garbage_with_embedded_newlines": _random_bytes(2, 2000, newlines=True),
    "random_garbage_ending_in_newline": _random_bytes(3, 2000, newlines=True) + b"\n",
    "empty_lines": b"\n\n",
}


@pytest.mark.parametrize("case", sorted(TAILS))
def test_torn_tail_is_repaired_saved_aside_and_reported(tmp_path: Path, case: str) -> None:
    tail, complete = TAILS[case]
    path = _log_path(tmp_path)
    events = _write_log(path)
    with open(path, "ab") as fh:
        fh.write(tail)
    damaged = path.read_bytes()
    kept = b"".join(encode(ev) for ev in complete)
    cut = tail[len(kept) :]
    recovered = events + complete

    # Readers recover every complete record and leave the file alone (only writers repair).
    reader = JsonlEventLog(path)
    assert reader.read_new() == Batch(recovered, False)
    assert path.read_bytes() == damaged
    assert reader.repairs == []

    # The next writer cuts the tail under the lock, saves it aside and reports it.
    writer = JsonlEventLog(path)
    after = remembered("Written after the repair.")
    with writer.transaction() as txn:
        assert txn.caught_up == Batch(recovered, False)
        (written,) = txn.append([after])
    assert written == after and written.seq == len(recovered) + 1  # numbered after the last
    assert len(writer.repairs) == 1
    repair = writer.repairs[0]
    assert repair.log == str(path)
    assert repair.size == len(cut)
    saved = Path(repair.saved_to)
    assert _torn_files(path) == [saved]
    assert saved.read_bytes() == cut
    assert path.read_bytes() == damaged[: len(damaged) - len(cut)] + encode(written)

    # Everyone reads on: the earlier reader, and a fresh handle from the start.
    assert reader.read_new() == Batch([after], False)
    assert JsonlEventLog(path).read_new() == Batch([*recovered, after], False)


@pytest.mark.parametrize("case", sorted(DAMAGED_TAILS))
def test_damaged_complete_tail_lines_fail_closed(tmp_path: Path, case: str) -> None:
    path = _log_path(tmp_path)
    _write_log(path)
    with open(path, "ab") as fh:
        fh.write(DAMAGED_TAILS[case])
    damaged = path.read_bytes()
    repair = f"remem --data {tmp_path} repair --agent yuko"
    with pytest.raises(CorruptLog, match="line 6") as raised:
        JsonlEventLog(path).read_new()
    assert repair in raised.value.message
    writer = JsonlEventLog(path)
    with pytest.raises(CorruptLog, match="damaged after it was written"), writer.transaction():
        pass
    assert path.read_bytes() == damaged and writer.repairs == [] and _torn_files(path) == []


def test_each_repair_is_saved_in_its_own_file(tmp_path: Path) -> None:
    # Two repairs by one process within the same second must not overwrite each other.
    path = _log_path(tmp_path)
    _write_log(path, 2)
    log = JsonlEventLog(path)
    tails = [b'{"op":"remember","v":1,"eid":"ev_first', b"\0" * 64, b"third\xff"]
    for tail in tails:
        with open(path, "ab") as fh:
            fh.write(tail)
        with log.transaction() as txn:
            txn.append([remembered(f"After {tail[:5]!r}.")])
    assert [r.size for r in log.repairs] == [len(t) for t in tails]
    assert sorted(Path(r.saved_to).read_bytes() for r in log.repairs) == sorted(tails)
    assert len(_torn_files(path)) == 3
    assert len(JsonlEventLog(path).read_new().events) == 5


def test_a_torn_first_line_leaves_an_empty_log(tmp_path: Path) -> None:
    path = _log_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(_PARTIAL[:77])
    log = JsonlEventLog(path)
    with log.transaction() as txn:
        assert txn.caught_up == Batch([], False)
    assert path.read_bytes() == b""
    assert Path(log.repairs[0].saved_to).read_bytes() == _PARTIAL[:77]


def test_repair_is_reported_through_memory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = RunContext.dm(agent="yuko", channel="discord:456", user="discord:123")
    with Memory.open(data) as mem:
        first = mem.remember(ctx, "Prefers short replies.")
    path = data / "agents" / "yuko" / "memory.jsonl"
    with open(path, "ab") as fh:
        fh.write(_PARTIAL[:200])
    with Memory.open(data) as mem:
        second = mem.remember(ctx, "Works in the Lisbon office.")
        assert [n.id for n in mem.list(ctx, scope="user")] == [first.id, second.id]
        repairs = mem._agent(ctx).log.repairs
        assert [r.size for r in repairs] == [200]
    assert len(_torn_files(path)) == 1


# -- interior damage fails closed ------------------------------------------------------


def _flip_byte(lines: list[bytes]) -> list[bytes]:
    line = bytearray(lines[2])
    pos = line.index(b"Healthy") + 3
    line[pos] ^= 0x01
    return [*lines[:2], bytes(line), *lines[3:]]


def _cut_middle(lines: list[bytes]) -> list[bytes]:
    line = lines[2]
    return [*lines[:2], line[:40] + line[-60:], *lines[3:]]


def _zeroed(lines: list[bytes]) -> list[bytes]:
    return [*lines[:2], b"\0" * (len(lines[2]) - 1) + b"\n", *lines[3:]]


def _torn_then_valid(lines: list[bytes]) -> list[bytes]:
    # A torn write that a later writer did not repair: never skipped silently.
    return [*lines[:2], lines[2][:50] + lines[3], *lines[4:]]


def _empty_line(lines: list[bytes]) -> list[bytes]:
    return [*lines[:2], b"\n", *lines[2:]]


INTERIOR: dict[str, Callable[[list[bytes]], list[bytes]]] = {
    "one_flipped_byte": _flip_byte,
    "bytes_missing_inside_a_line": _cut_middle,
    "zero_filled_line": _zeroed,
    "torn_line_followed_by_valid_lines": _torn_then_valid,
    "empty_line": _empty_line,
}


@pytest.mark.parametrize("case", sorted(INTERIOR))
def test_interior_damage_fails_closed(tmp_path: Path, case: str) -> None:
    path = _log_path(tmp_path)
    _write_log(path, 5)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(INTERIOR[case](lines)))
    before = path.read_bytes()

    reader = JsonlEventLog(path)
    for _ in range(3):  # a retry names the same line, it does not count on
        with pytest.raises(CorruptLog) as read_err:
            reader.read_new()
        assert str(path) in str(read_err.value)
        assert "line 3" in str(read_err.value)

    writer = JsonlEventLog(path)
    with pytest.raises(CorruptLog) as write_err, writer.transaction() as txn:
        txn.append([remembered("Never written.")])
    assert str(path) in str(write_err.value) and "line 3" in str(write_err.value)
    assert writer.repairs == []
    assert path.read_bytes() == before
    assert _torn_files(path) == []

    with Memory.open(tmp_path) as mem:
        for _ in range(2):
            with pytest.raises(CorruptLog, match=r"line 3\b"):
                mem.list(RunContext.owner("yuko"))
    assert path.read_bytes() == before


def test_records_before_the_damage_are_still_delivered_once_it_is_fixed(tmp_path: Path) -> None:
    # An error must not make a handle skip the good records it parsed before the bad line.
    path = _log_path(tmp_path)
    events = _write_log(path, 5)
    good = path.read_bytes()
    lines = good.splitlines(keepends=True)
    path.write_bytes(b"".join(_flip_byte(lines)))
    log = JsonlEventLog(path)
    with pytest.raises(CorruptLog):
        log.read_new()
    path.write_bytes(good)  # the operator restores the line from a backup
    assert log.read_new() == Batch(events, False)


def test_a_log_that_disappears_resets_its_readers(tmp_path: Path) -> None:
    ctx = RunContext.dm(agent="yuko", channel="discord:456", user="discord:123")
    with Memory.open(tmp_path) as reader, Memory.open(tmp_path) as owner:
        note = reader.remember(ctx, "Prefers short replies.")
        assert [n.id for n in reader.list(ctx, scope="user")] == [note.id]
        owner.trash_agent(RunContext.owner("yuko"), "yuko")
        # Another process removed the agent: this one must not keep serving its notes.
        assert reader.list(ctx, scope="user") == []
        again = reader.remember(ctx, "Prefers short replies.")
        assert [n.id for n in reader.list(ctx, scope="user")] == [again.id]
        assert again.id != note.id


def test_damage_past_the_first_chunk_names_the_right_line(tmp_path: Path) -> None:
    path = _log_path(tmp_path)
    _write_log(path, 3)
    big = encode(remembered("y" * 1_000_000))
    with open(path, "ab") as fh:
        fh.write(big + b"not a record\n" + encode(remembered("Valid after damage.")))
    with pytest.raises(CorruptLog, match=r"line 5\b"):
        JsonlEventLog(path).read_new()


# -- records remem must not guess about ----------------------------------------------


def _sealed(data: dict[str, object]) -> bytes:
    return seal(orjson.dumps(data))


def _from_the_future() -> bytes:
    data = to_dict(remembered("Written by remem 9."))
    data["v"] = 99
    return _sealed(data)


@pytest.mark.parametrize("where", ["tail", "interior"])
def test_newer_schema_version_is_refused_not_cut(tmp_path: Path, where: str) -> None:
    path = _log_path(tmp_path)
    _write_log(path, 2)
    extra = _from_the_future()
    if where == "interior":
        extra += encode(remembered("A later valid line."))
    with open(path, "ab") as fh:
        fh.write(extra)
    before = path.read_bytes()
    with pytest.raises(UnsupportedLog, match=r"v99.*upgrade remem") as err:
        JsonlEventLog(path).read_new()
    assert f"{path} line 3" in str(err.value)
    writer = JsonlEventLog(path)
    with pytest.raises(UnsupportedLog), writer.transaction():
        pass
    assert path.read_bytes() == before
    assert _torn_files(path) == []


def test_unknown_event_is_refused(tmp_path: Path) -> None:
    path = _log_path(tmp_path)
    _write_log(path, 1)
    data = to_dict(remembered("x"))
    data["op"] = "teleport"
    with open(path, "ab") as fh:
        fh.write(_sealed(data))
    with pytest.raises(UnsupportedLog, match="teleport"):
        JsonlEventLog(path).read_new()


def test_sealed_but_malformed_tail_line_is_not_cut_as_torn(tmp_path: Path) -> None:
    # Its checksum holds, so it was written whole: a torn write cannot explain it.
    path = _log_path(tmp_path)
    _write_log(path, 2)
    with open(path, "ab") as fh:
        fh.write(_sealed({"op": "remember", "v": 1, "eid": "ev_x"}))
    before = path.read_bytes()
    writer = JsonlEventLog(path)
    with pytest.raises(CorruptLog, match=r"line 3: malformed remember event"), writer.transaction():
        pass
    assert path.read_bytes() == before
    assert writer.repairs == []


# -- write failures ----------------------------------------------------------------------


def test_failed_fsync_stops_the_handle_until_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _log_path(tmp_path)
    events = _write_log(path, 2)
    log = JsonlEventLog(path)
    real_fsync = os.fsync
    failures = []

    def fsync_fails_once(fd: int) -> None:
        if not failures and stat.S_ISREG(os.fstat(fd).st_mode):  # the log, not a directory
            failures.append(fd)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(syscalls, "fsync", fsync_fails_once)
    lost = remembered("Its fsync failed.")
    failed = r"fsync of .* failed .*no more writes until reopened"
    with pytest.raises(StoreError, match=failed) as raised, log.transaction() as txn:
        txn.append([lost])
    assert raised.value.applied is None
    assert len(failures) == 1
    # The line reached the file, durable or not: another handle (process) reads it, but
    # the handle that reported the write as failed never serves it.
    assert log.read_new().events == []
    assert [ev.eid for ev in JsonlEventLog(path).read_new().events][-1] == lost.eid

    # fsync works again, but this handle cannot know what the kernel dropped: it refuses.
    refused = remembered("Refused.")
    for _ in range(2):
        refusal = "refuses writes after a failed fsync"
        with pytest.raises(StoreError, match=refusal), log.transaction() as txn:
            txn.append([refused])
        with pytest.raises(StoreError, match="refuses writes"), log.transaction() as txn:
            txn.rewrite(events)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # fsync itself is healthy again (the fault fired once)
    finally:
        os.close(fd)

    # A newly opened handle writes normally; the refused event was never written.
    fresh = JsonlEventLog(path)
    later = remembered("After reopening.")
    with fresh.transaction() as txn:
        assert txn.append([later]) == [later]
    eids = [ev.eid for ev in JsonlEventLog(path).read_new().events]
    assert refused.eid not in eids
    assert eids[:2] == [ev.eid for ev in events] and eids[-1] == later.eid


def test_failed_write_is_rolled_back_and_the_handle_stays_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A short write followed by ENOSPC: the partial line is truncated away at once.
    path = _log_path(tmp_path)
    events = _write_log(path, 2)
    before = path.read_bytes()
    log = JsonlEventLog(path)
    real_write = os.write
    calls: list[int] = []

    def short_then_full(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(syscalls, "write", short_then_full)
    with pytest.raises(StoreError, match="cannot write") as raised, log.transaction() as txn:
        txn.append([remembered("x" * 5000)])
    assert raised.value.applied is False
    assert path.read_bytes() == before
    monkeypatch.setattr(syscalls, "write", real_write)
    ok = remembered("Disk has room again.")
    with log.transaction() as txn:
        assert txn.append([ok]) == [ok]
    assert JsonlEventLog(path).read_new().events == [*events, ok]


# -- data directory errors ----------------------------------------------------------------


def test_data_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "data"
    target.write_text("not a directory")
    with pytest.raises(StoreError, match="is a file, not a directory"):
        Memory.open(target)
    with pytest.raises(StoreError, match="cannot create data directory"):
        Memory.open(target / "inside")


def test_malformed_agents_entry_is_refused(tmp_path: Path) -> None:
    (tmp_path / "agents").write_text("should be a directory")
    with pytest.raises(StoreError, match="agents should be a directory"):
        Memory.open(tmp_path)


def test_agent_directory_that_is_a_file_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "yuko").write_text("should be a directory")
    ctx = RunContext.dm(agent="yuko", channel="discord:456", user="discord:123")
    with Memory.open(tmp_path) as mem:
        with pytest.raises(StoreError, match="cannot read"):
            mem.list(ctx, scope="user")
        with pytest.raises(StoreError):
            mem._agent(ctx).write(lambda state: ([remembered("x")], None))


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="running as root: permission bits are not enforced for root (os.access and "
    "open succeed on a 0o500 directory), so an unwritable data directory cannot be "
    "simulated here; a read-only bind mount would need privileges the tests do not take",
)
def test_unwritable_data_directory_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="not readable and writable"):
            Memory.open(data)
    finally:
        data.chmod(0o700)

"""Integrity and faults through the public API (issue 11, items 11-14).

- A damaged complete line fails closed wherever it is, the last line too, with the
  repair command in the error; ``remem repair`` cuts it after saving it aside.
- Torn-tail repairs are reported (CLI warning, ``remem doctor``) and their saved bytes
  kept, except lines naming a note that compaction erased.
- ``remem doctor`` verifies every log and exits non-zero on damage; repaired tails and
  unreachable endpoints are warnings.
- Operating-system failures are ``StoreError``s saying whether the change was applied;
  any failed fsync of the log or its directories stops writes; a write reported as failed
  is never served by the process that reported it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from remem import Memory, RunContext
from remem.cli import main
from remem.core.events import encode
from remem.errors import CorruptLog, StoreError
from remem.store import syscalls
from remem.testing.contract import remembered

OWNER = RunContext.owner("yuko")


def _log(data: Path) -> Path:
    return data / "agents" / "yuko" / "memory.jsonl"


def _notes(data: Path) -> list[str]:
    with Memory.open(data) as mem:
        return [n.text for n in mem.list(OWNER)]


def _remember(data: Path, *texts: str) -> list[str]:
    with Memory.open(data) as mem:
        return [mem.remember(OWNER, t, scope="agent").id for t in texts]


def _cli(data: Path, *args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(main, ["--data", str(data), *args], input=input)


@pytest.fixture(autouse=True)
def _lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEM_EMBEDDINGS", "off")


# -- item 11: a damaged complete line is corruption, the last line too ---------------------


def test_a_damaged_last_line_fails_closed_and_remem_repair_cuts_it(tmp_path: Path) -> None:
    _remember(tmp_path, "Reports go out on Fridays.", "The office opens at nine.")
    path = _log(tmp_path)
    data = bytearray(path.read_bytes())
    data[data.rindex(b"office") + 2] ^= 0x01  # one flipped bit in the last, complete line
    path.write_bytes(bytes(data))
    damaged = path.read_bytes()

    for action in (
        lambda mem: mem.list(OWNER),
        lambda mem: mem.remember(OWNER, "Written after the damage.", scope="agent"),
    ):
        with Memory.open(tmp_path) as mem, pytest.raises(CorruptLog) as raised:
            action(mem)
        assert "line 2: checksum mismatch" in raised.value.message
        assert f"remem --data {tmp_path} repair --agent yuko" in raised.value.message
    assert path.read_bytes() == damaged  # nothing cut, nothing saved aside
    assert list(path.parent.glob("*.torn-*")) == []

    doctor = _cli(tmp_path, "doctor")
    assert doctor.exit_code == 1 and "FAIL yuko: log" in doctor.output

    refused = _cli(tmp_path, "repair", "--agent", "yuko", input="n\n")
    assert refused.exit_code == 1 and path.read_bytes() == damaged
    done = _cli(tmp_path, "repair", "--agent", "yuko", "--yes")
    assert done.exit_code == 0, done.output
    (saved,) = path.parent.glob("memory.jsonl.damaged-*")
    assert saved.read_bytes() == damaged[damaged.rindex(b"\n", 0, -1) + 1 :]
    assert _notes(tmp_path) == ["Reports go out on Fridays."]
    assert _cli(tmp_path, "repair", "--agent", "yuko").output.endswith("nothing to do\n")


# -- item 11/12: torn tails are reported and kept; compaction scrubs erased content --------


def test_torn_tails_are_warned_listed_by_doctor_and_kept_unless_erased(tmp_path: Path) -> None:
    kept_id, erased_id = _remember(tmp_path, "Lunch is at noon.", "Parking is behind the shop.")
    path = _log(tmp_path)
    # A crash cut a write short: the bytes after the last newline.
    torn = encode(remembered("A note whose write was cut short by a crash."))[:120]
    with open(path, "ab") as fh:
        fh.write(torn)
    first = _cli(tmp_path, "remember", "--agent", "yuko", "Deliveries come on Tuesdays.")
    assert first.exit_code == 0, first.output
    assert "warning: cut a torn tail of 120 bytes" in first.stderr
    doctor = _cli(tmp_path, "doctor")
    assert doctor.exit_code == 0, doctor.output
    assert "warn yuko: torn tail" in doctor.output and "clean but repaired" in doctor.output

    # A second torn write, this time of a correction of the note about to be forgotten.
    with Memory.open(tmp_path) as mem:
        note = mem.get(OWNER, erased_id)
    line = encode(remembered("x"))  # the layout of a line: the note id precedes any text
    secret = b'"note_id":"' + erased_id.encode() + b'","text":"Parking is behind the bakery'
    with open(path, "ab") as fh:
        fh.write(line[: line.index(b'"actor"')] + secret)
    assert _cli(tmp_path, "remember", "--agent", "yuko", "Tea is in the cupboard.").exit_code == 0
    assert len(list(path.parent.glob("*.torn-*"))) == 2
    assert note.text == "Parking is behind the shop."

    assert _cli(tmp_path, "rm", erased_id).exit_code == 0
    assert _cli(tmp_path, "compact", "--agent", "yuko").exit_code == 0
    (left,) = path.parent.glob("*.torn-*")  # the one naming no erased note is kept
    assert left.read_bytes() == torn
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert b"bakery" not in file.read_bytes(), file
    assert kept_id in {n.id for n in Memory.open(tmp_path).list(OWNER)}


# -- item 12: doctor ----------------------------------------------------------------------


def test_doctor_fails_on_interior_damage_and_a_log_that_is_a_directory(tmp_path: Path) -> None:
    _remember(tmp_path, "First.", "Second fact here.", "Third.")
    path = _log(tmp_path)
    data = bytearray(path.read_bytes())
    data[data.index(b"Second") + 1] ^= 0x01
    path.write_bytes(bytes(data))
    result = _cli(tmp_path, "doctor")
    assert result.exit_code == 1 and "line 2: checksum mismatch" in result.output

    other = tmp_path / "other"
    (other / "agents" / "yuko" / "memory.jsonl").mkdir(parents=True)
    result = _cli(other, "doctor")
    assert result.exit_code == 1 and "is a directory, not a log file" in result.output


def test_doctor_warns_about_an_unreachable_embedding_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMEM_EMBEDDINGS", "http")
    monkeypatch.setenv("REMEM_EMBEDDINGS_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("REMEM_EMBEDDINGS_MODEL", "nothing-listens")
    _remember(tmp_path, "A fact.")
    result = _cli(tmp_path, "doctor")
    assert "warn embeddings" in result.output and "recall runs lexically" in result.output
    assert "ok  yuko: log" in result.output


# -- item 13: typed errors that say whether the change was applied -------------------------


def _fail(name: str, when: Callable[..., bool], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make ``syscalls.<name>`` raise EIO once, on the first call ``when`` accepts."""
    real = getattr(syscalls, name)
    fired: list[int] = []

    def call(*args: Any) -> Any:
        if not fired and when(*args):
            fired.append(1)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(*args)

    monkeypatch.setattr(syscalls, name, call)
    return fired


def test_failed_flock_is_a_store_error_that_says_what_was_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember(tmp_path, "Before.")
    with Memory.open(tmp_path) as mem:
        _fail("flock", lambda fd, op: op == fcntl.LOCK_EX, monkeypatch)
        with pytest.raises(StoreError, match=r"cannot lock .*nothing was changed") as raised:
            mem.remember(OWNER, "Never written.", scope="agent")
        assert raised.value.applied is False
        _fail("flock", lambda fd, op: op == fcntl.LOCK_UN, monkeypatch)
        with pytest.raises(StoreError, match=r"cannot unlock .*applied and is durable") as raised:
            mem.remember(OWNER, "Written, then the unlock failed.", scope="agent")
        assert raised.value.applied is True
        mem.remember(OWNER, "The lock works again.", scope="agent")
    assert _notes(tmp_path) == [
        "Before.",
        "Written, then the unlock failed.",
        "The lock works again.",
    ]


def test_compaction_failing_after_its_rename_is_applied_and_finished_at_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (forgotten,) = _remember(tmp_path, "The alarm code is in the red folder.")
    leftover = _log(tmp_path).parent / ".vectors.cache.x.tmp"  # an interrupted cache write
    leftover.write_text("The alarm code is in the red folder.")
    with Memory.open(tmp_path) as mem:
        mem.forget(OWNER, forgotten)
        _fail("listdir", lambda path: Path(path).name == "yuko", monkeypatch)
        with pytest.raises(StoreError, match="compaction of yuko was applied") as raised:
            mem.compact(OWNER)
        assert raised.value.applied is True
    monkeypatch.undo()
    assert leftover.exists() and b"red folder" not in _log(tmp_path).read_bytes()
    _notes(tmp_path)  # the next open finishes the clean-up
    assert not leftover.exists()
    assert not _log(tmp_path).with_name("memory.jsonl.cleanup").exists()


# -- item 14: fsync discipline ------------------------------------------------------------


def _is_dir(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def test_a_failed_directory_fsync_at_creation_stops_writes_until_reopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    with Memory.open(data) as mem:
        fired = _fail("fsync", _is_dir, monkeypatch)  # creating agents/ and agents/yuko/
        with pytest.raises(StoreError, match="could not make it durable"):
            mem.remember(OWNER, "The first note of this agent.", scope="agent")
        assert fired
        with pytest.raises(StoreError, match="refuses writes"):
            mem.remember(OWNER, "Accepted after a failed fsync?", scope="agent")
    with Memory.open(data) as mem:
        mem.remember(OWNER, "After reopening.", scope="agent")
    assert _notes(data) == ["After reopening."]


def test_a_write_whose_fsync_failed_is_never_served_by_that_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember(tmp_path, "The warehouse closes at six.")
    text = "The warehouse key is under the mat."
    with Memory.open(tmp_path) as mem:
        _fail("fsync", lambda fd: not _is_dir(fd), monkeypatch)
        with pytest.raises(StoreError, match="may or may not be durable") as raised:
            mem.remember(OWNER, text, scope="agent")
        assert raised.value.applied is None
        monkeypatch.undo()
        assert text not in [n.text for n in mem.list(OWNER)]
        assert text not in mem.recall(OWNER, "warehouse key mat").text
        assert mem.history(OWNER, mem.list(OWNER)[0].id)  # reads still work
        with pytest.raises(StoreError, match="refuses writes"):
            mem.remember(OWNER, "Accepted after a failed fsync?", scope="agent")
    # Another process reads the file as it is: the line is there, durable or not.
    assert text in _notes(tmp_path)

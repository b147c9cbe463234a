"""``remem repair``: cut damaged complete lines out of an event log, saved aside first.

A complete line (one that ends in a newline) that fails its checksum or does not
parse as an event makes the store refuse the log (fail closed). The owner
repairs it with ``remem repair --agent A``: under the writer lock, each damaged
line is saved in ``memory.jsonl.damaged-<time>-<pid>`` (kept until the owner
removes it; compaction drops lines of it that name an erased note), and the log
is replaced by a copy without those lines (written, fsynced, renamed, directory
fsynced). When a damaged line ends with a whole valid record (an interrupted
write that a later append followed on the same line), that record is kept.
Lines written by a newer remem are not damage and are never cut. Bytes after
the last newline (a torn tail) are left for the next write to cut.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from remem.core.events import from_dict, try_unseal, unseal
from remem.errors import CorruptLog, StoreError
from remem.store import private, syscalls
from remem.store.durable import fsync_dir, read_all, reason, write_new_file, write_synced
from remem.store.lockfile import LockFile

_RECORD_START = b'{"op":'


@dataclass(frozen=True, slots=True)
class DamagedLine:
    """One complete line of a log that cannot be read."""

    lineno: int
    offset: int
    size: int
    reason: str
    #: A valid record at the end of the line, kept when the line is cut.
    salvaged: bytes = b""


def find_damage(path: Path) -> list[DamagedLine]:
    """The damaged complete lines of the log at ``path`` (``StoreError`` when unreadable)."""
    return _split(path, _read(path))[1]


def cut_damage(path: Path) -> tuple[list[DamagedLine], Path | None]:
    """Under the writer lock, save the damaged lines aside and remove them from the log.

    Returns what was cut and where it was saved (``None`` when nothing was damaged).
    Raises :class:`StoreError`; before the rename the log is unchanged (``applied``
    False); a failed directory fsync after it leaves ``applied`` None."""
    with LockFile(path.with_name(path.name + ".lock")):
        data = _read(path)
        kept, damaged = _split(path, data)
        if not damaged:
            return [], None
        aside = _save_aside(path, b"".join(data[d.offset : d.offset + d.size] for d in damaged))
        tmp = path.with_name(path.name + ".repair")
        try:
            fd = private.recreate_file(tmp)
            try:
                write_synced(fd, b"".join(kept))
            finally:
                os.close(fd)
            syscalls.replace(tmp, path)
        except OSError as exc:
            raise StoreError(
                f"cannot rewrite {path}: {reason(exc)} (the log is unchanged; the damaged "
                f"lines are also saved in {aside})"
            ) from None
        try:
            fsync_dir(path.parent)
        except OSError as exc:
            raise StoreError(
                f"{path} was repaired but fsync of its directory failed ({reason(exc)}); "
                "a crash may bring the damaged log back: run remem repair again",
                applied=None,
            ) from None
        return damaged, aside


def _read(path: Path) -> bytes:
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a log file; move it away by hand")
    try:
        return read_all(path)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {reason(exc)}") from None


def _split(path: Path, data: bytes) -> tuple[list[bytes], list[DamagedLine]]:
    """The log's content to keep (torn tail included, as is) and its damaged lines."""
    kept: list[bytes] = []
    damaged: list[DamagedLine] = []
    offset = 0
    lines = data.split(b"\n")
    tail = lines.pop()
    for lineno, line in enumerate(lines, 1):
        why = _why_damaged(line, f"{path} line {lineno}")
        if why is None:
            kept.append(line + b"\n")
        else:
            salvaged = _salvage(line)
            if salvaged:
                kept.append(salvaged + b"\n")
            damaged.append(DamagedLine(lineno, offset, len(line) + 1, why, salvaged))
        offset += len(line) + 1
    kept.append(tail)
    return kept, damaged


def _why_damaged(line: bytes, where: str) -> str | None:
    """Why a complete line cannot be read (None when it can, or when it was written by a
    newer remem: that is no damage, and reading it says so)."""
    try:
        from_dict(unseal(line, where), where)
    except CorruptLog as exc:
        return exc.message
    except StoreError:
        return None
    return None


def _salvage(line: bytes) -> bytes:
    """A whole valid record that ends the line, after the damage, if there is one."""
    start = line.find(_RECORD_START, 1)
    while start > 0:
        candidate = line[start:]
        if try_unseal(candidate) is not None and _why_damaged(candidate, "salvage") is None:
            return candidate
        start = line.find(_RECORD_START, start + 1)
    return b""


def _save_aside(path: Path, lines: bytes) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    name = f"{path.name}.damaged-{stamp}-{os.getpid()}"
    try:
        aside = write_new_file(path.with_name(name), lines)
        fsync_dir(path.parent)
    except OSError as exc:
        raise StoreError(
            f"cannot save the damaged lines of {path} aside: {reason(exc)} (the log is unchanged)"
        ) from None
    return aside

"""Scrubbing an agent's folder after a compaction: the files that may hold erased content.

Caches (and interrupted cache writes) are removed: they are rebuilt from the log.
Saved torn tails and damaged lines are kept for the owner, except every line of
them that names an erased note (a note's id precedes its text in every event, so
a cut line holding any of a note's text names the note). Last, the compaction's
clean-up flag is removed: until then, the next open of the store scrubs again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from remem.errors import StoreError
from remem.store import syscalls
from remem.store.atomic import replace_file
from remem.store.durable import read_all, reason


def scrub_folder(folder: Path, erased_ids: Callable[[], list[bytes]]) -> list[str]:
    """Scrub ``folder`` (see the module docstring); ``erased_ids`` gives each erased note's
    id as it appears in a log line. Returns the files removed or rewritten. Raises
    :class:`StoreError` on a failed call."""
    try:
        names = sorted(syscalls.listdir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {folder}: {reason(exc)}") from None
    removed = []
    saved = [n for n in names if ".torn-" in n or ".damaged-" in n]
    erased = erased_ids() if saved else []
    for name in saved:
        if _scrub_saved(folder / name, erased):
            removed.append(str(folder / name))
    # Caches (e.g. note vectors) may hold erased content, and so may the temporary
    # file of a cache write that was interrupted.
    for name in names:
        if name.endswith(".cache") or (name.startswith(".") and name.endswith(".tmp")):
            _unlink(folder / name)
            removed.append(str(folder / name))
    flag = cleanup_flag(folder / "memory.jsonl")
    if flag.name in names:
        _unlink(flag)
    return removed


def cleanup_flag(log_path: Path) -> Path:
    """The file saying a compaction of ``log_path`` has not finished its clean-up."""
    return log_path.with_name(log_path.name + ".cleanup")


def _unlink(path: Path) -> None:
    try:
        syscalls.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot remove {path}: {reason(exc)}") from None


def _scrub_saved(path: Path, erased: list[bytes]) -> bool:
    """Drop the lines of a saved tail that name an erased note; True when it was removed
    (nothing else left), else rewritten only if something was dropped."""
    try:
        data = read_all(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {reason(exc)}") from None
    lines = data.split(b"\n")
    kept = [line for line in lines if not any(needle in line for needle in erased)]
    if len(kept) == len(lines):
        return False
    if not any(kept):
        _unlink(path)
        return True
    try:
        replace_file(path, [b"\n".join(kept)])
    except OSError as exc:
        raise StoreError(f"cannot rewrite {path}: {reason(exc)}") from None
    return False

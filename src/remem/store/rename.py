"""``remem agents rename``: give an agent of a JSONL data directory another name.

The agent's directory is renamed in place (``<data>/agents/OLD`` → ``NEW``) under its
log's writer lock, and the rename is made durable in ``<data>/agents``. Its derived
caches are removed (rebuilt from the log). The old name need not be valid any more: this
is how an agent stored under a name of the service's own by an older remem (``#config``)
gets a usable one. The new name is checked like every agent name.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from remem.core.names import check_agent
from remem.errors import InvalidInput, NotFound, StoreError
from remem.store.durable import fsync_dir, reason
from remem.store.lockfile import LockFile


def rename_agent_dir(root: Path, old: str, new: str) -> Path:
    """Rename agent ``old`` of the data directory ``root`` to ``new``; returns the new
    directory. Raises :class:`NotFound`, :class:`InvalidInput` or :class:`StoreError`."""
    agents = root / "agents"
    check_agent(new)
    try:
        names = os.listdir(agents)
    except FileNotFoundError:
        names = []
    except OSError as exc:
        raise StoreError(f"cannot list {agents}: {reason(exc)}") from None
    if old not in names or old.startswith(".") or not (agents / old).is_dir():
        raise NotFound(f"no agent named {old!r} in {root}")
    if new in names:
        raise InvalidInput(f"an agent named {new!r} already exists in {root}; choose another")
    src, dest = agents / old, agents / new
    lock = LockFile(src / "memory.jsonl.lock")
    try:
        with lock:  # no write of another process is under way meanwhile
            os.rename(src, dest)
            fsync_dir(agents)
    except OSError as exc:
        raise StoreError(f"cannot rename {src} to {dest}: {reason(exc)}", applied=None) from None
    finally:
        lock.close()
    for cache in dest.glob("*.cache"):
        with contextlib.suppress(OSError):
            cache.unlink()
    return dest

"""Running CPU work while an ``fsync`` waits for the disk.

``os.fsync`` releases the GIL for the whole time the device takes to make a write
durable (0.1-0.3 ms on a fast SSD, far more on a slow one). A durable write that
must also compute something that does not depend on durability (the new note's
embedding, say) can do that work in the meantime instead of after the fsync.

:func:`fsync_during` hands the work to a parked helper thread and calls ``os.fsync``
in the calling thread: the helper takes the GIL that the fsync gives up, and the
caller waits for the helper before returning. (The other way round does not
work: a helper blocked in ``fsync`` would need the GIL back from a caller busy
with Python code before it could even report.) The write is still acknowledged
only after it is durable, and an fsync error is raised exactly as a direct call
raises it. Helper threads are created on demand, one per concurrently syncing
caller, and parked between uses; a forked child starts with none.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable


class _Helper:
    """A daemon thread that runs the callables it is given, one at a time."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.results: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()
        thread = threading.Thread(target=self._run, name="remem-overlap", daemon=True)
        thread.start()

    def _run(self) -> None:
        while True:
            work = self.jobs.get()
            try:
                work()
            except BaseException as exc:
                self.results.put(exc)
            else:
                self.results.put(None)


_parked: list[_Helper] = []
_parked_lock = threading.Lock()


def _forget_helpers() -> None:
    """In a forked child the helpers' threads do not exist: never hand them work."""
    global _parked_lock
    _parked.clear()
    _parked_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_helpers)


def fsync_during(fd: int, work: Callable[[], None]) -> BaseException | None:
    """``os.fsync(fd)`` while ``work()`` runs in a helper thread; returns when both are done.

    Raises the fsync's ``OSError`` if it failed. Returns what ``work`` raised (None if
    it finished), so that a caller never mistakes the work's error for the fsync's.
    ``work`` must not need anything the calling thread holds besides the GIL.
    """
    with _parked_lock:
        helper = _parked.pop() if _parked else None
    if helper is None:
        helper = _Helper()
    helper.jobs.put(work)
    try:
        os.fsync(fd)
    finally:
        outcome = helper.results.get()
        with _parked_lock:
            _parked.append(helper)
    return outcome

"""Events staged in one transaction, before the one write + fsync that makes them durable.

Group commit (see :mod:`remem.store.base`) builds several writers' batches in one
transaction: each batch is *staged* (numbered after the log's last seq and after the
batches staged before it, encoded, given the position it will have), and
:meth:`~remem.store.base.LogTransaction.commit` writes every staged line at once. Until
then the staged events are in no file; :class:`Staged` keeps them so that a read by
position (a scope folded lazily by a later batch of the same group) finds them.
"""

from __future__ import annotations

from remem.core.events import Event


class Staged:
    """The events staged since the last commit, their lines and their positions."""

    __slots__ = ("at", "eids", "events", "lines", "size")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.lines: list[bytes] = []
        #: Every staged eid (a later batch repeating one appends nothing for it).
        self.eids: set[str] = set()
        #: Staged event by the byte offset it will start at.
        self.at: dict[int, Event] = {}
        self.size = 0

    def next_seq(self, last: int) -> int:
        """The seq the next staged event gets when the log's last is ``last``."""
        return (self.events[-1].seq if self.events else last) + 1

    def add(self, events: list[Event], lines: list[bytes], end: int) -> list[int]:
        """Stage ``events`` (encoded as ``lines``) after the file's ``end`` and what was
        staged before; returns the offset each will start at."""
        pos = end + self.size
        positions = []
        for ev, line in zip(events, lines, strict=True):
            positions.append(pos)
            self.at[pos] = ev
            pos += len(line)
        self.size = pos - end
        self.events += events
        self.lines += lines
        return positions

"""A clock a test moves by hand, for ``Memory.open(location, clock=...)``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["EPOCH", "FakeClock"]

#: The instant every test starts at (a fixed, ordinary weekday).
EPOCH = datetime(2026, 7, 10, 12, 0, 0, tzinfo=UTC)


class FakeClock:
    """A mutable clock: call it to read the time, :meth:`advance` it."""

    def __init__(self, now: datetime = EPOCH) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, now: datetime) -> None:
        self.now = now

    def advance(self, **delta: float) -> datetime:
        """Move forward by ``timedelta(**delta)`` (e.g. ``days=2``); returns the new time."""
        self.now += timedelta(**delta)
        return self.now

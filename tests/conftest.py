"""Fixtures shared by every test package: a controllable clock and a fresh store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from remem import Memory

#: The instant every test starts at (a fixed, ordinary weekday).
EPOCH = datetime(2026, 7, 10, 12, 0, 0, tzinfo=UTC)


class FakeClock:
    """A mutable clock for ``Memory.open(path, clock=...)``: call it to read, ``advance`` it."""

    def __init__(self, now: datetime = EPOCH) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        """Move forward by ``timedelta(**delta)`` (e.g. ``days=2``); returns the new time."""
        self.now += timedelta(**delta)
        return self.now

    def set(self, now: datetime) -> None:
        self.now = now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def clock_factory() -> type[FakeClock]:
    """For tests that need several independent clocks: ``clock_factory()`` is a new one."""
    return FakeClock


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def mem(data_dir: Path, clock: FakeClock) -> Iterator[Memory]:
    """An embedded store in a temporary directory, on the fake clock."""
    memory = Memory.open(data_dir, clock=clock)
    try:
        yield memory
    finally:
        memory.close()

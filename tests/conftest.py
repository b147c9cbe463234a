"""Fixtures shared by every test package: a controllable clock and a fresh store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from remem import Memory
from remem.testing.clock import EPOCH, FakeClock

__all__ = ["EPOCH", "FakeClock"]  # imported from here by older test modules


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

"""The Memory-level contract suite (remem.testing.memory_contract) on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

import pytest

from remem import Memory
from remem.testing.memory_contract import MemoryContract


class TestPgMemory(MemoryContract):
    """Every case's Memory opens the module's database: cases are kept apart by agent."""

    @pytest.fixture
    def memory_factory(self, pg_url: str) -> Iterator[Callable[[Callable[[], datetime]], Memory]]:
        opened: list[Memory] = []

        def factory(clock: Callable[[], datetime]) -> Memory:
            opened.append(Memory.open(pg_url, clock=clock))
            return opened[-1]

        yield factory
        for mem in opened:
            mem.close()

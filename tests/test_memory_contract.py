"""The Memory-level contract suite (remem.testing.memory_contract) against the embedded
JSONL backend, and the suite's own meta check."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from remem import Memory
from remem.testing import memory_contract
from remem.testing.memory_contract import MemoryContract, missing_cases
from remem.testing.memory_world import OK, case


class TestJsonlMemory(MemoryContract):
    """Every case's Memory opens the same data directory: cases are kept apart by agent."""

    @pytest.fixture
    def memory_factory(
        self, tmp_path: Path
    ) -> Iterator[Callable[[Callable[[], datetime]], Memory]]:
        opened: list[Memory] = []

        def factory(clock: Callable[[], datetime]) -> Memory:
            opened.append(Memory.open(tmp_path / "data", clock=clock))
            return opened[-1]

        yield factory
        for mem in opened:
            mem.close()


class TestInMemoryMemory(MemoryContract):
    """The same suite on ``memory://``: every open is a new private store, no files."""

    @pytest.fixture
    def memory_factory(self) -> Callable[[Callable[[], datetime]], Memory]:
        return lambda clock: Memory.open("memory://", clock=clock)


def test_the_meta_check_finds_a_method_without_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    class Partial:
        @case("get", OK)
        def test_get(self) -> None: ...

    report = missing_cases(Partial)
    assert ("get", "not_found") in report["without_case"]
    assert ("forget", "conflict") in report["without_case"]

    def brand_new(self: Memory) -> None: ...

    monkeypatch.setattr(Memory, "brand_new", brand_new, raising=False)
    assert missing_cases(MemoryContract)["not_in_table"] == ["brand_new"]
    monkeypatch.delitem(memory_contract.OUTCOMES_THAT_APPLY, "close")
    assert "close" in missing_cases(MemoryContract)["not_in_table"]

"""The in-memory backend: the EventLog contract suite, and what ``memory://`` promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from remem import Memory, RunContext
from remem.errors import InvalidInput, NotFound
from remem.store.memory import MemoryBackend, MemoryEventLog
from remem.testing.contract import EventLogContract
from remem.testing.contract_seq import SeqContract


class TestMemoryEventLog(EventLogContract, SeqContract):
    """Handles on one backend's agent behave like processes sharing one log."""

    def setup_method(self, method: object) -> None:
        super().setup_method(method)
        self.backends: dict[Path, MemoryBackend] = {}

    def make_log(self, tmp_path: Path) -> MemoryEventLog:
        backend = self.backends.setdefault(tmp_path, MemoryBackend())
        return backend.event_log("yuko")


def test_every_open_is_a_new_private_store(tmp_path: Path) -> None:
    ctx = RunContext.owner("yuko")
    one = Memory.open("memory://")
    note = one.remember(ctx, "The deploy window is Friday.", scope="agent")
    assert one.get(ctx, note.id).text == "The deploy window is Friday."
    two = Memory.open("memory://")
    with pytest.raises(NotFound):
        two.get(ctx, note.id)
    assert two.agents() == [] and one.agents() == ["yuko"]
    assert list(tmp_path.iterdir()) == []  # and nothing was written anywhere


def test_a_named_memory_store_is_refused() -> None:
    with pytest.raises(InvalidInput, match="takes no name"):
        Memory.open("memory://shared")


def test_rules_and_secret_live_in_the_backend() -> None:
    backend = MemoryBackend()
    backend.write_rule("yuko", "tone", "Be brief.")
    assert backend.read_rules("yuko") == {"tone": "Be brief."}
    backend.write_rule("yuko", "tone", "")
    assert backend.read_rules("yuko") == {}
    with pytest.raises(InvalidInput):
        backend.write_rule("yuko", "../escape", "x")
    secret = backend.agent_secret("yuko")
    assert len(secret) == 32 and backend.agent_secret("yuko") == secret
    assert MemoryBackend().agent_secret("yuko") != secret

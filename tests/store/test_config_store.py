"""The config store contract (remem.testing.contract_config) against both backends."""

from __future__ import annotations

from pathlib import Path

from remem.store.jsonl import JsonlBackend
from remem.store.memory import MemoryBackend
from remem.testing.contract_config import ConfigStoreContract


class TestJsonlConfigStore(ConfigStoreContract):
    """One backend object per handle, as separate processes would have."""

    def make_store(self, tmp_path: Path) -> JsonlBackend:
        return JsonlBackend(tmp_path / "data")


class TestMemoryConfigStore(ConfigStoreContract):
    def setup_method(self, method: object) -> None:
        self.stores: dict[Path, MemoryBackend] = {}

    def make_store(self, tmp_path: Path) -> MemoryBackend:
        return self.stores.setdefault(tmp_path, MemoryBackend())

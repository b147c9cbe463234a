"""The contract of the config store's records (:class:`remem.store.base.ConfigStore`).

Subclass :class:`ConfigStoreContract` (name it ``Test…``) and implement
``make_store(tmp_path)``: a new handle on the store ``tmp_path`` names (two calls,
two handles on one store, as two processes would open it)::

    class TestJsonlConfig(ConfigStoreContract):
        def make_store(self, tmp_path):
            return JsonlBackend(tmp_path / "data")
"""

from __future__ import annotations

import abc
from pathlib import Path

from remem.errors import Conflict, InvalidInput
from remem.store.base import ConfigStore

__all__ = ["ConfigStoreContract"]


def _raises(error: type[Exception], call: object, *args: object, **kwargs: object) -> None:
    try:
        call(*args, **kwargs)  # type: ignore[operator]
    except error:
        return
    raise AssertionError(f"expected {error.__name__}")


class ConfigStoreContract(abc.ABC):
    @abc.abstractmethod
    def make_store(self, tmp_path: Path) -> ConfigStore: ...

    def test_a_record_round_trips_with_its_version(self, tmp_path: Path) -> None:
        one, two = self.make_store(tmp_path), self.make_store(tmp_path)
        assert one.read_record("tokens", "h:1") is None
        assert one.write_record("tokens", "h:1", {"agent": "yuko", "n": [1, 2]}, if_version=0) == 1
        got = two.read_record("tokens", "h:1")
        assert got is not None and (got.value, got.version) == ({"agent": "yuko", "n": [1, 2]}, 1)
        assert two.write_record("tokens", "h:1", {"agent": "kai"}, if_version=None) == 2
        assert one.record_keys("tokens") == ["h:1"] and one.record_keys("slots") == []

    def test_a_stale_version_is_a_conflict_and_writes_nothing(self, tmp_path: Path) -> None:
        one, two = self.make_store(tmp_path), self.make_store(tmp_path)
        one.write_record("slots", "dm_1", {"ct": "a"}, if_version=0)
        two.write_record("slots", "dm_1", {"ct": "b"}, if_version=1)
        _raises(Conflict, one.write_record, "slots", "dm_1", {"ct": "c"}, if_version=1)
        _raises(Conflict, one.write_record, "slots", "dm_9", {"ct": "c"}, if_version=3)
        got = one.read_record("slots", "dm_1")
        assert got is not None and (got.value, got.version) == ({"ct": "b"}, 2)

    def test_none_deletes(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        store.write_record("sessions", "s1", {"member": "u:1"}, if_version=None)
        assert store.write_record("sessions", "s1", None, if_version=1) == 0
        assert store.read_record("sessions", "s1") is None
        assert store.record_keys("sessions") == []

    def test_names_are_not_paths(self, tmp_path: Path) -> None:
        store = self.make_store(tmp_path)
        for collection, key in [("../x", "k"), ("Tokens", "k"), ("t", "../k"), ("t", "")]:
            _raises(InvalidInput, store.write_record, collection, key, {}, if_version=None)
            _raises(InvalidInput, store.read_record, collection, key)

    def test_rules_and_the_secret(self, tmp_path: Path) -> None:
        one, two = self.make_store(tmp_path), self.make_store(tmp_path)
        one.write_rule("yuko", "tone", "Be brief.")
        assert two.read_rules("yuko") == {"tone": "Be brief."}
        one.write_rule("yuko", "tone", "")
        assert two.read_rules("yuko") == {}
        _raises(InvalidInput, one.write_rule, "yuko", "../escape", "x")
        secret = one.agent_secret("yuko")
        assert len(secret) == 32 and two.agent_secret("yuko") == secret
        assert one.agent_secret("kai") != secret

"""The catalog cache: a derived snapshot that lets a big log open without a full scan.

It must never change an answer: a fresh, stale, damaged or foreign cache gives
the same notes as a full scan of the log, and compaction removes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from remem import Memory, RunContext
from remem.app import agent_state as agentlog_module
from remem.store.catalog import CatalogState

AGENT = "yuko"


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def dm(user: str) -> RunContext:
    return RunContext.dm(AGENT, f"dm:{user}", user)


def cache(data: Path) -> Path:
    return data / "agents" / AGENT / "catalog.cache"


def snapshot_of(data: Path) -> list[tuple[str, str, str]]:
    with Memory.open(data) as mem:
        return [(n.id, n.status.value, n.text) for n in mem.list(owner(), status=None)]


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the log position of every line a full scan observes."""
    scanned: list[int] = []
    observe = CatalogState.observe

    def counting(self: CatalogState, data: dict[str, Any], pos: int) -> list[Any]:
        scanned.append(pos)
        return observe(self, data, pos)

    monkeypatch.setattr(CatalogState, "observe", counting)
    return scanned


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    # Write the cache after any scan, so small logs exercise it.
    monkeypatch.setattr(agentlog_module, "FREEZE_AFTER", 1)


def populate(data: Path, start: int, count: int) -> list[str]:
    with Memory.open(data) as mem:
        ids = []
        for i in range(start, start + count):
            note = mem.remember(dm(f"u:{i % 3}"), f"Prefers option number {i}.")
            ids.append(note.id)
        return ids


def test_a_big_scan_writes_the_cache_and_a_reopen_uses_it(
    tmp_path: Path, small_threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = populate(tmp_path, 0, 12)
    expected = snapshot_of(tmp_path)  # full scan: writes the cache
    assert cache(tmp_path).exists()
    scanned = count_scans(monkeypatch)
    assert snapshot_of(tmp_path) == expected
    assert scanned == []  # resumed from the cache: no log line was scanned again
    cache(tmp_path).unlink()
    assert snapshot_of(tmp_path) == expected
    assert len(scanned) == 12 + 3  # without it, the whole log is scanned (the 3 DMs' kinds)
    assert ids


def test_a_first_write_after_opening_also_resumes_from_the_cache(
    tmp_path: Path, small_threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    populate(tmp_path, 0, 12)
    expected = snapshot_of(tmp_path)  # writes the cache
    scanned = count_scans(monkeypatch)
    with Memory.open(tmp_path) as mem:
        note = mem.remember(dm("u:new"), "Written first thing after opening.")
    assert scanned == []  # the write opened the agent from the cache, not by a scan
    assert snapshot_of(tmp_path) == sorted([*expected, (note.id, "active", note.text)])


def test_a_stale_cache_is_caught_up_from_the_log(tmp_path: Path, small_threshold: None) -> None:
    populate(tmp_path, 0, 6)
    snapshot_of(tmp_path)
    written = cache(tmp_path).read_bytes()
    more = populate(tmp_path, 6, 5)
    cache(tmp_path).write_bytes(written)  # the cache now predates five notes
    with Memory.open(tmp_path) as mem:
        texts = {n.text for n in mem.list(owner(), status=None)}
        assert all(mem.get(owner(), i).text in texts for i in more)
        assert len(texts) == 11


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],
        lambda raw: b"not json at all",
        lambda raw: raw.replace(b'"v":1', b'"v":99'),
        lambda raw: raw.replace(b'"tail_crc":', b'"tail_crc":1'),
    ],
    ids=["truncated", "garbage", "newer-version", "foreign-log"],
)
def test_a_damaged_or_foreign_cache_costs_a_scan_not_correctness(
    tmp_path: Path, small_threshold: None, damage: object
) -> None:
    populate(tmp_path, 0, 8)
    expected = snapshot_of(tmp_path)
    path = cache(tmp_path)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert snapshot_of(tmp_path) == expected


def test_a_cache_of_a_replaced_log_is_not_used(tmp_path: Path, small_threshold: None) -> None:
    ids = populate(tmp_path, 0, 6)
    snapshot_of(tmp_path)
    written = cache(tmp_path).read_bytes()
    with Memory.open(tmp_path) as mem:
        mem.forget(owner(), ids[0])
        mem.compact(owner())  # rewrites the log (new inode) and its derived caches
    assert cache(tmp_path).read_bytes() != written  # a fresh one, for the new log
    cache(tmp_path).write_bytes(written)  # an old cache put back by hand
    with Memory.open(tmp_path) as mem:
        live = [n.id for n in mem.list(owner(), status=None)]
    assert ids[0] not in live
    assert sorted(live) == sorted(ids[1:])


def test_compaction_writes_the_caches_again_without_the_erased(
    tmp_path: Path, small_threshold: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = populate(tmp_path, 0, 12)
    with Memory.open(tmp_path) as mem:
        mem.forget(owner(), ids[3])
        report = mem.compact(owner())
        assert ids[3] in report.notes_erased
    assert cache(tmp_path).exists()  # written again after the scrub
    assert b"option number 3." not in cache(tmp_path).read_bytes()
    expected = snapshot_of(tmp_path)
    assert ids[3] not in [i for i, _, _ in expected] and len(expected) == 11
    scanned = count_scans(monkeypatch)
    assert snapshot_of(tmp_path) == expected
    assert scanned == []  # the reopen after compaction resumed from the fresh cache

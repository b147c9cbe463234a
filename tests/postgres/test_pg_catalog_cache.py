"""The catalog snapshot on PostgreSQL (``remem_caches``): a host opening a big agent
resumes from it instead of folding every event; a stale snapshot is caught up, one of a
compacted (replaced) log is not used, and it never changes an answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from remem import Memory, RunContext
from remem.app import agent_state as agentlog_module
from remem.store.postgres import events as pg_events
from remem.store.postgres.backend import PgBackend
from remem.testing import postgres_server
from store.test_catalog_cache import count_scans


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agentlog_module, "FREEZE_AFTER", 1)  # small logs write it too


def _snapshot(url: str, agent: str) -> list[tuple[str, str, str]]:
    with Memory.open(url) as mem:
        notes = mem.list(RunContext.owner(agent), status=None)
        return sorted((n.id, n.status.value, n.text) for n in notes)


def _populate(url: str, agent: str, start: int, count: int) -> list[str]:
    with Memory.open(url) as mem:
        return [
            mem.remember(RunContext.dm(agent, f"dm:{i % 3}", f"u:{i % 3}"), f"Option {i}.").id
            for i in range(start, start + count)
        ]


def _cache(backend: PgBackend, agent: str) -> bytes | None:
    cache = backend.cache(agent, "catalog")
    assert cache is not None
    with cache.mapped() as body:
        return None if body is None else bytes(body)


@pytest.mark.parametrize("prefetch_after", [32, 0], ids=["by-scope", "prefetched"])
def test_a_reopen_resumes_from_the_snapshot_and_a_stale_one_is_caught_up(
    pg_url: str,
    pg_backend: PgBackend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    prefetch_after: int,
) -> None:
    """Resumed, the listing reads each scope by position: one read per scope, or (past
    PREFETCH_AFTER misses) every event of the agent in one read; the same notes either way."""
    monkeypatch.setattr(pg_events, "PREFETCH_AFTER", prefetch_after)
    agent = postgres_server.agent_for(tmp_path)
    _populate(pg_url, agent, 0, 12)
    expected = _snapshot(pg_url, agent)  # a full scan: writes the snapshot
    assert _cache(pg_backend, agent)
    scanned = count_scans(monkeypatch)
    assert _snapshot(pg_url, agent) == expected
    assert scanned == []  # resumed: no event folded again
    more = _populate(pg_url, agent, 12, 3)  # the snapshot now predates three notes
    got = _snapshot(pg_url, agent)
    assert {i for i, _, _ in got} == {i for i, _, _ in expected} | set(more)
    assert len(scanned) == 3, scanned  # only the three notes written after it


def test_a_snapshot_of_a_compacted_log_is_not_used(
    pg_url: str, pg_backend: PgBackend, tmp_path: Path
) -> None:
    agent = postgres_server.agent_for(tmp_path)
    ids = _populate(pg_url, agent, 0, 6)
    _snapshot(pg_url, agent)
    old = _cache(pg_backend, agent)
    with Memory.open(pg_url) as mem:
        mem.forget(RunContext.owner(agent), ids[0])
        mem.compact(RunContext.owner(agent))
    assert _cache(pg_backend, agent) != old
    assert old is not None and b"Option 0." not in (_cache(pg_backend, agent) or b"")
    cache = pg_backend.cache(agent, "catalog")
    assert cache is not None
    cache.replace([old])  # an old snapshot put back by hand
    live = [i for i, _, _ in _snapshot(pg_url, agent)]
    assert ids[0] not in live and sorted(live) == sorted(ids[1:])

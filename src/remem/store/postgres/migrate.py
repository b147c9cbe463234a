"""``remem migrate``: copy an embedded (JSONL) store into a PostgreSQL database, and verify.

Per agent, in one transaction under the agent's row lock: every event in log order
with its seq and ids kept (a compaction's holes stay holes; erased eids become
tombstones), then its rules, its secret (keyed hashes must match after the move) and
its recall traces; then the service's records (tokens, member links, sessions,
slots) with their versions' content. A target agent that already has events is
refused (nothing is merged). The result is read back and compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from remem.core.names import check_agent
from remem.errors import Conflict, StoreError
from remem.store.jsonl import JsonlBackend
from remem.store.postgres.backend import PgBackend


@dataclass
class MigrationReport:
    """What was copied: events per agent, and the records per collection."""

    events: dict[str, int] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)


def migrate(src: JsonlBackend, dst: PgBackend) -> MigrationReport:
    """Copy ``src`` into ``dst`` and verify it (``StoreError`` when the copy differs)."""
    report = MigrationReport()
    agents = src.agents()
    for agent in agents:
        check_agent(agent)  # before anything is copied: a reserved name is renamed first
    for agent in agents:
        report.events[agent] = _copy_agent(src, dst, agent)
    for collection in src.record_collections():
        keys = src.record_keys(collection)
        for key in keys:
            record = src.read_record(collection, key)
            if record is not None:
                dst.write_record(collection, key, record.value, if_version=None)
        report.records[collection] = len(keys)
    _verify(src, dst, report)
    return report


def _copy_agent(src: JsonlBackend, dst: PgBackend, agent: str) -> int:
    events = src.event_log(agent).read_after(0)
    target = dst.event_log(agent)
    with target.transaction() as txn:
        if txn.caught_up.events:
            raise Conflict(
                f"agent {agent!r} already has events in {dst.url}; migrate into an empty "
                "database (nothing was copied for it)"
            )
        if events:
            txn.rewrite(events)
    for name, content in src.read_rules(agent).items():
        dst.write_rule(agent, name, content)
    dst.adopt_secret(agent, src.agent_secret(agent))
    traces = src.trace_log(agent).all()
    if traces:
        dst.trace_log(agent).rewrite(traces)
    return len(events)


def _verify(src: JsonlBackend, dst: PgBackend, report: MigrationReport) -> None:
    for agent in report.events:
        if dst.event_log(agent).read_after(0) != src.event_log(agent).read_after(0):
            raise StoreError(f"agent {agent!r}: the copied events differ from the source")
        if dst.read_rules(agent) != src.read_rules(agent):
            raise StoreError(f"agent {agent!r}: the copied rules differ from the source")
    for collection in report.records:
        for key in src.record_keys(collection):
            a, b = src.read_record(collection, key), dst.read_record(collection, key)
            if a is None or b is None or a.value != b.value:
                raise StoreError(f"record {collection}/{key}: the copy differs from the source")

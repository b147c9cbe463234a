"""Recall test helpers: a small cast of people and channels, and ways to seed states.

Most states are reached through the public API. States no public API can
produce yet (pending, unverified, superseded notes) are appended to the log as
events through a second backend handle, exactly as another process writing
the same data directory would; the store under test catches up on its next
read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import pytest

from remem import Memory, Note, Role, RunContext, Status
from remem.core.events import Approved, Event, Remembered, Superseded
from remem.core.ids import new_id
from remem.core.model import Basis, Kind, Scope, Source
from remem.recall.trace import Trace
from remem.store.jsonl import JsonlBackend

AGENT = "yuko"
ALICE = "discord:100"
BOB = "discord:200"
CAROL = "discord:300"
ADMIN = "discord:900"
DM_ALICE = "discord:dm-alice"
DM_ALICE_2 = "discord:dm-alice-2"
DM_BOB = "discord:dm-bob"
DM_ADMIN = "discord:dm-admin"
GENERAL = "discord:general"
RANDOM = "discord:random"

#: Names for the skip markers of tests that need policy API still being built.
HAS_CHANNEL_POLICY = hasattr(Memory, "set_channel_policy")
HAS_PREFERENCES = hasattr(Memory, "set_my_preferences")
needs_channel_policy = pytest.mark.skipif(
    not HAS_CHANNEL_POLICY, reason="Memory.set_channel_policy does not exist yet"
)
needs_preferences = pytest.mark.skipif(
    not HAS_PREFERENCES, reason="Memory.set_my_preferences does not exist yet"
)


class Clock(Protocol):
    """The ``clock`` fixture (``tests/conftest.py``): read it, set ``now``, ``advance`` it."""

    now: datetime

    def __call__(self) -> datetime: ...

    def advance(self, **delta: float) -> datetime: ...


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def admin() -> RunContext:
    return RunContext.dm(AGENT, DM_ADMIN, ADMIN, role=Role.ADMIN)


def dm_alice(**kw: object) -> RunContext:
    return RunContext.dm(AGENT, DM_ALICE, ALICE, **kw)  # type: ignore[arg-type]


def dm_bob(**kw: object) -> RunContext:
    return RunContext.dm(AGENT, DM_BOB, BOB, **kw)  # type: ignore[arg-type]


def group(actor: str = ALICE, channel: str = GENERAL) -> RunContext:
    return RunContext.group(AGENT, channel, actor)


def reasons(mem: Memory, run_id: str, viewer: RunContext | None = None) -> dict[str, str]:
    """``note id → reason`` of a run's exclusions, read back through ``Memory.explain``."""
    trace = mem.explain(viewer or owner(), run_id)
    out = dict(trace.excluded)
    assert len(out) == len(trace.excluded), "a note was excluded twice"
    return out


def explain(mem: Memory, run_id: str) -> Trace:
    return mem.explain(owner(), run_id)


def texts(notes: Sequence[Note]) -> list[str]:
    return [n.text for n in notes]


def make_active(mem: Memory, note: Note) -> Note:
    """Bring a note that review policy held back (pending/unverified) into recall."""
    if note.status is Status.ACTIVE:
        return note
    approve = getattr(mem, "approve", None)
    if approve is not None:
        approved: Note = approve(owner(), note.id)
        return approved
    append_events(
        mem, [Approved(note_id=note.id, eid=new_id("ev"), ts=mem.clock(), actor="local:owner")]
    )
    return mem.get(owner(), note.id)


def inferred(mem: Memory, ctx: RunContext, text: str, **kw: object) -> Note:
    """An *active* inferred note (approved if review policy held it back)."""
    note = mem.remember(ctx, text, basis="inferred", **kw)  # type: ignore[arg-type]
    return make_active(mem, note)


# -- seeding through the log, as another writer would ------------------------------------


def _data_dir(mem: Memory) -> Path:
    url = mem.backend.url
    assert url.startswith("jsonl://"), url
    return Path(url[len("jsonl://") :])


def append_events(mem: Memory, events: Sequence[Event]) -> None:
    """Append events through an independent backend handle (another 'process')."""
    backend = JsonlBackend(_data_dir(mem))
    try:
        with backend.event_log(AGENT).transaction() as txn:
            txn.append(events)
    finally:
        backend.close()


def remembered(
    mem: Memory,
    text: str,
    *,
    scope: Scope = Scope.AGENT,
    scope_id: str | None = None,
    status: Status = Status.ACTIVE,
    basis: Basis = Basis.EXPLICIT,
    kind: Kind = Kind.FACT,
    channel: str | None = None,
    ts: datetime | None = None,
) -> Remembered:
    return Remembered(
        note_id=new_id("note"),
        eid=new_id("ev"),
        ts=ts or mem.clock(),
        actor="local:owner",
        role="owner",
        channel=channel,
        scope=scope,
        scope_id=scope_id,
        kind=kind,
        text=text,
        basis=basis,
        status=status,
        source=Source(channel_id=channel, author_id="local:owner"),
    )


def superseded(mem: Memory, old: str, new: str) -> Superseded:
    return Superseded(
        note_id=old,
        by=new,
        revision_id=new_id("rev"),
        how="rule",
        eid=new_id("ev"),
        ts=mem.clock(),
        actor="local:owner",
    )


# -- a small world -------------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    """One note in each place; attribute = note id."""

    agent: str
    ch_dm_alice: str
    ch_dm_bob: str
    ch_general: str
    ch_random: str
    user_alice: str
    user_bob: str

    def all(self) -> set[str]:
        return set(vars(self).values())


def build_world(mem: Memory) -> World:
    """Agent, four channels and two people, each with one distinctive note."""
    return World(
        agent=mem.remember(owner(), "Yuko signs replies with a wave.", scope="agent").id,
        ch_dm_alice=mem.remember(
            dm_alice(), "This DM tracks the garden planning.", scope="channel"
        ).id,
        ch_dm_bob=mem.remember(dm_bob(), "This DM tracks the chess club.", scope="channel").id,
        ch_general=mem.remember(group(), "General chat meets on Fridays.", scope="channel").id,
        ch_random=mem.remember(
            group(channel=RANDOM), "Random is for cat pictures.", scope="channel"
        ).id,
        user_alice=mem.remember(dm_alice(), "Alice prefers tulips over roses.").id,
        user_bob=mem.remember(dm_bob(), "Bob prefers the Sicilian defence.").id,
    )

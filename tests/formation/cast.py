"""The people and places the formation tests share, and their standing check.

Import ``no_operational_from_non_admins`` into a test module and it runs after
every test there: no agent-scope or procedure note from a non-admin may be live.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from remem import Memory, Message, Role, RunContext

from .test_learn_matrix import operational_from_non_admins

AGENT = "yuko"
GENERAL = "discord:general"
ALICE = "discord:900"  # an admin
ADMINS = frozenset({ALICE})
BOB = "discord:100"  # a member
CAROL = "discord:200"  # another member


@pytest.fixture(autouse=True)
def no_operational_from_non_admins(mem: Memory) -> Iterator[None]:
    yield
    assert operational_from_non_admins(mem, ADMINS) == []


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def admin() -> RunContext:
    return RunContext.group(AGENT, GENERAL, ALICE, role=Role.ADMIN)


def member(user: str) -> RunContext:
    return RunContext.group(AGENT, GENERAL, user)


def teach(mem: Memory, text: str, mid: str, ts: datetime, ctx: RunContext | None = None) -> str:
    """An admin states one procedure; returns the new note's id."""
    report = mem.learn(ctx or admin(), [Message(ALICE, Role.ADMIN, text, mid, ts)])
    (note,) = report.learned
    return note.id

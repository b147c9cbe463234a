"""Fixtures of the recall tests (helpers live in :mod:`.helpers`)."""

from __future__ import annotations

import pytest

from remem import Memory

from .helpers import World, build_world


@pytest.fixture
def world(mem: Memory) -> World:
    """One distinctive note in the agent scope, four channels and two people's scopes."""
    return build_world(mem)

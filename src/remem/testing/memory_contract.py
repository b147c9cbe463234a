"""The contract every :class:`~remem.Memory` must pass, whatever stores it.

Subclass :class:`MemoryContract` in a test module (name the subclass ``Test…`` so
pytest collects it) and provide a ``memory_factory`` fixture: a function that takes
a clock (a callable returning the current ``datetime``) and returns a ``Memory`` on
the backend under test, reading time from that clock::

    import pytest
    from remem import Memory
    from remem.testing.memory_contract import MemoryContract

    class TestJsonlMemory(MemoryContract):
        @pytest.fixture
        def memory_factory(self, tmp_path):
            return lambda clock: Memory.open(tmp_path / "data", clock=clock)

Every case runs through the public API only and names a fresh agent, so the
factory may return Memories on one shared store (a PostgreSQL database, an HTTP
service); it may also return a new store each time. Nothing here knows about
files: compaction is checked by what it erases, not by what it leaves on disk.

The cases check the stable promises of DESIGN §4.1: authorization (members never
read another person's notes nor write agent-wide memory; invisible is
``NotFound``, visible but forbidden is ``Denied``), optimistic versions
(``Conflict`` with the current note), policy layers, review, formation (only an
admin's words become operational knowledge), belief revision and compaction.

:data:`OUTCOMES_THAT_APPLY` says, for every public method, which outcomes it has:
success (``ok``) always, and ``denied``, ``not_found`` and ``conflict`` where the
method can raise them. The meta test fails when a public method is missing from
that table or when a listed outcome has no case marked with :func:`case`: a new
method or a new refusal needs its contract case before it lands.

This module does not import pytest; it ships with the package.
"""

from __future__ import annotations

import inspect
from typing import Any

from remem.service import Memory
from remem.testing.memory_cases_changes import ChangeCases
from remem.testing.memory_cases_e2ee import E2eeCases
from remem.testing.memory_cases_formation import FormationCases
from remem.testing.memory_cases_kinds import KindCases
from remem.testing.memory_cases_notes import NoteCases
from remem.testing.memory_cases_policy import PolicyCases
from remem.testing.memory_cases_tools import ToolCases
from remem.testing.memory_world import CONFLICT, DENIED, NOT_FOUND, OK

_CHANGE = frozenset({OK, DENIED, NOT_FOUND, CONFLICT})
_GUARDED = frozenset({OK, DENIED})
_LOOKUP = frozenset({OK, NOT_FOUND})
_REVIEW = frozenset({OK, DENIED, NOT_FOUND})

#: Which outcomes each public ``Memory`` method has (``Conflict`` only where it takes
#: ``if_version``; ``NotFound`` where it names a note, run or revision by id).
OUTCOMES_THAT_APPLY: dict[str, frozenset[str]] = {
    "remember": _GUARDED,
    "forget": _CHANGE,
    "correct": _CHANGE,
    "move": _CHANGE,
    "disable": _CHANGE,
    "enable": _CHANGE,
    "pin": _CHANGE,
    "unpin": _CHANGE,
    "get": _LOOKUP,
    "list": _GUARDED,
    "history": _LOOKUP,
    "status_of": frozenset({OK}),
    "tags": frozenset({OK}),
    "subscribe": _GUARDED,
    "recall": _GUARDED,
    "compile": _GUARDED,
    "explain": _LOOKUP,
    "writes": frozenset({OK}),
    "pending": frozenset({OK}),
    "approve": _REVIEW,
    "reject": _REVIEW,
    "rules": _GUARDED,
    "set_rule": _GUARDED,
    "set_channel_policy": _GUARDED,
    "channel_policy": _GUARDED,
    "set_channel_kind": _GUARDED,
    "channel_kinds": _GUARDED,
    "effective_policy": _GUARDED,
    "set_my_preferences": _GUARDED,
    "limits": frozenset({OK}),
    "compact": _GUARDED,
    "learn": frozenset({OK}),
    "relearn": _GUARDED,
    "supersede": _REVIEW,
    "revisions": frozenset({OK}),
    "undo": _REVIEW,
    "undo_run": _REVIEW,
    "consolidate": _GUARDED,
    "command": frozenset({OK}),
    "member_link": _GUARDED,
    "dm_slot": _GUARDED,
    "put_dm_slot": frozenset({OK, DENIED, CONFLICT}),
    "agents": frozenset({OK}),
    "repairs": frozenset({OK}),
    "trash_agent": _GUARDED,
    "close": frozenset({OK}),
    "for_principal": _GUARDED,
    # Refusals come back as results (``is_error``), not raised: success is the outcome.
    "tool_specs": frozenset({OK}),
    "run_tool": frozenset({OK}),
}
#: Public methods with no case of their own, and why.
EXEMPT = {"open": "every case's Memory comes from the backend's memory_factory"}


def public_methods() -> set[str]:
    """The public methods of :class:`Memory`, as ``inspect`` finds them."""
    return {
        name
        for name, member in inspect.getmembers(Memory)
        if not name.startswith("_") and callable(member)
    }


def marked_cases(cls: type) -> dict[str, set[str]]:
    """method → outcomes, from the :func:`case` marks on ``cls``'s test methods."""
    covered: dict[str, set[str]] = {}
    for name, func in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("test_"):
            for method, outcome in getattr(func, "contract_cases", ()):
                covered.setdefault(method, set()).add(outcome)
    return covered


def missing_cases(cls: type) -> dict[str, Any]:
    """What the meta test reports: methods absent from the table, table rows naming no
    method, and outcomes with no case."""
    methods = public_methods() - set(EXEMPT)
    covered = marked_cases(cls)
    report: dict[str, Any] = {
        "not_in_table": sorted(methods - set(OUTCOMES_THAT_APPLY)),
        "not_a_method": sorted(set(OUTCOMES_THAT_APPLY) - methods),
        "marked_but_not_applicable": sorted(
            (m, o) for m, outs in covered.items() for o in outs - OUTCOMES_THAT_APPLY.get(m, set())
        ),
    }
    report["without_case"] = sorted(
        (m, o) for m, outs in OUTCOMES_THAT_APPLY.items() for o in outs - covered.get(m, set())
    )
    return {k: v for k, v in report.items() if v}


class MemoryContract(
    NoteCases, PolicyCases, FormationCases, ChangeCases, E2eeCases, ToolCases, KindCases
):
    """The Memory-level contract; see the module docstring for how to run it."""

    def test_every_public_method_has_its_cases(self) -> None:
        """Every public method has a success case and, where they apply, a ``Denied``, a
        ``NotFound`` and a ``Conflict`` case."""
        assert missing_cases(type(self)) == {}


__all__ = ["EXEMPT", "OUTCOMES_THAT_APPLY", "MemoryContract", "missing_cases", "public_methods"]

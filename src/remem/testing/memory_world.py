"""The pieces the Memory-level contract suite is built from (see
:mod:`remem.testing.memory_contract`): one case's world, the outcome marks, and a
``raises`` that needs no test framework.

A :class:`World` is one case: a fresh, unique agent name in a store the backend's
factory opened, a clock the case moves by hand, and the envelopes of the people the
cases use. Cases never share an agent, so a backend may hand every case the same
store (one PostgreSQL database, one HTTP service).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from remem.context import Role, RunContext
from remem.core.ids import new_id
from remem.core.model import Note
from remem.service import Memory
from remem.testing.clock import EPOCH, FakeClock

#: Outcomes a case demonstrates for a method.
OK, DENIED, NOT_FOUND, CONFLICT = "ok", "denied", "not_found", "conflict"
OUTCOMES = (OK, DENIED, NOT_FOUND, CONFLICT)


E = TypeVar("E", bound=BaseException)
F = TypeVar("F", bound=Callable[..., Any])

#: ``memory_factory(clock)``: a Memory on the backend under test, reading time from ``clock``
#: (``Memory.open(location, clock=clock)``).
MemoryFactory = Callable[[Callable[[], datetime]], Memory]


#: The clock a case moves (the package's test clock).
Clock = FakeClock


def case(method: str, *outcomes: str) -> Callable[[F], F]:
    """Mark a test as the case showing ``outcomes`` of ``Memory.<method>``; the meta test of
    :class:`~remem.testing.memory_contract.MemoryContract` reads these marks."""
    unknown = set(outcomes) - set(OUTCOMES)
    if unknown or not outcomes:
        raise ValueError(f"outcomes must be among {OUTCOMES}, not {sorted(unknown)}")

    def mark(func: F) -> F:
        marks: list[tuple[str, str]] = getattr(func, "contract_cases", [])
        func.contract_cases = [*marks, *((method, o) for o in outcomes)]  # type: ignore[attr-defined]
        return func

    return mark


def raises(error: type[E], call: Callable[..., Any], *args: Any, **kwargs: Any) -> E:
    """Call ``call``; return the ``error`` it raises, fail when it raises nothing."""
    try:
        result = call(*args, **kwargs)
    except error as exc:
        return exc
    raise AssertionError(f"expected {error.__name__}, got the result {result!r:.200}")


class World:
    """One case: a Memory, a clock, a unique agent and the envelopes of its people.

    People: the owner; ``ALICE`` (an admin); ``BOB`` and ``CAROL`` (members); the
    channels ``general`` and ``random``."""

    ALICE, BOB, CAROL = "user:alice", "user:bob", "user:carol"
    GENERAL, RANDOM = "chan:general", "chan:random"

    def __init__(self, factory: MemoryFactory) -> None:
        self.clock = Clock()
        self.mem = factory(self.clock)
        self.agent = new_id("ct").lower()

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.mem.close()

    def owner(self) -> RunContext:
        return RunContext.owner(self.agent)

    def admin(self, channel: str | None = None) -> RunContext:
        return RunContext.group(self.agent, channel or self.GENERAL, self.ALICE, role=Role.ADMIN)

    def member(self, user: str | None = None, channel: str | None = None) -> RunContext:
        """A member speaking in a shared channel (``general`` unless named)."""
        return RunContext.group(self.agent, channel or self.GENERAL, user or self.BOB)

    def dm(self, user: str | None = None) -> RunContext:
        user = user or self.BOB
        return RunContext.dm(self.agent, f"dm:{user}", user)

    def unpaired(self) -> RunContext:
        return RunContext.dm(self.agent, "dm:stranger", "user:stranger", role=Role.UNPAIRED)

    def cron(self) -> RunContext:
        return RunContext.system(self.agent, Role.CRON, channel=self.GENERAL)

    def agent_note(self, text: str = "Deploys need a green build.") -> Note:
        return self.mem.remember(self.owner(), text, scope="agent")

    def user_note(self, user: str | None = None, text: str = "Prefers short replies.") -> Note:
        return self.mem.remember(self.dm(user), text, scope="user")

    def missing_id(self) -> str:
        return new_id("note")


__all__ = [
    "CONFLICT",
    "DENIED",
    "EPOCH",
    "NOT_FOUND",
    "OK",
    "OUTCOMES",
    "Clock",
    "MemoryFactory",
    "World",
    "case",
    "raises",
]

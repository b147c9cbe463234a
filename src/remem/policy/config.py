"""Policy settings and their defaults (the layered merge lives in :mod:`remem.policy.layers`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from remem.core.model import Kind

ALL_KINDS = frozenset(Kind)
#: The memory tools a model may be offered (:mod:`remem.tools`); policy narrows the set.
TOOL_NAMES = frozenset({"remember", "forget", "recall"})


@dataclass(frozen=True, slots=True)
class Limits:
    """The effective limits for one place (agent, channel, participant), after merging."""

    enabled: bool = True
    kinds: frozenset[Kind] = field(default_factory=lambda: ALL_KINDS)
    inferred: str = "review"  # auto | review | off | evidence:N
    agent_writes: str = "auto"  # auto | review  (agent-scope writes by system principals)
    cross_channel_user_recall: str = "opt_in"  # on | opt_in | off
    group_user_recall: bool = False
    max_note_chars: int = 500
    max_notes_per_scope: int = 10_000
    retention_days: int | None = None
    recall_max_notes: int = 20
    recall_max_chars: int = 6_000
    agent_write_access: frozenset[str] = frozenset()
    rule_learning: str = "review"  # off | review | auto
    max_rule_chars: int = 8_000
    #: Memory tools a run may offer its model (each run kind's own set, narrowed to these).
    tools: frozenset[str] = TOOL_NAMES
    #: Notes a model writes with the ``remember`` tool in a DM: ``announce`` (active at
    #: once; the member sees the receipt chip) or ``review`` (pending until reviewed).
    tool_writes: str = "announce"
    #: End-to-end encrypted (a DM's channel policy): no message text in the clear.
    e2ee: bool = False


DEFAULT_LIMITS = Limits()

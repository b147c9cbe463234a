"""remem: governed interaction memory for AI agents.

>>> from remem import Memory, RunContext
>>> mem = Memory.open("./remem-data")                                    # doctest: +SKIP
>>> ctx = RunContext.dm(agent="yuko", channel="discord:456", user="discord:123")
>>> mem.remember(ctx, "Prefers replies of one or two sentences.")        # doctest: +SKIP
"""

from remem.app.commands import Reply
from remem.app.envelope import envelope_from_json
from remem.app.principal import HostPrincipal, MemberSession, OwnerPrincipal, run_context
from remem.context import Role, RunContext, RunKind
from remem.core.events import Event
from remem.core.model import Basis, Kind, Note, Scope, Source, Status
from remem.errors import (
    ConfigError,
    Conflict,
    CorruptLog,
    Denied,
    InvalidInput,
    NotFound,
    Rejected,
    RememError,
    StoreError,
    UnsupportedLog,
)
from remem.formation.extract import LearnReport, Message
from remem.prompt import Prompt
from remem.recall.engine import Recall
from remem.recall.trace import Trace
from remem.runwrites import Written
from remem.service import Memory

__version__ = "0.1.0"

__all__ = [
    "Basis",
    "ConfigError",
    "Conflict",
    "CorruptLog",
    "Denied",
    "Event",
    "HostPrincipal",
    "InvalidInput",
    "Kind",
    "LearnReport",
    "MemberSession",
    "Memory",
    "Message",
    "NotFound",
    "Note",
    "OwnerPrincipal",
    "Prompt",
    "Recall",
    "Rejected",
    "RememError",
    "Reply",
    "Role",
    "RunContext",
    "RunKind",
    "Scope",
    "Source",
    "Status",
    "StoreError",
    "Trace",
    "UnsupportedLog",
    "Written",
    "__version__",
    "envelope_from_json",
    "run_context",
]

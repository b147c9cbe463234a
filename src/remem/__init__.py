"""remem: governed interaction memory for AI agents.

>>> from remem import Memory, RunContext
>>> mem = Memory.open("./remem-data")                                    # doctest: +SKIP
>>> ctx = RunContext.dm(agent="yuko", channel="discord:456", user="discord:123")
>>> mem.remember(ctx, "Prefers replies of one or two sentences.")        # doctest: +SKIP

The public API is the names in ``__all__`` below, the ``remem`` command, and these
modules for those who extend remem: :mod:`remem.errors` (the exception tree),
:mod:`remem.testing` (the contract suites a backend passes), :mod:`remem.store.base`
(the storage protocols), :mod:`remem.commands.intents` (the command recognizer
protocol), :mod:`remem.formation.classify` (the classifier protocol) and
:mod:`remem.providers.embed` (embedders). Everything else is internal: every other
module, and every name those modules do not document, may change in any release.
"""

from remem.app.commands import Reply
from remem.app.dm_slot import DmSlot
from remem.app.envelope import envelope_from_json
from remem.app.link_settings import LinkSettings
from remem.app.member_links import MemberLink
from remem.app.principal import HostPrincipal, MemberSession, OwnerPrincipal, run_context
from remem.app.subscription import Change, Subscription
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
    TooManyRequests,
    Unauthenticated,
    UnsupportedLog,
)
from remem.formation.extract import LearnReport, Message
from remem.prompt import Prompt
from remem.recall.engine import Recall
from remem.recall.trace import Trace
from remem.runwrites import Written
from remem.service import Memory
from remem.tools.result import ToolResult

__version__ = "0.1.0"

__all__ = [
    "Basis",
    "Change",
    "ConfigError",
    "Conflict",
    "CorruptLog",
    "Denied",
    "DmSlot",
    "Event",
    "HostPrincipal",
    "InvalidInput",
    "Kind",
    "LearnReport",
    "LinkSettings",
    "MemberLink",
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
    "Subscription",
    "TooManyRequests",
    "ToolResult",
    "Trace",
    "Unauthenticated",
    "UnsupportedLog",
    "Written",
    "__version__",
    "envelope_from_json",
    "run_context",
]

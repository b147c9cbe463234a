"""Notes and their vocabulary: scopes, kinds, basis, statuses.

A :class:`Note` is a read model, produced by folding events (see
:mod:`remem.core.projection`); it is never edited in place.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from remem.errors import InvalidInput

E = TypeVar("E", bound=StrEnum)


class Scope(StrEnum):
    AGENT = "agent"
    CHANNEL = "channel"
    USER = "user"


class Kind(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    DECISION = "decision"
    INTERACTION = "interaction"
    PROCEDURE = "procedure"


class Basis(StrEnum):
    EXPLICIT = "explicit"
    INFERRED = "inferred"


class Status(StrEnum):
    ACTIVE = "active"
    PENDING = "pending"
    UNVERIFIED = "unverified"
    DISABLED = "disabled"
    FORGOTTEN = "forgotten"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    REJECTED = "rejected"


#: Statuses of notes that still hold content and may return to recall.
LIVE_STATUSES = frozenset({Status.ACTIVE, Status.PENDING, Status.UNVERIFIED, Status.DISABLED})


def parse_enum(enum: type[E], value: object, what: str) -> E:
    """Coerce ``value`` to ``enum`` or raise :class:`InvalidInput` listing the choices."""
    if isinstance(value, enum):
        return value
    try:
        return enum(str(value))
    except ValueError:
        choices = ", ".join(m.value for m in enum)
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:60] + "…"
        raise InvalidInput(f"unknown {what} {shown}: use one of {choices}") from None


#: ``Source.via`` of a note a model wrote with a memory tool (:mod:`remem.tools`): the
#: model chose to write it; the person did not type a command.
VIA_TOOL = "tool"
#: Every ``Source.via`` value (``None``: written by the host's own call).
SOURCE_VIAS = frozenset({VIA_TOOL})


@dataclass(frozen=True, slots=True)
class Source:
    """Where a note came from: the message and run that produced it, and ``via`` what
    (``"tool"``: a model's memory tool call; ``None``: the host's own call). ``via`` is
    stored only when set, so a note written otherwise keeps the four keys it always had."""

    channel_id: str | None = None
    message_id: str | None = None
    author_id: str | None = None
    run_id: str | None = None
    via: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        out = {
            "channel_id": self.channel_id,
            "message_id": self.message_id,
            "author_id": self.author_id,
            "run_id": self.run_id,
        }
        if self.via is not None:
            out["via"] = self.via
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Source:
        if not data:
            return _EMPTY_SOURCE
        return cls(
            channel_id=data.get("channel_id"),
            message_id=data.get("message_id"),
            author_id=data.get("author_id"),
            run_id=data.get("run_id"),
            via=data.get("via"),
        )


_EMPTY_SOURCE = Source()


@dataclass(frozen=True, slots=True)
class Note:
    """One remembered item: a short third-person statement with its provenance.

    ``version`` starts at 1 and increases with every event that changes the
    note; pass it back as ``if_version`` to make a change conditional.
    ``evidence`` counts how many times the same statement was remembered.
    """

    id: str
    agent: str
    scope: Scope
    scope_id: str | None
    kind: Kind
    text: str
    basis: Basis
    status: Status
    created_at: datetime
    said_at: datetime
    updated_at: datetime
    created_by: str | None = None
    pinned: bool = False
    subject: str | None = None
    tags: tuple[str, ...] = ()
    source: Source = _EMPTY_SOURCE
    expires_at: datetime | None = None
    version: int = 1
    evidence: int = 1
    superseded_by: str | None = None
    #: What the last change to the note was (the event's op: ``remember``, ``correct``,
    #: ``move``, ``forget``, ``disable`` ...); :attr:`receipt` says it.
    last_change: str = "remember"

    def effective_status(self, now: datetime, retention_days: int | None = None) -> Status:
        """The status as of ``now``: an active note past :meth:`leaves_recall_at` (its
        ``expires_at``, or ``retention_days`` after it was said) is ``expired``."""
        if self.status is not Status.ACTIVE:
            return self.status
        end = self.leaves_recall_at(retention_days)
        return Status.EXPIRED if end is not None and end <= now else Status.ACTIVE

    def leaves_recall_at(self, retention_days: int | None = None) -> datetime | None:
        """When this note stops being recalled: the earlier of ``expires_at`` and the end
        of ``retention_days`` of retention (:func:`retained_until`); ``None``: never. The
        one retention computation: status, recall and compaction all ask it."""
        end = self.expires_at
        if retention_days is not None:
            kept = retained_until(self.said_at, retention_days)
            if end is None or kept < end:
                end = kept
        return end

    @property
    def receipt(self) -> str:
        """The notice a host shows with its reply when this note was written: no silent writes.

        It says what the last change did: "Noted" for a new note, "Forgot" for a
        forget, "Corrected" for a correction, "Disabled" ... (see :data:`RECEIPTS`).
        """
        said = RECEIPTS.get(self.last_change)
        if said is not None:
            return said
        if self.status is Status.PENDING:
            return (
                "I'd like to remember this, once it is reviewed. "
                'Ask "what do you remember about me?" to see it.'
            )
        if self.status is Status.UNVERIFIED:
            return "Noted as unverified, pending an admin's review."
        if self.evidence > 1:
            return 'Noted again — I already remembered that. Ask "what do you remember about me?"'
        return 'Noted — ask "what do you remember about me?" to see or change what I remember.'

    def to_dict(self) -> dict[str, Any]:
        """The note's one JSON form (``--json``, adapters); :mod:`remem.schema` reads it back
        and holds its JSON Schema."""
        return {
            "id": self.id,
            "agent": self.agent,
            "scope": self.scope.value,
            "scope_id": self.scope_id,
            "kind": self.kind.value,
            "text": self.text,
            "basis": self.basis.value,
            "status": self.status.value,
            "pinned": self.pinned,
            "subject": self.subject,
            "tags": list(self.tags),
            "source": self.source.to_dict(),
            "created_by": self.created_by,
            "created_at": format_ts(self.created_at),
            "said_at": format_ts(self.said_at),
            "updated_at": format_ts(self.updated_at),
            "expires_at": format_ts(self.expires_at) if self.expires_at else None,
            "version": self.version,
            "evidence": self.evidence,
            "superseded_by": self.superseded_by,
            "last_change": self.last_change,
        }

    def evolve(self, **changes: Any) -> Note:
        return dataclasses.replace(self, **changes)


_SEE = 'ask "what do you remember about me?" to see or change what I remember.'
#: The receipt of each change other than a new note (see :attr:`Note.receipt`).
RECEIPTS: dict[str, str] = {
    "reinforce": 'Noted again — I already remembered that. Ask "what do you remember about me?"',
    "correct": f"Corrected — {_SEE}",
    "move": f"Moved — this note now applies to a different place; {_SEE}",
    "forget": "Forgot that — I no longer remember it; its text is erased for good at the next "
    "compaction.",
    "disable": f"Disabled — I'll stop using this note until it is enabled again; {_SEE}",
    "enable": f"Enabled — I'll use this note again; {_SEE}",
    "pin": f"Pinned — this note comes first whenever it applies; {_SEE}",
    "unpin": f"Unpinned — {_SEE}",
    "approve": f"Approved — this note is now in use; {_SEE}",
    "reject": "Rejected — this note will never be used; its text is erased at the next compaction.",
    "supersede": f"Replaced by a newer note on the same subject; {_SEE}",
    "restore": f"Restored — this note is in use again; {_SEE}",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def format_ts(value: datetime) -> str:
    """Canonical timestamp text: UTC, ISO 8601, ``Z`` suffix, microseconds when present."""
    if value.tzinfo is not UTC:  # already UTC: the common case, no conversion
        value = value.astimezone(UTC)
    # isoformat() gives microseconds only when there are some, and a UTC time ends in
    # "+00:00": four of these per note in every JSON note, so no search-and-replace.
    return value.isoformat()[:-6] + "Z"


def parse_ts(value: str | datetime | None, what: str = "timestamp") -> datetime | None:
    """Parse an ISO 8601 timestamp (naive values are taken as UTC)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(value)
        except (TypeError, ValueError):
            raise InvalidInput(
                f"{what} {value!r:.60} is not an ISO 8601 time; use e.g. 2026-07-10T12:00:00Z"
            ) from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    if parsed.tzinfo is UTC:
        return parsed
    try:  # an offset can carry a time past datetime's range ("9999-12-31T23:00-14:00")
        return parsed.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(
            f"{what} {str(value)[:60]!r} is out of range once converted to UTC; "
            "use a time between years 1 and 9999"
        ) from None


def retained_until(said_at: datetime, days: int) -> datetime:
    """When a note said at ``said_at`` leaves recall under ``days`` of retention; a time
    too late for ``datetime`` (a note "said" near year 9999) is retained to the end of
    time instead of crashing every recall and compaction that meets it."""
    try:
        return said_at + timedelta(days=days)
    except OverflowError:
        return datetime.max.replace(tzinfo=UTC)


_WORDS = re.compile(r"[^\W_]+")


def normalize_text(text: str) -> str:
    """The dedupe key of a statement: case-folded words, punctuation and spacing ignored."""
    return " ".join(_WORDS.findall(text.casefold()))


__all__ = [
    "LIVE_STATUSES",
    "RECEIPTS",
    "SOURCE_VIAS",
    "VIA_TOOL",
    "Basis",
    "Kind",
    "Note",
    "Scope",
    "Source",
    "Status",
    "format_ts",
    "normalize_text",
    "parse_enum",
    "parse_ts",
    "retained_until",
    "utcnow",
]

"""Events: the append-only facts from which every note is derived.

Every event is a frozen dataclass with a stable ``op`` name, an idempotency
id (``eid``), a time, and the principal that caused it (``actor``, ``role``,
``run_id``, ``channel``) taken from the run envelope, never from arguments.

The codec turns events into one JSON object per line. Each line carries the
schema version ``v`` and a ``crc`` (CRC-32 of the line's bytes without the crc
field), so a damaged line is detected and a line from a newer remem is refused
rather than misread.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, ClassVar

import orjson

from remem.core.model import Basis, Kind, Scope, Source, Status, format_ts, parse_ts
from remem.errors import CorruptLog, UnsupportedLog

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Common envelope of every event."""

    op: ClassVar[str] = ""
    eid: str
    ts: datetime
    actor: str | None = None
    role: str | None = None
    run_id: str | None = None
    channel: str | None = None
    #: On the event that applied a request sent with an ``Idempotency-Key``: a digest of
    #: that request (never its content), so that the same key sent with another request
    #: is told apart from a retry (:mod:`remem.app.idempotency`); ``None`` otherwise.
    request: str | None = None
    #: Position in its agent's log: assigned once, when the event store appends it
    #: (0 before), increasing, never renumbered (a compaction may leave holes). Not part
    #: of equality: an event is identified by its ``eid``.
    seq: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteEvent(Event):
    """An event about one note."""

    note_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Remembered(NoteEvent):
    op: ClassVar[str] = "remember"
    scope: Scope
    scope_id: str | None
    kind: Kind
    text: str
    basis: Basis
    status: Status = Status.ACTIVE
    subject: str | None = None
    tags: tuple[str, ...] = ()
    pinned: bool = False
    expires_at: datetime | None = None
    said_at: datetime | None = None
    source: Source = field(default_factory=Source)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reinforced(NoteEvent):
    """The same statement was remembered again: one more piece of evidence."""

    op: ClassVar[str] = "reinforce"
    source: Source = field(default_factory=Source)


@dataclass(frozen=True, slots=True, kw_only=True)
class Corrected(NoteEvent):
    """New text and/or a new (narrower) place for a note; the old values stay in history."""

    op: ClassVar[str] = "correct"
    text: str | None = None
    scope: Scope | None = None
    scope_id: str | None = None
    kind: Kind | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pinned(NoteEvent):
    op: ClassVar[str] = "pin"


@dataclass(frozen=True, slots=True, kw_only=True)
class Unpinned(NoteEvent):
    op: ClassVar[str] = "unpin"


@dataclass(frozen=True, slots=True, kw_only=True)
class Disabled(NoteEvent):
    op: ClassVar[str] = "disable"


@dataclass(frozen=True, slots=True, kw_only=True)
class Enabled(NoteEvent):
    op: ClassVar[str] = "enable"


@dataclass(frozen=True, slots=True, kw_only=True)
class Forgotten(NoteEvent):
    op: ClassVar[str] = "forget"


@dataclass(frozen=True, slots=True, kw_only=True)
class Approved(NoteEvent):
    """A pending or unverified note was confirmed by a reviewer."""

    op: ClassVar[str] = "approve"


@dataclass(frozen=True, slots=True, kw_only=True)
class Refused(NoteEvent):
    """A pending or unverified note was rejected by a reviewer."""

    op: ClassVar[str] = "reject"


@dataclass(frozen=True, slots=True, kw_only=True)
class Superseded(NoteEvent):
    """``note_id`` was retired in favour of ``by``; recorded as a revision."""

    op: ClassVar[str] = "supersede"
    by: str
    revision_id: str
    how: str
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Restored(NoteEvent):
    """A revision was undone: the retired note returns and the pair is vetoed.

    ``veto``: the keyed hashes of what the replacement and the retired note say
    (see :mod:`remem.core.veto`), or empty once compaction erased either note."""

    op: ClassVar[str] = "restore"
    revision_id: str
    veto: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Erased(NoteEvent):
    """Compaction removed every event of a dead note; only ids remain."""

    op: ClassVar[str] = "erased"
    eids: tuple[str, ...] = ()
    final_status: str = "forgotten"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelPolicySet(Event):
    """Channel-level policy settings changed (memory on/off, kinds, stewards ...)."""

    op: ClassVar[str] = "channel_policy"
    target: str
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelKindSet(Event):
    """A channel's kind was recorded (``run_kind``): ``dm`` (with its one ``member``) or
    ``group``.

    ``how``: ``first_use`` (the first call naming the channel asserted it), ``backfill``
    (read from what the log and records showed before kinds were recorded) or ``set``
    (an owner or admin confirmed or corrected it). ``ceiling``: the highest role the
    principal that recorded it may assert (``member`` for a member-capped host token:
    ``remem doctor`` lists those for an admin to confirm)."""

    op: ClassVar[str] = "channel_kind"
    target: str
    run_kind: str
    member: str | None = None
    ceiling: str | None = None
    how: str = "first_use"


@dataclass(frozen=True, slots=True, kw_only=True)
class PreferencesSet(Event):
    """A participant's choices about memory of themselves."""

    op: ClassVar[str] = "preferences"
    user: str
    settings: dict[str, Any] = field(default_factory=dict)


EVENT_TYPES: dict[str, type[Event]] = {
    cls.op: cls
    for cls in (
        Remembered,
        Reinforced,
        Corrected,
        Pinned,
        Unpinned,
        Disabled,
        Enabled,
        Forgotten,
        Approved,
        Refused,
        Superseded,
        Restored,
        Erased,
        ChannelPolicySet,
        ChannelKindSet,
        PreferencesSet,
    )
}

# On-disk names that differ from the attribute names (DESIGN §4.3 example).
_REMEMBER_RENAMES = {"note_id": "id", "text": "note"}
_CRC_MARK = b',"crc":"'


def _encode_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_ts(value)
    if isinstance(value, Source):
        return value.to_dict()
    if isinstance(value, tuple):
        return list(value)
    return value


def _layout(cls: type[Event]) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, stored name, kept when None) for each field of ``cls``, in order."""
    renames = _REMEMBER_RENAMES if issubclass(cls, Remembered) else {}
    return tuple(
        (f.name, renames.get(f.name, f.name), f.name in ("scope_id", "expires_at"))
        for f in fields(cls)
    )


def stored_fields(cls: type[Event]) -> tuple[tuple[str, str, bool], ...]:
    """The JSON form's layout of event class ``cls``: (attribute, key, kept when None) per
    field, in order (every other field is left out when it is None). For
    :mod:`remem.schema`, which derives each event's JSON Schema from it."""
    return _layout(cls)


#: Conversions by exact type (a lookup per field instead of a chain of isinstance checks);
#: the common plain types are stored as they are, anything else (a subclass of datetime
#: from a test clock, say) takes :func:`_encode_value`.
_CONVERT: dict[type, Any] = {datetime: format_ts, Source: Source.to_dict, tuple: list}
_PLAIN = frozenset({str, int, float, bool, list, dict, Scope, Kind, Basis, Status})


def _utc_kept(value: datetime) -> Any:
    """For a log line: a UTC time as it is (orjson writes it, with ``OPT_UTC_Z``, exactly
    as :func:`format_ts` would, and faster), any other as text."""
    return value if value.tzinfo is UTC else format_ts(value)


#: For log lines, orjson serializes UTC datetimes itself; a ``Source`` is its ``to_dict``
#: (which leaves ``via`` out when unset: orjson would write every field).
_CONVERT_LINE: dict[type, Any] = {**_CONVERT, datetime: _utc_kept}
#: Per event class, its ``to_dict`` (and the log line's variant) written out field by
#: field (see :func:`_compile`).
_TO_DICT: dict[type[Event], Callable[[Event], dict[str, Any]]] = {}
_TO_LINE: dict[type[Event], Callable[[Event], dict[str, Any]]] = {}


def _compile(cls: type[Event], *, line: bool = False) -> Callable[[Event], dict[str, Any]]:
    """``to_dict`` for one class as straight-line code: every event written goes through
    it, and a loop over the fields costs several times more. Same keys, same order.
    ``line``: the variant for :func:`encode`, which leaves what orjson writes the same
    way itself (UTC datetimes) to orjson."""
    lines = [
        "def to_dict(event, _plain=_PLAIN, _convert=_CONVERT, _other=_encode_value):",
        f"    out = {{'op': {cls.op!r}, 'v': {SCHEMA_VERSION!r}}}",
    ]
    for name, stored, keep_none in _layout(cls):
        if not name.isidentifier():  # pragma: no cover - dataclass fields always are
            raise TypeError(f"field name {name!r} of {cls.__name__}")
        lines += [
            f"    value = event.{name}",
            # seq 0 means "not appended yet": left out, so a reader numbers the line.
            "    if value:" if name == "seq" else "    if value is not None:",
            "        c = value.__class__",
            f"        out[{stored!r}] = value if c in _plain else "
            "(_convert[c](value) if c in _convert else _other(value))",
        ]
        if keep_none:
            lines += ["    else:", f"        out[{stored!r}] = None"]
    lines.append("    return out")
    namespace: dict[str, Any] = {
        "_PLAIN": _PLAIN,
        "_CONVERT": _CONVERT_LINE if line else _CONVERT,
        "_encode_value": _encode_value,
    }
    exec("\n".join(lines), namespace)  # the source is built from the field names only
    compiled: Callable[[Event], dict[str, Any]] = namespace["to_dict"]
    (_TO_LINE if line else _TO_DICT)[cls] = compiled
    return compiled


def to_dict(event: Event) -> dict[str, Any]:
    """The JSON-ready form of an event (without ``crc``)."""
    cls = type(event)
    return (_TO_DICT.get(cls) or _compile(cls))(event)


def encode(event: Event) -> bytes:
    """One log line (with trailing newline) holding the event and its checksum."""
    cls = type(event)
    fields_ = (_TO_LINE.get(cls) or _compile(cls, line=True))(event)
    return seal(orjson.dumps(fields_, option=orjson.OPT_UTC_Z))


def sequenced(events: Sequence[Event], first: int) -> list[Event]:
    """``events`` numbered ``first``, ``first + 1``... (an event store appending them).

    An event not numbered yet takes its number in place: ``seq`` is the one field set
    after construction, once, by the store that appends it (a copy would cost more than
    the rest of encoding it). An event numbered already (read from another log, or a
    retry after a failed append) is copied, so no reader's event changes under it.
    """
    out = []
    for seq, ev in enumerate(events, first):
        if ev.seq:
            ev = replace(ev, seq=seq)
        else:
            object.__setattr__(ev, "seq", seq)
        out.append(ev)
    return out


def seal(body: bytes) -> bytes:
    """Append a ``crc`` field to a serialized JSON object and end the line."""
    crc = zlib.crc32(body) & 0xFFFFFFFF
    return body[:-1] + b'%s%08x"}\n' % (_CRC_MARK, crc)


def unseal(line: bytes, where: str) -> dict[str, Any]:
    """Check a line's checksum and parse it. Raises :class:`CorruptLog` naming ``where``."""
    line = line.rstrip(b"\n")
    idx = line.rfind(_CRC_MARK)
    if idx < 0 or not line.endswith(b'"}'):
        raise CorruptLog(f"{where}: line has no checksum; the log is damaged")
    body = line[:idx] + b"}"
    try:
        expected = int(line[idx + len(_CRC_MARK) : -2], 16)
    except ValueError:
        raise CorruptLog(f"{where}: unreadable checksum; the log is damaged") from None
    if zlib.crc32(body) & 0xFFFFFFFF != expected:
        raise CorruptLog(f"{where}: checksum mismatch; the log is damaged")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise CorruptLog(f"{where}: not valid JSON; the log is damaged") from None
    if not isinstance(data, dict):
        raise CorruptLog(f"{where}: not a JSON object; the log is damaged")
    return data


def try_unseal(line: bytes) -> dict[str, Any] | None:
    """The fast path of :func:`unseal`: the parsed object, or ``None`` when anything is off
    (call :func:`unseal` then, for the precise error).

    The sealed line is itself valid JSON, so it is parsed once as a whole and the
    checksum is computed over a view of the bytes, without copying them.
    """
    idx = line.rfind(_CRC_MARK)
    if idx < 0 or line[-2:] != b'"}':
        return None
    try:
        expected = int(line[idx + 8 : -2], 16)
        if zlib.crc32(b"}", zlib.crc32(memoryview(line)[:idx])) != expected:
            return None
        data = orjson.loads(line)
    except ValueError:  # a bad checksum field or JSON (orjson's error is a ValueError)
        return None
    if not isinstance(data, dict):
        return None
    del data["crc"]
    return data


def decode(line: bytes, where: str = "log") -> Event:
    """Parse one sealed log line into an event."""
    return from_dict(unseal(line, where), where)


def from_dict(data: dict[str, Any], where: str = "log") -> Event:
    """Build an event from its JSON form; refuses newer schema versions and unknown ops."""
    version = data.get("v", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise UnsupportedLog(
            f"{where}: written by a newer remem (schema v{version}, this one reads up to "
            f"v{SCHEMA_VERSION}); upgrade remem to read it"
        )
    op = data.get("op")
    cls = EVENT_TYPES.get(op) if isinstance(op, str) else None
    if cls is None:
        raise UnsupportedLog(f"{where}: unknown event {op!r}; upgrade remem to read it")
    try:
        return _build(cls, data)
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptLog(f"{where}: malformed {op} event ({exc})") from None


_SCOPES = {m.value: m for m in Scope}
_KINDS = {m.value: m for m in Kind}
_BASES = {m.value: m for m in Basis}
_STATUSES = {m.value: m for m in Status}
_NO_SOURCE = Source()


def _source(value: Any) -> Source:
    if not value or not any(value.values()):
        return _NO_SOURCE
    return Source.from_dict(value)


def _ts(value: Any) -> datetime | None:
    return None if value is None else parse_ts(value)


def _build(cls: type[Event], data: dict[str, Any]) -> Event:
    kwargs: dict[str, Any] = {
        "eid": data["eid"],
        "ts": _ts(data["ts"]),
        "actor": data.get("actor"),
        "role": data.get("role"),
        "run_id": data.get("run_id"),
        "channel": data.get("channel"),
        "request": data.get("request"),
        "seq": data.get("seq", 0),
    }
    if cls is Remembered:
        kwargs.update(
            note_id=data["id"],
            scope=_SCOPES[data["scope"]],
            scope_id=data.get("scope_id"),
            kind=_KINDS[data["kind"]],
            text=data["note"],
            basis=_BASES[data["basis"]],
            status=_STATUSES[data.get("status", "active")],
            subject=data.get("subject"),
            tags=tuple(data.get("tags", ())),
            pinned=bool(data.get("pinned", False)),
            expires_at=_ts(data.get("expires_at")),
            said_at=_ts(data.get("said_at")),
            source=_source(data.get("source")),
        )
        return cls(**kwargs)
    for f in fields(cls):
        if f.name in kwargs or f.name not in data:
            continue
        kwargs[f.name] = _decode_field(f.name, data[f.name])
    return cls(**kwargs)


def _decode_field(name: str, value: Any) -> Any:
    if name == "source":
        return _source(value)
    if name == "scope" and value is not None:
        return _SCOPES[value]
    if name == "kind" and value is not None:
        return _KINDS[value]
    if name in ("eids", "veto"):
        return tuple(value)
    return value

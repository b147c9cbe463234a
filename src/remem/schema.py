"""One JSON form per result type, each with its JSON Schema (draft 2020-12).

Every value a public :class:`remem.Memory` method returns has exactly one JSON
form, registered in :data:`FORMS`: ``--json`` prints it today, the HTTP service
and the MCP server send it next, and the HTTP client reads it back.

>>> data = to_json(note)              # doctest: +SKIP  (plain JSON values)
>>> from_json(Note, data) == note     # doctest: +SKIP  (exact round trip)
>>> json_schema(Note)                 # doctest: +SKIP  (the schema ``data`` validates against)

``to_json``, ``from_json`` and ``json_schema`` also take whole result annotations
(``list[Note]``, ``Reply | None``, ``dict[str, int]``), so an adapter turns any
method's result into JSON by its return annotation.

Where a type already had its JSON form (``Note.to_dict``, ``Source``, ``Trace``,
``Revision``, ``CompactionReport``, the event codec's ``to_dict``/``from_dict``), that
method *is* the form and is registered here rather than repeated; the forms of the
other result types are defined here. Times are UTC ISO 8601 text with a ``Z``
(:func:`remem.core.model.format_ts`); enums are their string values; tuples and
frozensets are arrays (frozensets sorted). A form's schema sets
``additionalProperties: false``, so a key added to a form without its schema fails
the schema tests.

Contract: for every registered type ``T`` and every value ``x`` of it that remem
produces, ``from_json(T, json.loads(json.dumps(to_json(x)))) == x``. ``from_json``
raises :class:`~remem.errors.InvalidInput` for data that is not the form.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Union

from remem.app.commands import Reply
from remem.app.compaction import CompactionReport
from remem.app.dm_slot import DmSlot
from remem.app.envelope import ENVELOPE_SCHEMA, envelope_from_json
from remem.app.member_links import MemberLink
from remem.app.subscription import Change
from remem.context import RunContext
from remem.core import events
from remem.core.model import (
    SOURCE_VIAS,
    Basis,
    Kind,
    Note,
    Scope,
    Source,
    Status,
    format_ts,
    parse_ts,
)
from remem.core.projection import Revision
from remem.errors import InvalidInput
from remem.formation.consolidate import ConsolidationReport, MergeGroup
from remem.formation.extract import Dropped, LearnReport
from remem.policy.channel import PolicyChange
from remem.policy.config import Limits
from remem.prompt import Prompt
from remem.recall.engine import Recall
from remem.recall.trace import Trace
from remem.runwrites import Written
from remem.store.base import TornTail
from remem.tools.result import ToolResult

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: Canonical timestamp text (see :func:`remem.core.model.format_ts`).
TIMESTAMP = {
    "type": "string",
    "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$",
}
_SIMPLE: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


@dataclass(frozen=True, slots=True)
class Form:
    """One type's JSON form: its name in ``$defs``, the two directions and its schema."""

    name: str
    dump: Callable[[Any], dict[str, Any]]
    load: Callable[[dict[str, Any]], Any]
    schema: dict[str, Any]


#: Every JSON form, by the type it serializes (event subclasses share :class:`Event`'s).
FORMS: dict[type, Form] = {}


# -- schema atoms ----------------------------------------------------------------------


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _enum(enum: type[Enum]) -> dict[str, Any]:
    return {"type": "string", "enum": [m.value for m in enum]}


def _object(properties: dict[str, Any], optional: Sequence[str] = ()) -> dict[str, Any]:
    """A closed object: every property required unless named in ``optional``."""
    return {
        "type": "object",
        "properties": properties,
        "required": [k for k in properties if k not in optional],
        "additionalProperties": False,
    }


_STR: dict[str, Any] = {"type": "string"}
_OPT_STR = _nullable(_STR)
_INT: dict[str, Any] = {"type": "integer"}
_STRS = _array(_STR)
_NOTES = _array(_ref("Note"))
_ANY_OBJECT: dict[str, Any] = {"type": "object"}


def _form_for(cls: type) -> Form | None:
    """The form of ``cls`` or of its nearest registered base (an event's is ``Event``'s)."""
    for base in cls.__mro__:
        form = FORMS.get(base)
        if form is not None:
            return form
    return None


def _schema_of(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a type annotation, referring to registered forms by ``$ref``.

    Raises ``TypeError`` for a type that has no JSON form."""
    if tp is Any:
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if tp is datetime:
        return dict(TIMESTAMP)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return {"anyOf": [_schema_of(a) for a in args]}
    if origin in (list, tuple, set, frozenset, Sequence):
        return _array(_schema_of(args[0]) if args else {})
    if origin in (dict, Mapping):
        return {"type": "object", "additionalProperties": _schema_of(args[1]) if args else {}}
    if isinstance(tp, type):
        form = _form_for(tp)
        if form is not None:
            return _ref(form.name)
        if issubclass(tp, Enum):
            return _enum(tp)
    raise TypeError(f"{tp!r} has no JSON form; register one in remem.schema")


# -- loading helpers -------------------------------------------------------------------


def _time(value: Any) -> datetime:
    parsed = parse_ts(value)
    if parsed is None:
        raise ValueError("a time is missing")
    return parsed


def _opt_time(value: Any) -> datetime | None:
    return None if value is None else _time(value)


def _notes(data: Any) -> list[Note]:
    return [_load_note(n) for n in data]


# -- Note and Source -------------------------------------------------------------------


def _load_note(d: dict[str, Any]) -> Note:
    return Note(
        id=d["id"],
        agent=d["agent"],
        scope=Scope(d["scope"]),
        scope_id=d["scope_id"],
        kind=Kind(d["kind"]),
        text=d["text"],
        basis=Basis(d["basis"]),
        status=Status(d["status"]),
        created_at=_time(d["created_at"]),
        said_at=_time(d["said_at"]),
        updated_at=_time(d["updated_at"]),
        created_by=d["created_by"],
        pinned=bool(d["pinned"]),
        subject=d["subject"],
        tags=tuple(d["tags"]),
        source=Source.from_dict(d["source"]),
        expires_at=_opt_time(d["expires_at"]),
        version=int(d["version"]),
        evidence=int(d["evidence"]),
        superseded_by=d["superseded_by"],
        last_change=d["last_change"],
    )


_SOURCE_SCHEMA = _object(
    {
        **{k: _OPT_STR for k in ("channel_id", "message_id", "author_id", "run_id")},
        "via": {"enum": sorted(SOURCE_VIAS)},
    },
    optional=("via",),
)
_NOTE_SCHEMA = _object(
    {
        "id": {"type": "string", "pattern": "^note_"},
        "agent": _STR,
        "scope": _enum(Scope),
        "scope_id": _OPT_STR,
        "kind": _enum(Kind),
        "text": _STR,
        "basis": _enum(Basis),
        "status": _enum(Status),
        "pinned": {"type": "boolean"},
        "subject": _OPT_STR,
        "tags": _STRS,
        "source": _ref("Source"),
        "created_by": _OPT_STR,
        "created_at": TIMESTAMP,
        "said_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
        "expires_at": _nullable(TIMESTAMP),
        "version": {"type": "integer", "minimum": 1},
        "evidence": {"type": "integer", "minimum": 1},
        "superseded_by": _OPT_STR,
        "last_change": _STR,
    }
)

# -- recall, trace, prompt -------------------------------------------------------------


def _dump_recall(r: Recall) -> dict[str, Any]:
    return {
        "run_id": r.run_id,
        "retrieval": r.retrieval,
        "notes": [n.to_dict() for n in r.notes],
        "text": r.text,
        "rules": r.rules,
        "scores": dict(r.scores),
    }


def _load_recall(d: dict[str, Any]) -> Recall:
    scores = {str(k): float(v) for k, v in d["scores"].items()}
    return Recall(_notes(d["notes"]), d["text"], d["run_id"], d["retrieval"], d["rules"], scores)


_RECALL_SCHEMA = _object(
    {
        "run_id": _STR,
        "retrieval": _STR,
        "notes": _NOTES,
        "text": _STR,
        "rules": _STR,
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
    }
)
_TRACE_SCHEMA = _object(
    {
        "type": {"const": "recall"},
        "run_id": _STR,
        "agent": _STR,
        "ts": TIMESTAMP,
        "run_kind": _STR,
        "actor": _OPT_STR,
        "role": _STR,
        "channel": _OPT_STR,
        "query_chars": {"type": "integer", "minimum": 0},
        "retrieval": _STR,
        "scopes": _STRS,
        "selected": _array(
            {"type": "array", "prefixItems": [_STR, {"type": "number"}], "items": False}
        ),
        "excluded_by_reason": {"type": "object", "additionalProperties": _STRS},
        "budget": {"type": "object", "additionalProperties": _INT},
        "text_sha256": _STR,
        "text_len": {"type": "integer", "minimum": 0},
    }
)


# -- conversation and formation --------------------------------------------------------


def _dump_learn(r: LearnReport) -> dict[str, Any]:
    return {
        "run_id": r.run_id,
        "learned": [n.to_dict() for n in r.learned],
        "pending": [n.to_dict() for n in r.pending],
        "reinforced": [n.to_dict() for n in r.reinforced],
        "dropped": [{"item": to_json(item), "reason": why} for item, why in r.dropped],
        "classifier": r.classifier,
        "degraded": list(r.degraded),
    }


def _load_learn(d: dict[str, Any]) -> LearnReport:
    return LearnReport(
        run_id=d["run_id"],
        learned=_notes(d["learned"]),
        pending=_notes(d["pending"]),
        reinforced=_notes(d["reinforced"]),
        dropped=[(_load(Dropped, x["item"]), str(x["reason"])) for x in d["dropped"]],
        classifier=d["classifier"],
        degraded=list(d["degraded"]),
    )


_LEARN_SCHEMA = _object(
    {
        "run_id": _STR,
        "learned": _NOTES,
        "pending": _NOTES,
        "reinforced": _NOTES,
        "dropped": _array(_object({"item": _ref("Dropped"), "reason": _STR})),
        "classifier": _STR,
        "degraded": _STRS,
    }
)
_REVISION_SCHEMA = _object(
    {
        "id": _STR,
        "retired": _STR,
        "replacement": _STR,
        "how": _STR,
        "reason": _STR,
        "actor": _OPT_STR,
        "run_id": _OPT_STR,
        "ts": TIMESTAMP,
        "undone": {"type": "boolean"},
        "undone_at": _nullable(TIMESTAMP),
    }
)


# -- writes, compaction, policy ---------------------------------------------------------


def _load_compaction(d: dict[str, Any]) -> CompactionReport:
    return CompactionReport(
        d["agent"],
        list(d["notes_erased"]),
        int(d["events_before"]),
        int(d["events_after"]),
        list(d["files_removed"]),
    )


_COMPACTION_SCHEMA = _object(
    {
        "agent": _STR,
        "notes_erased": _STRS,
        "events_before": {"type": "integer", "minimum": 0},
        "events_after": {"type": "integer", "minimum": 0},
        "files_removed": _STRS,
    }
)


# -- events ----------------------------------------------------------------------------


def _event_schema(cls: type[events.Event]) -> dict[str, Any]:
    """One event class's form, from the codec's own layout: a field whose value is None
    is left out unless the codec keeps it."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {"op": {"const": cls.op}, "v": _INT}
    optional = []
    for name, key, keep_none in events.stored_fields(cls):
        tp = hints[name]
        args = typing.get_args(tp)
        if type(None) in args and not keep_none:
            optional.append(key)
            tp = next(a for a in args if a is not type(None))
        elif name == "seq":
            optional.append(key)  # left out until the event is appended (seq 0)
        properties[key] = _schema_of(tp)
    return _object(properties, optional)


def _event_union() -> dict[str, Any]:
    return {"oneOf": [_event_schema(cls) for cls in events.EVENT_TYPES.values()]}


# -- the table --------------------------------------------------------------------------


def _register(
    cls: type, dump: Callable[[Any], dict[str, Any]], load: Callable[..., Any], schema: Any
) -> None:
    FORMS[cls] = Form(cls.__name__, dump, load, schema)


def _register_fields(cls: type) -> None:
    """The form of a plain result dataclass: one key per field, each value in its own form
    (the forms its fields name must be registered first)."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]

    def dump(obj: Any) -> dict[str, Any]:
        return {name: to_json(getattr(obj, name)) for name in names}

    def load(data: dict[str, Any]) -> Any:
        return cls(**{name: _load(hints[name], data[name]) for name in names})

    _register(cls, dump, load, _object({name: _schema_of(hints[name]) for name in names}))


_register(Source, Source.to_dict, Source.from_dict, _SOURCE_SCHEMA)
_register(Note, Note.to_dict, _load_note, _NOTE_SCHEMA)
_register(Recall, _dump_recall, _load_recall, _RECALL_SCHEMA)
_register(Trace, Trace.to_dict, Trace.from_dict, _TRACE_SCHEMA)
_register(Revision, Revision.to_dict, Revision.from_dict, _REVISION_SCHEMA)
_register(CompactionReport, CompactionReport.to_dict, _load_compaction, _COMPACTION_SCHEMA)
for _cls in (
    Prompt,
    Reply,
    Dropped,
    MergeGroup,
    ConsolidationReport,
    PolicyChange,
    Written,
    Limits,
    TornTail,
    Change,
    MemberLink,
    ToolResult,
    DmSlot,
):
    _register_fields(_cls)
_register(LearnReport, _dump_learn, _load_learn, _LEARN_SCHEMA)
_register(events.Event, events.to_dict, events.from_dict, _event_union())
#: The run envelope: not a result but the one input every adapter reads (HTTP, MCP).
_register(RunContext, RunContext.to_json, envelope_from_json, ENVELOPE_SCHEMA)


# -- the public functions ---------------------------------------------------------------


def definitions() -> dict[str, dict[str, Any]]:
    """Every form's schema by name: the ``$defs`` that ``$ref`` s in the schemas point to."""
    return {form.name: copy.deepcopy(form.schema) for form in FORMS.values()}


def json_schema(type_: Any) -> dict[str, Any]:
    """A standalone JSON Schema (draft 2020-12) for a registered type or a result annotation
    (``list[Note]``, ``Reply | None`` ...). Raises ``TypeError`` when it has no JSON form."""
    root = _schema_of(type_)
    return {"$schema": DIALECT, "title": _title(type_), **root, "$defs": definitions()}


def _title(type_: Any) -> str:
    return type_.__name__ if isinstance(type_, type) else str(type_).replace("remem.", "")


def to_json(obj: Any) -> Any:
    """The JSON form of a result: a dict for a result object (a :class:`Note`, a
    :class:`Recall` ...), a list for a list of them, the value itself for plain JSON values;
    an enum gives its string. Raises ``TypeError`` for a value with no JSON form."""
    if obj is None or type(obj) in _SIMPLE:
        return obj
    form = _form_for(type(obj))
    if form is not None:
        return form.dump(obj)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, datetime):
        return format_ts(obj)
    if isinstance(obj, set | frozenset):  # sorted: one text for one value
        return sorted(to_json(v) for v in obj)
    if isinstance(obj, list | tuple):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, str | int | float):
        return obj
    raise TypeError(f"{type(obj).__name__} has no JSON form; register one in remem.schema")


def from_json(type_: Any, data: Any) -> Any:
    """Read a JSON form back as ``type_`` (a registered type or a result annotation).

    Raises :class:`InvalidInput` when ``data`` is not that form."""
    try:
        return _load(type_, data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidInput(f"not the JSON form of {_title(type_)}: {exc!r}"[:300]) from None


def _load(tp: Any, data: Any) -> Any:
    if tp is Any:
        return data
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"cannot read {tp!r}: only X | None unions are forms")
        return _load(rest[0], data)
    if origin in (list, Sequence):
        return [_load(args[0] if args else Any, v) for v in _expect(data, list)]
    if origin in (tuple, frozenset, set):
        return origin(_load(args[0] if args else Any, v) for v in _expect(data, list))
    if origin in (dict, Mapping):
        return {str(k): _load(args[1] if args else Any, v) for k, v in _expect(data, dict).items()}
    return _load_plain(tp, data)


def _load_plain(tp: Any, data: Any) -> Any:
    if tp is None or tp is type(None):
        if data is not None:
            raise TypeError("expected null")
        return None
    if tp in _SIMPLE:
        if tp is float and type(data) is int:
            return float(data)
        return _expect(data, tp)
    if tp is datetime:
        return _time(data)
    form = _form_for(tp) if isinstance(tp, type) else None
    if form is not None:
        value = form.load(_expect(data, dict))
        if not isinstance(value, tp):
            raise TypeError(f"the data is a {type(value).__name__}, not a {tp.__name__}")
        return value
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    raise TypeError(f"{tp!r} has no JSON form; register one in remem.schema")


def _expect(data: Any, tp: type) -> Any:
    if type(data) is not tp:
        raise TypeError(f"expected {tp.__name__}, got {type(data).__name__}")
    return data


__all__ = [
    "DIALECT",
    "FORMS",
    "TIMESTAMP",
    "Form",
    "definitions",
    "from_json",
    "json_schema",
    "to_json",
]

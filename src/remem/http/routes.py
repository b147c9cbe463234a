"""The service's routes as data: one :class:`Route` per :class:`remem.Memory` method.

Each route names its HTTP method and path (under ``/v1/agents/{agent}``), the body
fields it reads (each with a JSON type and a default), the query parameters, the
type it returns (its JSON form is :mod:`remem.schema`'s) and the call it makes on the
principal's ``Memory`` view (any :class:`~remem.app.memory_impl.MemoryImpl`).
:mod:`remem.http.app` serves the table and documents it
in ``/openapi.json``; :mod:`remem.client` speaks it. No web framework is needed here.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from remem.app.commands import Reply
from remem.app.compaction import CompactionReport
from remem.app.dm_slot import DmSlot
from remem.app.member_links import MemberLink
from remem.app.memory_impl import MemoryImpl
from remem.app.subscription import Change, Subscription
from remem.context import RunContext
from remem.core.events import Event
from remem.core.model import Note, Status
from remem.core.projection import Revision
from remem.errors import InvalidInput, shown_keys
from remem.formation.consolidate import ConsolidationReport
from remem.formation.extract import LearnReport
from remem.policy.channel import PolicyChange
from remem.policy.config import Limits
from remem.prompt import Prompt
from remem.recall.engine import Recall
from remem.recall.trace import Trace
from remem.runwrites import Written
from remem.schema import from_json, to_json
from remem.tools.result import ToolResult

#: JSON types of body fields and query parameters: name → (Python types, JSON Schema).
TYPES: dict[str, tuple[tuple[type, ...], dict[str, Any]]] = {
    "str": ((str,), {"type": "string"}),
    "str?": ((str, type(None)), {"type": ["string", "null"]}),
    "int?": ((int, type(None)), {"type": ["integer", "null"]}),
    "bool": ((bool,), {"type": "boolean"}),
    "bool?": ((bool, type(None)), {"type": ["boolean", "null"]}),
    "strs": ((list,), {"type": "array", "items": {"type": "string"}}),
    "object": ((dict,), {"type": "object"}),
    "object?": ((dict, type(None)), {"type": ["object", "null"]}),
    "objects": ((list,), {"type": "array", "items": {"type": "object"}}),
    "any": ((object,), {}),
}
#: The sentinel of a required body field.
REQUIRED = object()


@dataclass(frozen=True, slots=True)
class Args:
    """What one request brings: path parameters, body fields, query parameters and the
    ``If-Match`` version, checked against the route's declarations."""

    values: dict[str, Any]
    if_version: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


Call = Callable[[MemoryImpl, RunContext, Args], Any]


@dataclass(frozen=True, slots=True)
class Route:
    """One Memory method over HTTP (see the module docstring)."""

    name: str
    verb: str
    path: str
    returns: Any
    call: Call
    body: dict[str, tuple[str, Any]] = field(default_factory=dict)
    query: dict[str, tuple[str, Any]] = field(default_factory=dict)
    if_match: bool = False
    ok: int = 200
    #: Honours ``Idempotency-Key`` (:mod:`remem.app.idempotency`).
    idempotent: bool = False
    #: A long poll: ``call`` returns a :class:`LongPoll`, which the service waits for on
    #: its event loop (:mod:`remem.http.waits`), not in a worker thread.
    waits: bool = False

    @property
    def path_params(self) -> list[str]:
        return [p.strip("{}") for p in self.full_path.split("/") if p.startswith("{")]

    @property
    def full_path(self) -> str:
        return "/v1/agents/{agent}" + self.path

    @property
    def writes(self) -> bool:
        return self.verb != "GET"


def check_fields(
    spec: dict[str, tuple[str, Any]], data: dict[str, Any], where: str
) -> dict[str, Any]:
    """``data`` checked against ``spec`` (types, required fields, no unknown keys), with
    the defaults filled in; ``InvalidInput`` naming the field otherwise."""
    unknown = [k for k in data if k not in spec]
    if unknown:
        raise InvalidInput(
            f"unknown {where} field(s) {shown_keys(unknown)}; expected {sorted(spec)}"
        )
    out = {}
    for key, (type_name, default) in spec.items():
        if key not in data:
            if default is REQUIRED:
                raise InvalidInput(f"the {where} field {key!r} is required")
            out[key] = default
            continue
        value = data[key]
        types, _ = TYPES[type_name]
        # JSON true is no integer here, though Python's bool is an int.
        if not isinstance(value, types) or (type(value) is bool and not {bool, object} & {*types}):
            raise InvalidInput(f"the {where} field {key!r} must be {type_name}")
        out[key] = value
    return out


def _status(value: str | None) -> str | None:
    """``list``'s status query: ``all`` for every status (``None`` in Python)."""
    return None if value == "all" else value


_NOTE = "/notes/{note_id}"
_REMEMBER_BODY: dict[str, tuple[str, Any]] = {
    "text": ("str", REQUIRED),
    "scope": ("str?", None),
    "scope_id": ("str?", None),
    "kind": ("str?", None),
    "basis": ("str", "explicit"),
    "subject": ("str?", None),
    "tags": ("strs", []),
    "pinned": ("bool", False),
    "expires_at": ("str?", None),
    "source": ("any", None),
    "said_at": ("str?", None),
}


def _remember(m: MemoryImpl, c: RunContext, a: Args) -> Note:
    v = dict(a.values)
    v.pop("agent")
    return m.remember(c, v.pop("text"), **v)


def _change(method: str) -> Route:
    """A note change that takes ``If-Match`` and no body (forget, disable, enable, pin,
    unpin)."""
    verb, path = ("DELETE", _NOTE) if method == "forget" else ("POST", f"{_NOTE}/{method}")
    return Route(
        method,
        verb,
        path,
        Note,
        lambda m, c, a: getattr(m, method)(c, a["note_id"], if_version=a.if_version),
        if_match=True,
        idempotent=True,
    )


#: The longest a ``changes`` request waits for something new (seconds).
MAX_CHANGES_WAIT = 25


@dataclass(frozen=True, slots=True)
class LongPoll:
    """An opened ``changes`` request: the subscription, and the seconds to wait for a
    change (0: answer at once)."""

    sub: Subscription
    wait: int

    def result(self, changes: builtins.list[Change]) -> dict[str, Any]:
        """The answer: the changes and the position read up to (the next ``after``)."""
        return {"after": self.sub.after, "changes": [to_json(change) for change in changes]}


def _changes(m: MemoryImpl, c: RunContext, a: Args) -> LongPoll:
    """``subscribe`` as a long poll: the changes after ``after`` (``null``: from now on)
    that ``c`` may see, waiting up to ``wait`` seconds for one, and the position read up
    to (pass it as the next ``after``). Opens the subscription; the caller waits, then
    closes it."""
    wait = a["wait"] or 0
    if not 0 <= wait <= MAX_CHANGES_WAIT:
        raise InvalidInput(f"wait is in seconds, from 0 to {MAX_CHANGES_WAIT}")
    return LongPoll(m.subscribe(c, after=a["after"]), wait)


def _status_of(m: MemoryImpl, c: RunContext, a: Args) -> Status:
    now = None if a["now"] is None else from_json(datetime, a["now"])
    return m.status_of(c, from_json(Note, a["note"]), now)


def _put_dm_slot(m: MemoryImpl, c: RunContext, a: Args) -> DmSlot:
    """A slot is written whole at the version read: ``If-Match`` is required."""
    if a.if_version is None:
        raise InvalidInput(
            'send If-Match with the slot version the write is based on ("0" for a new slot)'
        )
    return m.put_dm_slot(c, a["blob"], if_version=a.if_version)


ROUTES: builtins.list[Route] = [
    Route(
        "remember", "POST", "/notes", Note, _remember, body=_REMEMBER_BODY, ok=201, idempotent=True
    ),
    Route(
        "list",
        "GET",
        "/notes",
        list[Note],
        lambda m, c, a: m.list(
            c, scope=a["scope"], scope_id=a["scope_id"], status=_status(a["status"]), tag=a["tag"]
        ),
        query={
            "scope": ("str?", None),
            "scope_id": ("str?", None),
            "status": ("str", "active"),
            "tag": ("str?", None),
        },
    ),
    Route("get", "GET", _NOTE, Note, lambda m, c, a: m.get(c, a["note_id"])),
    Route(
        "history",
        "GET",
        f"{_NOTE}/history",
        list[Event],
        lambda m, c, a: m.history(c, a["note_id"]),
    ),
    Route(
        "correct",
        "POST",
        f"{_NOTE}/correct",
        Note,
        lambda m, c, a: m.correct(c, a["note_id"], a["text"], if_version=a.if_version),
        body={"text": ("str", REQUIRED)},
        if_match=True,
        idempotent=True,
    ),
    Route(
        "move",
        "POST",
        f"{_NOTE}/move",
        Note,
        lambda m, c, a: m.move(
            c, a["note_id"], scope=a["scope"], scope_id=a["scope_id"], if_version=a.if_version
        ),
        body={"scope": ("str", REQUIRED), "scope_id": ("str?", None)},
        if_match=True,
        idempotent=True,
    ),
    *(_change(name) for name in ("forget", "disable", "enable", "pin", "unpin")),
    Route(
        "supersede",
        "POST",
        f"{_NOTE}/supersede",
        Note,
        lambda m, c, a: m.supersede(c, a["note_id"], a["new_id"]),
        body={"new_id": ("str", REQUIRED)},
    ),
    Route(
        "status_of",
        "POST",
        "/status",
        Status,
        _status_of,
        body={"note": ("any", REQUIRED), "now": ("str?", None)},
    ),
    Route(
        "recall",
        "POST",
        "/recall",
        Recall,
        lambda m, c, a: m.recall(c, a["query"], max_chars=a["max_chars"], tag=a["tag"]),
        body={"query": ("str", ""), "max_chars": ("int?", None), "tag": ("str?", None)},
    ),
    Route(
        "compile",
        "POST",
        "/compile",
        Prompt,
        lambda m, c, a: m.compile(
            c,
            a["message"],
            identity=a["identity"],
            purpose=a["purpose"],
            policy=a["policy"],
            briefing=a["briefing"],
        ),
        body={
            "message": ("str", REQUIRED),
            **{k: ("str", "") for k in ("identity", "purpose", "policy", "briefing")},
        },
    ),
    Route(
        "explain", "GET", "/runs/{run_id}/trace", Trace, lambda m, c, a: m.explain(c, a["run_id"])
    ),
    Route(
        "writes",
        "GET",
        "/runs/{run_id}/writes",
        list[Written],
        lambda m, c, a: m.writes(c, a["run_id"]),
    ),
    Route(
        "undo_run",
        "POST",
        "/runs/{run_id}/undo",
        list[Revision],
        lambda m, c, a: m.undo_run(c, a["run_id"]),
    ),
    Route("tags", "GET", "/tags", dict[str, int], lambda m, c, a: m.tags(c)),
    Route(
        "tool_specs",
        "GET",
        "/tools",
        list[dict[str, Any]],
        lambda m, c, a: m.tool_specs(c, style=a["style"]),
        query={"style": ("str", "openai")},
    ),
    Route(
        "run_tool",
        "POST",
        "/tools/call",
        ToolResult,
        lambda m, c, a: m.run_tool(c, a["name"], a["arguments"]),
        body={"name": ("any", REQUIRED), "arguments": ("any", None)},
        idempotent=True,
    ),
    Route("pending", "GET", "/pending", list[Note], lambda m, c, a: m.pending(c)),
    Route(
        "approve",
        "POST",
        "/pending/{note_id}/approve",
        Note,
        lambda m, c, a: m.approve(c, a["note_id"]),
    ),
    Route(
        "reject",
        "POST",
        "/pending/{note_id}/reject",
        Note,
        lambda m, c, a: m.reject(c, a["note_id"]),
    ),
    Route("revisions", "GET", "/revisions", list[Revision], lambda m, c, a: m.revisions(c)),
    Route(
        "undo",
        "POST",
        "/revisions/{revision_id}/undo",
        Revision,
        lambda m, c, a: m.undo(c, a["revision_id"]),
    ),
    Route("rules", "GET", "/rules", dict[str, str], lambda m, c, a: m.rules(c)),
    Route(
        "set_rule",
        "PUT",
        "/rules/{name}",
        None,
        lambda m, c, a: m.set_rule(c, a["name"], a["content"]),
        body={"content": ("str", REQUIRED)},
    ),
    Route(
        "channel_policy",
        "GET",
        "/channels/{channel}/policy",
        dict[str, Any],
        lambda m, c, a: m.channel_policy(c, a["channel"]),
    ),
    Route(
        "set_channel_policy",
        "PATCH",
        "/channels/{channel}/policy",
        PolicyChange,
        lambda m, c, a: m.set_channel_policy(c, a["channel"], **a["values"]),
        body={"values": ("object", REQUIRED)},
    ),
    Route(
        "set_channel_kind",
        "PUT",
        "/channels/{channel}/kind",
        dict[str, Any],
        lambda m, c, a: m.set_channel_kind(c, a["channel"], a["kind"], member=a["member"]),
        body={"kind": ("str", REQUIRED), "member": ("str?", None)},
    ),
    Route(
        "channel_kinds", "GET", "/channel-kinds", dict[str, Any], lambda m, c, a: m.channel_kinds(c)
    ),
    Route(
        "set_my_preferences",
        "PATCH",
        "/preferences",
        PolicyChange,
        lambda m, c, a: m.set_my_preferences(
            c,
            inferred=a["inferred"],
            cross_channel=a["cross_channel"],
            tool_writes=a["tool_writes"],
        ),
        body={
            "inferred": ("bool?", None),
            "cross_channel": ("bool?", None),
            "tool_writes": ("str?", None),
        },
    ),
    Route(
        "effective_policy", "GET", "/policy", dict[str, Any], lambda m, c, a: m.effective_policy(c)
    ),
    Route(
        "limits",
        "GET",
        "/limits",
        Limits,
        lambda m, c, a: m.limits(c, a["channel"]),
        query={"channel": ("str?", None)},
    ),
    Route(
        "command",
        "POST",
        "/command",
        Reply | None,
        lambda m, c, a: m.command(c, a["text"]),
        body={"text": ("str", REQUIRED)},
    ),
    Route(
        "learn",
        "POST",
        "/learn",
        LearnReport,
        lambda m, c, a: m.learn(c, a["messages"], summary=a["summary"]),
        body={"messages": ("objects", REQUIRED), "summary": ("str?", None)},
    ),
    Route(
        "relearn",
        "POST",
        "/relearn",
        LearnReport,
        lambda m, c, a: m.relearn(c, a["rows"]),
        body={"rows": ("objects", REQUIRED)},
    ),
    Route(
        "consolidate",
        "POST",
        "/consolidate",
        ConsolidationReport,
        lambda m, c, a: m.consolidate(c, a["dry_run"]),
        body={"dry_run": ("bool", False)},
    ),
    Route("compact", "POST", "/compact", CompactionReport, lambda m, c, a: m.compact(c)),
    Route(
        "subscribe",
        "GET",
        "/changes",
        dict[str, Any],
        _changes,
        query={"after": ("int?", None), "wait": ("int?", None)},
        waits=True,
    ),
    Route("member_link", "POST", "/member-link", MemberLink, lambda m, c, a: m.member_link(c)),
    Route("dm_slot", "GET", "/dm-slot", DmSlot, lambda m, c, a: m.dm_slot(c)),
    Route(
        "put_dm_slot",
        "PUT",
        "/dm-slot",
        DmSlot,
        _put_dm_slot,
        body={"blob": ("str", REQUIRED)},
        if_match=True,
    ),
    Route(
        "trash_agent",
        "POST",
        "/trash",
        str,
        lambda m, c, a: m.trash_agent(c, a["target"]),
        body={"target": ("str", REQUIRED)},
    ),
]

BY_NAME = {route.name: route for route in ROUTES}

__all__ = [
    "BY_NAME",
    "REQUIRED",
    "ROUTES",
    "TYPES",
    "Args",
    "LongPoll",
    "Route",
    "check_fields",
]

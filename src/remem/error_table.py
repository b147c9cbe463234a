"""One table from each :class:`~remem.errors.RememError` to what every adapter answers,
and the one error body they all send.

=================  =====  ======  ========  ==================================================
error              exit   HTTP    JSON-RPC  why
=================  =====  ======  ========  ==================================================
InvalidInput       2      422     -32602    a malformed argument: JSON-RPC's "invalid params"
BodyTooLarge       2      413     -32011    a request body over the route's limit
HeadersTooLarge    2      431     -32012    a request line and headers over the limits
Denied             3      403     -32001    authenticated, but the rule in ``rule`` refuses
Rejected           4      422     -32004    write policy refused the content (``reason``)
NotFound           5      404     -32002    MCP's own code for a resource that is not there
Conflict           6      409     -32003    stale ``if_version``; the body holds ``current``
ConfigError        7      500     -32005    the operator's remem.toml is broken (see below)
Unauthenticated    9      401     -32007    no host token, or an unknown or revoked one
TooManyRequests    10     429     -32009    the principal's concurrent waits are all held
StoreError         8      503     -32006    the store cannot be used now (disk, lock, fsync)
CorruptLog         8      503     -32006    a damaged log: the store fails closed
UnsupportedLog     8      503     -32006    a log from a newer remem
RememError         1      500     -32000    anything else remem raised on purpose
=================  =====  ======  ========  ==================================================

``ConfigError`` is 500, not 503: it comes only from the operator's policy file (a
caller's bad policy value is ``InvalidInput``), it does not clear by waiting, and a 503
would invite clients to retry a request that cannot succeed until someone edits the
file. Store trouble is 503 because it may clear (a lock released, space freed).
``TooManyRequests`` is 429 with ``Retry-After`` (its ``retry_after`` seconds): it clears
as soon as one of the principal's own waits ends.

JSON-RPC codes: -32602 is the specification's "invalid params"; -32002 is what MCP
uses for a resource that is not found; the others are in the range JSON-RPC leaves to
the server (-32000 to -32099).

The body (:func:`error_body`) is ``{"code", "message"}`` plus ``rule`` for ``Denied``,
``reason`` for ``Rejected`` and ``current`` (the note's JSON form, see
:mod:`remem.schema`, or an encrypted DM slot's) for a ``Conflict`` that knows it.
Without ``current`` a body is at most :data:`MAX_ERROR_BYTES` as JSON, whatever the
input: a longer message is cut (``current`` is bounded by the note's own limits).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from remem.app.dm_slot import DmSlot
from remem.core.model import Note
from remem.errors import (
    BodyTooLarge,
    ConfigError,
    Conflict,
    CorruptLog,
    Denied,
    HeadersTooLarge,
    InvalidInput,
    NotDurable,
    NotFound,
    Rejected,
    RememError,
    StoreError,
    TooManyRequests,
    Unauthenticated,
    UnsupportedLog,
)
from remem.schema import DIALECT, definitions, from_json, to_json


@dataclass(frozen=True, slots=True)
class ErrorMapping:
    """What each adapter answers for one error class."""

    exit_code: int
    http_status: int
    rpc_code: int


#: Every error class remem defines, with its answers (see the module docstring).
ERROR_TABLE: dict[type[RememError], ErrorMapping] = {
    InvalidInput: ErrorMapping(2, 422, -32602),
    BodyTooLarge: ErrorMapping(2, 413, -32011),
    HeadersTooLarge: ErrorMapping(2, 431, -32012),
    Denied: ErrorMapping(3, 403, -32001),
    Rejected: ErrorMapping(4, 422, -32004),
    NotFound: ErrorMapping(5, 404, -32002),
    Conflict: ErrorMapping(6, 409, -32003),
    ConfigError: ErrorMapping(7, 500, -32005),
    Unauthenticated: ErrorMapping(9, 401, -32007),
    TooManyRequests: ErrorMapping(10, 429, -32009),
    StoreError: ErrorMapping(8, 503, -32006),
    CorruptLog: ErrorMapping(8, 503, -32006),
    UnsupportedLog: ErrorMapping(8, 503, -32006),
    NotDurable: ErrorMapping(8, 503, -32006),
    RememError: ErrorMapping(1, 500, -32000),
}


def mapping_for(error: RememError | type[RememError]) -> ErrorMapping:
    """The row of ``error``'s class, or of its nearest listed base class."""
    cls = error if isinstance(error, type) else type(error)
    for base in cls.__mro__:
        row = ERROR_TABLE.get(base)
        if row is not None:
            return row
    return ERROR_TABLE[RememError]


def exit_code(error: RememError) -> int:
    return mapping_for(error).exit_code


def http_status(error: RememError) -> int:
    return mapping_for(error).http_status


def rpc_code(error: RememError) -> int:
    return mapping_for(error).rpc_code


#: The most bytes an error body's JSON takes, ``current`` aside (see the module docstring).
MAX_ERROR_BYTES = 2048
#: The most characters of a ``rule`` or ``reason`` (both are the service's own names).
_MAX_NAME = 200


def error_body(error: RememError) -> dict[str, Any]:
    """The one error body: ``{"code", "message"}``, plus ``rule`` (Denied), ``reason``
    (Rejected) and ``current`` (Conflict) where they apply; without ``current``, at most
    :data:`MAX_ERROR_BYTES` as JSON (a longer message is cut and ends with ``…``)."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if isinstance(error, Denied) and error.rule:
        body["rule"] = error.rule[:_MAX_NAME]
    if isinstance(error, Rejected):
        body["reason"] = error.reason[:_MAX_NAME]
    _bound(body)
    if isinstance(error, Conflict) and error.current is not None:
        body["current"] = to_json(error.current)
    return body


def _bound(body: dict[str, Any]) -> None:
    """Cut ``body["message"]`` until the body's JSON fits :data:`MAX_ERROR_BYTES`."""
    size = len(orjson.dumps(body))
    while size > MAX_ERROR_BYTES and len(body["message"]) > 1:
        message = str(body["message"])
        # Each character is at least one byte of JSON, and "…" is three.
        body["message"] = message[: max(0, len(message) - (size - MAX_ERROR_BYTES) - 3)] + "…"
        size = len(orjson.dumps(body))


def error_from_body(body: object, retry_after: float | None = None) -> RememError:
    """The error an :func:`error_body` describes, rebuilt for a client of a service: the
    class whose ``code`` the body names (``RememError`` for an unknown one), with its
    ``rule``, ``reason`` or ``current`` note (and a ``TooManyRequests``'s
    ``retry_after``, from the response's ``Retry-After`` header). Re-raising what a server
    decided is no new refusal: the class comes from the body, never from the client's own
    judgement."""
    data = body if isinstance(body, dict) else {}
    code, message = data.get("code"), str(data.get("message") or "the service gave no reason")
    cls = next((c for c in _error_classes() if c.code == code), RememError)
    args: dict[str, Any] = {}
    if "rule" in data and issubclass(cls, Denied):
        args["rule"] = str(data["rule"])
    if issubclass(cls, Rejected):
        args["reason"] = str(data.get("reason") or "")
    if issubclass(cls, TooManyRequests) and retry_after is not None:
        args["retry_after"] = retry_after
    current = data.get("current")
    if issubclass(cls, Conflict) and isinstance(current, dict):
        # A slot's form has a blob; a note's has none.
        args["current"] = from_json(DmSlot if "blob" in current else Note, current)
    return cls(message, **args)


def error_body_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every :func:`error_body` validates against."""
    codes = sorted({cls.code for cls in _error_classes()})
    return {
        "$schema": DIALECT,
        "title": "Error",
        "type": "object",
        "properties": {
            "code": {"type": "string", "enum": codes},
            "message": {"type": "string"},
            "rule": {"type": "string"},
            "reason": {"type": "string"},
            "current": {"anyOf": [{"$ref": "#/$defs/Note"}, {"$ref": "#/$defs/DmSlot"}]},
        },
        "required": ["code", "message"],
        "additionalProperties": False,
        "$defs": definitions(),
    }


def _error_classes() -> list[type[RememError]]:
    out: list[type[RememError]] = [RememError]
    for cls in out:
        out.extend(c for c in cls.__subclasses__() if c not in out)
    return out


__all__ = [
    "ERROR_TABLE",
    "MAX_ERROR_BYTES",
    "ErrorMapping",
    "error_body",
    "error_body_schema",
    "error_from_body",
    "exit_code",
    "http_status",
    "mapping_for",
    "rpc_code",
]

"""``/openapi.json``: the OpenAPI 3.1 document of the route table, written from the same
data the service serves (:data:`remem.http.routes.ROUTES`) and the one JSON form of each
result (:mod:`remem.schema`), so the document cannot drift from the code.

Every operation lists every status it can return: its success status, 401 (no or a bad
token), 403 (``Denied``: the rule in the body), 404, 409 (where a change can conflict),
413 (a body over the limit), 422 (``InvalidInput``/``Rejected``), 429 (long polls and
event streams: the principal holds all its waits; ``Retry-After``), 431 (a request line
and headers over the limits, :mod:`remem.http.bounds`), 500 (``ConfigError``) and 503
(store trouble); every error response is the one error body
(:func:`remem.error_table.error_body_schema`). Any request may be answered 413 or 431,
so the routes outside the table list them too.
"""

from __future__ import annotations

from typing import Any

from remem.app.envelope import ENVELOPE_SCHEMA
from remem.error_table import error_body_schema
from remem.http.routes import REQUIRED, ROUTES, TYPES, Route
from remem.schema import definitions, json_schema

_ERRORS = {
    401: "no host token, or an unknown or revoked one",
    403: "Denied: the envelope is outside the token's grants, or a rule refuses (see rule)",
    404: "NotFound: no such note, run or revision visible to this envelope",
    413: "BodyTooLarge: the request body is over the route's limit (1 MiB)",
    422: "InvalidInput or Rejected: a malformed argument or envelope, or refused content",
    431: "HeadersTooLarge: the request line and headers are over 16 KiB or 100 fields",
    500: "ConfigError: the operator's remem.toml is broken",
    503: "the store cannot be used now (disk, lock, fsync): retry later",
}
#: The answer of a wait (long poll, event stream) past the principal's limit.
_TOO_MANY = (
    "TooManyRequests: this credential holds as many long polls and event streams as the "
    "server process allows (remem serve --max-waits-per-principal): retry after Retry-After"
)
_RETRY_AFTER = {
    "Retry-After": {
        "description": "seconds to wait before retrying",
        "schema": {"type": "integer", "minimum": 1},
    }
}


def _too_many(error: dict[str, Any]) -> dict[str, Any]:
    return {"description": _TOO_MANY, "headers": _RETRY_AFTER, "content": error}


def _refs(value: Any) -> Any:
    """``$ref`` s to ``#/$defs/X`` pointed at ``#/components/schemas/X``."""
    if isinstance(value, dict):
        return {
            k: (
                v.replace("#/$defs/", "#/components/schemas/")
                if k == "$ref" and isinstance(v, str)
                else _refs(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_refs(v) for v in value]
    return value


def result_schema(returns: Any) -> dict[str, Any]:
    """The schema of a route's result, referring to ``components.schemas``."""
    schema = json_schema(returns)
    for key in ("$schema", "$defs", "title"):
        schema.pop(key, None)
    return dict(_refs(schema))


def _fields(spec: dict[str, tuple[str, Any]]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: TYPES[t][1] for k, (t, _) in spec.items()},
        "required": [k for k, (_, d) in spec.items() if d is REQUIRED],
        "additionalProperties": False,
    }


def _parameters(route: Route) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        {"name": p, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
        for p in route.path_params
    ]
    params += [
        {"name": k, "in": "query", "required": False, "schema": {"type": "string"}}
        for k in route.query
    ]
    params.append(
        {
            "name": "Remem-Run",
            "in": "header",
            "required": True,
            "description": "the run envelope's JSON form: "
            + ", ".join(ENVELOPE_SCHEMA["required"]),
            "schema": {"type": "string"},
        }
    )
    if route.idempotent:
        params.append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "1-200 printable characters; the same request sent again with "
                "the same key returns the first result instead of writing twice (404 if the "
                "caller may no longer read it); the key with another route, path, Remem-Run "
                "or body is 422 (Idempotency-Key reused for a different request)",
                "schema": {"type": "string", "minLength": 1, "maxLength": 200},
            }
        )
    if route.if_match:
        params.append(
            {
                "name": "If-Match",
                "in": "header",
                "required": False,
                "description": "the note version read (its ETag); a stale one is 409",
                "schema": {"type": "string"},
            }
        )
    return params


def _operation(route: Route) -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    responses: dict[str, Any] = {
        str(route.ok): {
            "description": "the result's JSON form",
            "content": {"application/json": {"schema": result_schema(route.returns)}},
        }
    }
    statuses = dict(_ERRORS)
    if route.writes:
        statuses[409] = "Conflict: a stale If-Match; the body holds the current note"
    for status, text in sorted(statuses.items()):
        responses[str(status)] = {"description": text, "content": error}
    if route.waits:
        responses["429"] = _too_many(error)
    op: dict[str, Any] = {
        "operationId": route.name,
        "parameters": _parameters(route),
        "responses": responses,
        "security": [{"bearer": []}],
    }
    if route.body:
        op["requestBody"] = {
            "required": any(d is REQUIRED for _, d in route.body.values()),
            "content": {"application/json": {"schema": _fields(route.body)}},
        }
    return op


def document(title: str = "remem", version: str = "0.1.0") -> dict[str, Any]:
    """The whole OpenAPI 3.1 document."""
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.full_path, {})[route.verb.lower()] = _operation(route)
    schemas = {name: _refs(s) for name, s in definitions().items()}
    error = error_body_schema()
    error.pop("$defs")
    error.pop("$schema")
    schemas["Error"] = _refs(error)
    paths["/healthz"] = {"get": _health()}
    paths["/v1/agents"] = {"get": _agents()}
    paths["/v1/agents/{agent}/events"] = {"get": _events()}
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


#: What any request may be answered before a route runs (:mod:`remem.http.bounds`).
_ANY = (413, 431)


def _health() -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    ok = {"type": "object", "properties": {"status": {"const": "ok"}}, "required": ["status"]}
    return {
        "operationId": "healthz",
        "responses": {
            "200": {"description": "serving", "content": {"application/json": {"schema": ok}}},
            **{str(s): {"description": _ERRORS[s], "content": error} for s in _ANY},
        },
    }


def _agents() -> dict[str, Any]:
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    names = {"type": "array", "items": {"type": "string"}}
    return {
        "operationId": "agents",
        "security": [{"bearer": []}],
        "responses": {
            "200": {
                "description": "the agents the token's grants name",
                "content": {"application/json": {"schema": names}},
            },
            **{
                str(s): {"description": _ERRORS[s], "content": error}
                for s in sorted((401, 500, 503, *_ANY))
            },
        },
    }


def _events() -> dict[str, Any]:
    """``GET /v1/agents/{agent}/events``: the change events as Server-Sent Events."""
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    position = {"type": "string", "pattern": "^[0-9]{1,18}$"}
    text = "a log position (an event's id): the stream starts after it"
    return {
        "operationId": "events",
        "description": "Server-Sent Events: id (the log position), event (note.changed or "
        "agent.changed), data (the Change's JSON form); a comment line at once and every "
        "15 s of silence. Resume with Last-Event-ID (or after). The stream ends when its "
        "credential ends (no further event) and after remem serve --stream-max-seconds, "
        "with a last block whose id is the position to resume from.",
        "security": [{"bearer": []}],
        "parameters": [
            {"name": "agent", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "after", "in": "query", "required": False, "schema": position},
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "schema": position,
                "description": text,
            },
            {
                "name": "Remem-Run",
                "in": "header",
                "required": True,
                "schema": {"type": "string"},
                "description": "the run envelope's JSON form: "
                + ", ".join(ENVELOPE_SCHEMA["required"]),
            },
        ],
        "responses": {
            "200": {
                "description": "the event stream (until the client disconnects)",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            **{
                str(s): {"description": _ERRORS[s], "content": error}
                for s in sorted((401, 403, 404, 422, 500, 503, *_ANY))
            },
            "429": _too_many(error),
        },
    }


__all__ = ["document", "result_schema"]

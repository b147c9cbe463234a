"""MCP over streamable HTTP at ``/mcp`` in ``remem serve``: stateless, token-authenticated,
one envelope per request.

Every request is answered on its own (``stateless``: no session spans requests, so any
worker may serve any request). It must carry the host token (``Authorization: Bearer``;
missing or unknown: 401 with ``WWW-Authenticate: Bearer resource_metadata="…"``, the
protected-resource metadata of RFC 9728 served at
``/.well-known/oauth-protected-resource/mcp``). A member page's session cookie is no
credential here: ``/mcp`` is for hosts, and a request without an ``Authorization`` header
is 401 whatever cookie it carries. The metadata's address is built from the service's
configured public URL only (``--public-url``, or the bound address of a non-wildcard
bind), never from the request's ``Host`` header; without one, the challenge names no
metadata and the metadata route answers 404. ``GET /mcp`` is 405: a stateless service has
no server-to-client stream to offer, and a stream held open that could never carry a
message would escape the per-principal count of waits and streams
(:mod:`remem.http.waits`) and outlive its credential. And, in ``_meta["remem/run"]`` of every
request (``tools/list`` included), the envelope's JSON form, the same as the HTTP
``Remem-Run`` header. :func:`remem.run_context` checks it against the token's grants, and
the call runs on the token principal's view of the Memory, exactly like an HTTP route.

Allowed ``Host`` and ``Origin`` headers (DNS rebinding protection): the loopback names by
default; ``REMEM_MCP_ALLOWED_HOSTS`` and ``REMEM_MCP_ALLOWED_ORIGINS`` (comma-separated,
``host:*`` for any port) set them for a service reached by another name.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import orjson
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from remem.app.principal import MemberSession, Principal, run_context
from remem.context import RunContext
from remem.error_table import MAX_ERROR_BYTES, error_body
from remem.errors import InvalidInput, Unauthenticated
from remem.mcp import META_KEY
from remem.mcp.server import build_server
from remem.service import Memory

PATH = "/mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
_STATE_KEY = "remem_principal"
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost"]
_LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
#: What ``GET /mcp`` answers (the MCP transport's own 405: no SSE stream is offered).
_NO_STREAM = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "this MCP endpoint is stateless and offers no stream: send each "
            "request with POST",
        },
    }
)
_NO_TOKEN = (
    "/mcp needs a host token: send Authorization: Bearer <token> (remem tokens create); "
    "a member page's session is not accepted here"
)

#: ``(request) -> (token name, principal)``; raises ``Unauthenticated``.
Authenticate = Callable[[Request], tuple[str, Principal]]
#: ``principal -> the principal's view of the Memory``.
ViewOf = Callable[[Principal], Memory]
#: ``(method, status, perf_counter at the start, token name or "-")``: the access log.
LogLine = Callable[[str, int, float, str], None]


def security_from_env() -> TransportSecuritySettings:
    """The allowed hosts and origins (see the module docstring)."""

    def listed(name: str, default: list[str]) -> list[str]:
        raw = os.environ.get(name, "")
        return [item.strip() for item in raw.split(",") if item.strip()] or default

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=listed("REMEM_MCP_ALLOWED_HOSTS", _LOOPBACK_HOSTS),
        allowed_origins=listed("REMEM_MCP_ALLOWED_ORIGINS", _LOOPBACK_ORIGINS),
    )


def envelope_of(ctx: ServerRequestContext[Any, Any]) -> Any:
    """The envelope's JSON form in the request's ``_meta`` (``InvalidInput`` if absent)."""
    meta: Mapping[str, Any] = ctx.meta or {}
    if META_KEY not in meta:
        raise InvalidInput(
            f'send the run envelope in _meta["{META_KEY}"] of every request (tools/list '
            "too): the JSON object of the Remem-Run header, with agent, kind, channel, "
            "actor, role and run_id"
        )
    return meta[META_KEY]


def _resolver(view_of: ViewOf) -> Callable[[ServerRequestContext[Any, Any]], Any]:
    def resolve(ctx: ServerRequestContext[Any, Any]) -> tuple[RunContext, Memory]:
        request = ctx.request
        principal = getattr(getattr(request, "state", None), _STATE_KEY, None)
        if principal is None:  # the endpoint authenticated it: never reached otherwise
            raise Unauthenticated("this MCP request was not authenticated")
        return run_context(principal, envelope_of(ctx)), view_of(principal)

    return resolve


class _Endpoint:
    """The ``/mcp`` ASGI endpoint: authenticate a host token, then hand over to the SDK's
    transport. ``metadata``: the protected-resource metadata's URL (``None``: no public
    URL is configured, so the challenge names none)."""

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        authenticate: Authenticate,
        metadata: str | None,
        log: LogLine | None = None,
    ) -> None:
        self.manager = manager
        self.authenticate = authenticate
        self.log = log
        challenge = "Bearer" if metadata is None else f'Bearer resource_metadata="{metadata}"'
        self.refused = {"WWW-Authenticate": challenge, "Cache-Control": "no-store"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request, then write its access-log line (the token's name once it
        authenticated, refusals included; ``-`` when it did not)."""
        started, line = time.perf_counter(), _Line(send)
        try:
            await self._serve(scope, receive, line)
        finally:
            if self.log is not None:
                self.log(scope["method"], line.status, started, line.who)

    async def _serve(self, scope: Scope, receive: Receive, send: _Line) -> None:
        request = Request(scope)
        try:
            # Without the header the authenticator would fall back to the member page's
            # cookie: a member session never reaches the host surface.
            if "authorization" not in request.headers:
                raise Unauthenticated(_NO_TOKEN)
            name, principal = await run_in_threadpool(self.authenticate, request)
            if isinstance(principal, MemberSession):
                raise Unauthenticated(_NO_TOKEN)
            send.who = name
        except Unauthenticated as exc:
            response = Response(
                orjson.dumps(error_body(exc)),
                status_code=401,
                media_type="application/json",
                headers=self.refused,
            )
            await response(scope, receive, send)
            return
        if request.method == "GET":  # no stream to hold open (see the module docstring)
            headers = {"Allow": "POST", "Cache-Control": "no-store"}
            no_stream = Response(_NO_STREAM, 405, headers, "application/json")
            await no_stream(scope, receive, send)
            return
        scope.setdefault("state", {})[_STATE_KEY] = principal
        await self.manager.handle_request(scope, receive, _BoundedErrors(send))


class _Line:
    """The ``send`` of one request, noting what its access-log line says: the status sent
    (500 if none was) and who asked."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.status, self.who = 500, "-"

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self.send(message)


class _BoundedErrors:
    """The ``send`` of one MCP request: a JSON-RPC error the SDK wrote itself (an unknown
    method, a malformed request) echoes what it was sent; it is cut to the error table's
    bound (:data:`~remem.error_table.MAX_ERROR_BYTES`) before it leaves. Other responses
    pass as they are."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.start: Message | None = None
        self.chunks: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start" and _is_json(message):
            self.start = message  # held until the body is whole (one JSON-RPC message)
            return
        if message["type"] != "http.response.body" or self.start is None:
            await self.send(message)
            return
        self.chunks.append(message.get("body", b""))
        if message.get("more_body"):
            return
        body = _bounded_error(b"".join(self.chunks))
        headers = [(k, v) for k, v in self.start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.send({**self.start, "headers": headers})
        await self.send({"type": "http.response.body", "body": body})


def _is_json(start: Message) -> bool:
    return any(
        k.lower() == b"content-type" and v.startswith(b"application/json")
        for k, v in start.get("headers", [])
    )


def _bounded_error(raw: bytes) -> bytes:
    """``raw`` with a JSON-RPC error's ``message`` and ``data`` cut, and an ``id`` that is
    no id a client would send (a string over 200 characters) null, when it is longer
    than :data:`~remem.error_table.MAX_ERROR_BYTES`."""
    if len(raw) <= MAX_ERROR_BYTES:
        return raw
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return raw
    error["message"] = str(error.get("message", ""))[:400]
    if not isinstance(error.get("data"), dict):  # remem's own data is the bounded error body
        error.pop("data", None)
    if isinstance(data.get("id"), str) and len(data["id"]) > 200:
        data["id"] = None
    return orjson.dumps(data)


def _metadata(public_url: str | None) -> Callable[[Request], Any]:
    """RFC 9728 protected-resource metadata: the resource and how to present its token
    (a host token from ``remem tokens create``; there is no authorization server). The
    resource is the public URL's, whatever ``Host`` the request names."""
    body = {
        "resource": f"{public_url}{PATH}",
        "authorization_servers": [],
        "bearer_methods_supported": ["header"],
        "resource_name": "remem memory tools",
    }
    missing = {
        "code": "not_found",
        "message": "this service has no public URL: start remem serve with --public-url",
    }

    async def metadata(request: Request) -> Response:
        if public_url is None:
            return Response(orjson.dumps(missing), 404, media_type="application/json")
        return Response(orjson.dumps(body), media_type="application/json")

    return metadata


def mount(
    app: Any,
    authenticate: Authenticate,
    view_of: ViewOf,
    *,
    public_url: str | None = None,
    log: LogLine | None = None,
) -> None:
    """Serve MCP at ``/mcp`` on the Starlette/FastAPI ``app`` (and its metadata route), the
    session manager running for the app's lifespan. ``public_url``: the service's public
    address (``https://memory.example.com``), the metadata's base; ``None``: none.
    ``log``: writes each ``/mcp`` request's access-log line."""
    server = build_server(_resolver(view_of))
    manager = StreamableHTTPSessionManager(
        app=server, stateless=True, json_response=True, security_settings=security_from_env()
    )
    base = public_url.rstrip("/") if public_url else None
    metadata = None if base is None else base + METADATA_PATH
    app.router.routes.append(Route(PATH, endpoint=_Endpoint(manager, authenticate, metadata, log)))
    app.router.routes.append(Route(METADATA_PATH, endpoint=_metadata(base), methods=["GET"]))
    previous = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(owner: Any) -> AsyncIterator[Any]:
        async with manager.run(), previous(owner) as state:
            yield state

    app.router.lifespan_context = lifespan


__all__ = ["METADATA_PATH", "PATH", "envelope_of", "mount", "security_from_env"]

"""The FastAPI application of ``remem serve`` (needs the ``server`` extra).

Each request: ``Authorization: Bearer <token>`` → the token's principal
(:func:`remem.http.tokens.authenticate`, 401 otherwise), or without that header the
member page's session cookie → its ``MemberSession`` (:mod:`remem.http.pad`: unsafe
requests need the page's ``Origin`` and ``Remem-Pad`` header; with no ``Remem-Run`` the
session's own DM envelope); the ``Remem-Run`` header's
envelope → :func:`remem.run_context` (403 with the rule when the grants do not cover
it; the agent in the path must be the envelope's); then the route's call on
``Memory.for_principal(principal)`` (so the message-label ceiling holds too); a member
session's results pass the database's member wall where the backend has one
(:mod:`remem.http.member_wall`). Results
are :mod:`remem.schema` JSON forms; every error is :func:`remem.error_table.error_body`
with the table's status. A note result carries ``ETag: "<version>"``; changes take
``If-Match``. Every ``/v1`` response is ``Cache-Control: no-store``. No CORS headers are
sent unless ``cors_origins`` are configured (browsers keep other origins out), ``/docs``
is off, and the access log (logger
``remem.http.access``, one JSON object a line) holds the route, the token's name, the
status, the time and the serving process's id: never a token, a note's text or a query.
Before any route runs, :class:`remem.http.bounds.RequestBounds` holds every request to
the header-field and body limits (431, 413); ``Remem-Run`` is at most 4 KiB (422).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from remem.app.idempotency import Keyed, idempotent, seed_of
from remem.app.member_links import LinkSettings
from remem.app.principal import MemberSession, Principal, run_context
from remem.context import RunContext
from remem.core.model import Note, parse_ts
from remem.error_table import error_body, http_status
from remem.errors import InvalidInput, RememError, StoreError, TooManyRequests, shown_keys
from remem.http.bounds import MAX_BODY, RequestBounds
from remem.http.events import HEARTBEAT, resume_position, stream
from remem.http.member_wall import check_member_result
from remem.http.openapi import document
from remem.http.pad import COOKIE, add_pad_routes, cookie_principal
from remem.http.routes import ROUTES, Args, LongPoll, Route, check_fields
from remem.http.tokens import authenticate
from remem.http.waits import (
    MAX_WAITS_PER_PRINCIPAL,
    STREAM_MAX_SECONDS,
    Waiter,
    WaitLimits,
    open_waiter,
    waits_from_env,
)
from remem.policy.authz import pattern_matches
from remem.schema import to_json
from remem.service import Memory
from remem.store.base import ConfigStore

#: The header holding the run envelope, and the test clock's (honoured only when asked).
RUN_HEADER, TEST_NOW_HEADER = "remem-run", "remem-test-now"
#: The longest ``Remem-Run`` header accepted (an envelope is six short fields).
MAX_RUN_HEADER = 4096
ACCESS = logging.getLogger("remem.http.access")
_LOG = logging.getLogger("remem.http")
_NOW: contextvars.ContextVar[datetime | None] = contextvars.ContextVar("remem_now", default=None)
_NO_STORE = {"Cache-Control": "no-store"}
#: The request headers a configured CORS origin may send.
CORS_HEADERS = ("Authorization", "Content-Type", "Remem-Run", "If-Match", "Idempotency-Key")
#: The longest ``Idempotency-Key`` accepted.
MAX_KEY = 200
#: The Server-Sent Events route (:mod:`remem.http.events`).
EVENTS_PATH = "/v1/agents/{agent}/events"
#: Where :meth:`Service.principal` leaves the authenticated principal's label (a token's
#: name, ``member-session``) on the request, for the access log line, denials included.
_LABEL = "remem_label"


def test_clock() -> datetime:
    """The clock of a server started with ``--test-clock``: the request's
    ``Remem-Test-Now`` time, else the wall clock."""
    return _NOW.get() or datetime.now(UTC)


class Service:
    """What the routes share: the Memory, the token store and each principal's view."""

    def __init__(
        self,
        mem: Memory,
        store: ConfigStore,
        *,
        trust_test_clock: bool,
        limits: WaitLimits | None = None,
        stream_max_seconds: float = STREAM_MAX_SECONDS,
    ) -> None:
        self.mem = mem
        self.store = store
        self.trust_test_clock = trust_test_clock
        #: Each principal's long polls and streams in this process (remem.http.waits).
        self.limits = limits or WaitLimits()
        self.stream_max_seconds = stream_max_seconds
        self._views: dict[Principal, Memory] = {}
        self._lock = threading.Lock()

    def view(self, principal: Principal) -> Memory:
        with self._lock:
            view = self._views.get(principal)
            if view is None:
                view = self._views[principal] = self.mem.for_principal(principal)
            return view

    def principal(self, request: Request) -> tuple[str, Principal]:
        """The bearer token's principal; without an ``Authorization`` header, the member
        session of the page's cookie (:func:`remem.http.pad.cookie_principal`)."""
        header = request.headers.get("authorization", "")
        principal: Principal
        if not header and COOKIE in request.cookies:
            label, principal = cookie_principal(request, self.mem)
        else:
            scheme, _, token = header.partition(" ")
            secret = token.strip() if scheme.lower() == "bearer" else None
            label, principal = authenticate(self.store, secret)
        # Kept on the request (shared with the endpoint's thread): whatever the request
        # fails on after this, its access log line names who asked.
        setattr(request.state, _LABEL, label)
        return label, principal

    def set_clock(self, request: Request) -> None:
        stamp = request.headers.get(TEST_NOW_HEADER)
        if self.trust_test_clock and stamp:
            _NOW.set(parse_ts(stamp))


def _envelope(request: Request) -> Any:
    raw = request.headers.get(RUN_HEADER)
    if not raw:
        raise InvalidInput(
            "send the run envelope in the Remem-Run header: a JSON object with agent, kind, "
            "channel, actor, role and run_id"
        )
    if len(raw) > MAX_RUN_HEADER:
        raise InvalidInput(
            f"the Remem-Run header is over {MAX_RUN_HEADER} characters: send only the "
            "envelope's six fields (agent, kind, channel, actor, role, run_id)"
        )
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise InvalidInput(
            "the Remem-Run header is not JSON: send the envelope's JSON form"
        ) from None


def _if_version(request: Request) -> int | None:
    raw = request.headers.get("if-match")
    if raw is None:
        return None
    text = raw.strip().removeprefix("W/").strip('"')
    if not text.isdigit() or len(text) > 18:
        raise InvalidInput(
            f'If-Match takes a note\'s ETag (its version, e.g. "3"), not {raw[:20]!r}'
        )
    return int(text)


def _body(route: Route, raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return check_fields(route.body, {}, "body")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidInput("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise InvalidInput("the request body is a JSON object")
    return check_fields(route.body, data, "body")


def _context(principal: Principal, request: Request) -> RunContext:
    """The request's envelope (``Remem-Run``) as the principal may assume it; the agent in
    the path must be the envelope's. A member session that sends no envelope acts in its
    own (the only one it may assume)."""
    if isinstance(principal, MemberSession) and RUN_HEADER not in request.headers:
        ctx = run_context(principal, principal.envelope())
    else:
        ctx = run_context(principal, _envelope(request))
    agent = request.path_params["agent"]
    if ctx.agent != agent:
        raise InvalidInput(
            f"the path names agent {agent[:64]!r} but the envelope names {ctx.agent!r}: "
            "they must be the same"
        )
    return ctx


def _request(
    service: Service, route: Route, request: Request, raw: bytes
) -> tuple[str, Principal, RunContext, dict[str, Any]]:
    """Authenticate, set the test clock, build the context and check the path, query and
    body: the token's name, the principal, the envelope and the route's values."""
    name, principal = service.principal(request)
    service.set_clock(request)
    ctx = _context(principal, request)
    values = {
        **request.path_params,
        **check_fields(route.query, _query(route, request), "query"),
        **_body(route, raw),
    }
    return name, principal, ctx, values


def _serve(service: Service, route: Route, request: Request, raw: bytes) -> Any:
    """Authenticate, build the context, call the route; returns its result."""
    name, principal, ctx, values = _request(service, route, request, raw)
    if_version = _if_version(request) if route.if_match else None
    args, view = Args(values, if_version), service.view(principal)
    key = _idempotency_key(request) if route.idempotent else None
    if key is None:
        result = route.call(view, ctx, args)
    else:
        with idempotent(_keyed(name, principal, route, request, key, raw)):
            result = route.call(view, ctx, args)
    if isinstance(principal, MemberSession):  # the database's wall (remem.http.member_wall)
        result = check_member_result(service.mem.backend, principal, route.name, result)
    return result


def _keyed(
    name: str, principal: Principal, route: Route, request: Request, key: str, raw: bytes
) -> Keyed:
    """The request sent with ``key`` (:mod:`remem.app.idempotency`). Its ids come from who
    asks (the token's name; a member session's agent, channel and member), the agent and
    the key; its fingerprint from those and the route, the path, the ``Remem-Run`` header
    as sent (none stays none: not the envelope with the run id it was given) and the body,
    so the key sent again with anything else is told apart."""
    who = [name]
    if isinstance(principal, MemberSession):
        who += [principal.agent, principal.channel, principal.member]
    seed = seed_of(*who, request.path_params["agent"], key)
    run = request.headers.get(RUN_HEADER)
    sent = ("1", run) if run is not None else ("0", "")
    return Keyed(seed, seed_of(seed, route.name, request.url.path, *sent, raw))


def _idempotency_key(request: Request) -> str | None:
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    if not (0 < len(key) <= MAX_KEY and key.isascii() and key.isprintable()):
        raise InvalidInput(
            "Idempotency-Key is 1 to 200 printable ASCII characters (e.g. a UUID): send the "
            "same one when retrying the same request"
        )
    return key


def _subscribe(service: Service, request: Request) -> tuple[Any, Principal]:
    """The events route's subscription (authenticated, its envelope checked like every
    route's), starting after ``Last-Event-ID`` or ``?after=``; and its principal."""
    _, principal = service.principal(request)
    ctx = _context(principal, request)
    unknown = [k for k in request.query_params if k != "after"]
    if unknown:
        raise InvalidInput(f"unknown query parameter(s) {shown_keys(unknown)}; expected ['after']")
    after = resume_position(request.headers.get("last-event-id"), request.query_params.get("after"))
    return service.view(principal).subscribe(ctx, after=after), principal


def _events(service: Service, heartbeat: float) -> Callable[[Request], Any]:
    async def events(request: Request) -> Response:
        started = time.perf_counter()
        try:
            sub, principal = await run_in_threadpool(_subscribe, service, request)
            waiter = _waiter(service, request, sub, principal)
        except RememError as exc:
            response = error_response(exc)
            _log(EVENTS_PATH, "GET", response.status_code, started, label_of(request))
            return response
        _log(EVENTS_PATH, "GET", 200, started, label_of(request))
        body = stream(
            waiter,
            request.is_disconnected,
            heartbeat=heartbeat,
            max_seconds=service.stream_max_seconds,
        )
        # A body never iterated (the client went first) runs no finally: its collection
        # still ends the wait, so the principal's count never leaks.
        weakref.finalize(body, waiter.close)
        return StreamingResponse(
            body,
            media_type="text/event-stream",
            headers={**_NO_STORE, "X-Accel-Buffering": "no"},
        )

    return events


def _waiter(service: Service, request: Request, sub: Any, principal: Principal) -> Waiter:
    """``sub`` waited for on the event loop as one of the principal's waits, re-checked
    by authenticating ``request`` again (:func:`remem.http.waits.open_waiter`)."""
    return open_waiter(service.limits, sub, principal, lambda: service.principal(request)[1])


def _open_long_poll(
    service: Service, route: Route, request: Request, raw: bytes
) -> tuple[LongPoll, Principal]:
    """A long-poll route's request (authenticated, its envelope, query and body checked
    like every route's), opened: its subscription and wait; and its principal."""
    _, principal, ctx, values = _request(service, route, request, raw)
    poll = route.call(service.view(principal), ctx, Args(values))
    assert isinstance(poll, LongPoll), route.name
    return poll, principal


async def _long_poll(service: Service, route: Route, request: Request, raw: bytes) -> Any:
    """Serve a long poll: wait on the event loop (no thread held; counted against the
    principal's waits), re-checking the credential (401 once it ended); ``wait=0``
    answers at once."""
    poll, principal = await run_in_threadpool(_open_long_poll, service, route, request, raw)
    if not poll.wait:
        with poll.sub:
            return poll.result(await run_in_threadpool(poll.sub.poll, 0.0))
    waiter = _waiter(service, request, poll.sub, principal)
    try:
        # A client that went ends its wait (and frees its count) within a read interval.
        return poll.result(await waiter.next(float(poll.wait), request.is_disconnected))
    finally:
        waiter.close()


def _agents(service: Service) -> Callable[[Request], Any]:
    async def agents(request: Request) -> Response:
        """The agents the principal's grants name, of those the store holds."""
        started = time.perf_counter()
        try:
            _, principal = await run_in_threadpool(service.principal, request)
            names = await run_in_threadpool(service.mem.agents)
            grants = principal.grants
            listed = [a for a in names if any(pattern_matches(p, a) for p in grants.agents)]
            response = _json(listed, 200)
        except RememError as exc:
            response = error_response(exc)
        _log("/v1/agents", "GET", response.status_code, started, label_of(request))
        return response

    return agents


def _query(route: Route, request: Request) -> dict[str, Any]:
    """The query parameters, an integer one read as an integer (``InvalidInput`` if not)."""
    values: dict[str, Any] = dict(request.query_params)
    for key, (type_name, _) in route.query.items():
        if type_name == "int?" and key in values:
            text = values[key]
            if not (text.isascii() and text.lstrip("-").isdigit() and len(text) <= 18):
                raise InvalidInput(f"the query parameter {key!r} must be an integer")
            values[key] = int(text)
    return values


def error_response(exc: RememError) -> Response:
    """The one error handler: the table's status, the one error body (and a 429's
    ``Retry-After``). A store's detail (where and why: host, database, the driver's
    words) goes to the log, not the body."""
    if isinstance(exc, StoreError) and exc.detail:
        _LOG.warning("store error: %s", exc.detail)
    headers = None
    if isinstance(exc, TooManyRequests):
        headers = {"Retry-After": str(max(1, round(exc.retry_after)))}
    return _json(error_body(exc), http_status(exc), headers)


def _json(data: Any, status: int, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(data),
        status_code=status,
        media_type="application/json",
        headers={**_NO_STORE, **(headers or {})},
    )


def label_of(request: Request) -> str:
    """The label of the principal that authenticated ``request`` (``-``: none did)."""
    return str(getattr(request.state, _LABEL, "-"))


def _log(route: str, method: str, status: int, started: float, who: str) -> None:
    ms = round((time.perf_counter() - started) * 1000, 2)
    ACCESS.info(
        orjson.dumps(
            {
                "method": method,
                "route": route,
                "status": status,
                "ms": ms,
                "token": who,
                # which process of `remem serve --workers N` served it
                "pid": os.getpid(),
            }
        ).decode()
    )


def _endpoint(service: Service, route: Route) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        try:
            raw = await request.body()  # RequestBounds keeps it within the route's limit
            if route.waits:  # a long poll waits on the event loop, not in a thread
                result = await _long_poll(service, route, request, raw)
            else:
                result = await run_in_threadpool(_serve, service, route, request, raw)
            headers = {"ETag": f'"{result.version}"'} if isinstance(result, Note) else {}
            response = _json(to_json(result), route.ok, headers)
        except RememError as exc:
            response = error_response(exc)
        except Exception:
            _LOG.exception("%s %s failed", route.verb, route.full_path)
            response = _json({"code": "error", "message": "internal error (see the log)"}, 500)
        _log(route.full_path, route.verb, response.status_code, started, label_of(request))
        return response

    endpoint.__name__ = route.name
    return endpoint


def create_app(
    mem: Memory,
    store: ConfigStore,
    *,
    trust_test_clock: bool = False,
    heartbeat: float = HEARTBEAT,
    cors_origins: Sequence[str] = (),
    max_waits_per_principal: int = MAX_WAITS_PER_PRINCIPAL,
    stream_max_seconds: float = STREAM_MAX_SECONDS,
) -> FastAPI:
    """The application over ``mem``, authenticating with the tokens in ``store``.
    ``trust_test_clock``: read the time from each request's ``Remem-Test-Now`` header
    (tests only; ``mem`` must be opened with ``clock=test_clock``). ``heartbeat``: the
    seconds of silence after which an event stream sends a comment. ``cors_origins``: the
    browser origins (``https://console.example``) allowed to call the ``/v1`` API with a
    bearer token; none by default, so no CORS header is sent (never with credentials:
    cookies stay with the member pages' own origin). ``max_waits_per_principal``: the
    long polls and event streams one principal may hold at once in this process (429
    past it); ``stream_max_seconds``: how long an event stream lasts before it ends for
    the client to resume (:mod:`remem.http.waits`)."""
    service = Service(
        mem,
        store,
        trust_test_clock=trust_test_clock,
        limits=WaitLimits(max_waits_per_principal),
        stream_max_seconds=stream_max_seconds,
    )
    # No redirect_slashes: Starlette builds the redirect from the request's Host header.
    app = FastAPI(
        title="remem", openapi_url=None, docs_url=None, redoc_url=None, redirect_slashes=False
    )
    _add_routes(app, service, heartbeat)
    add_pad_routes(app, mem, _log)
    _mount_mcp(app, service)
    # Inside CORS, so a browser console sees a 413 or 431 as such.
    app.add_middleware(RequestBounds)
    if cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=list(CORS_HEADERS),
            expose_headers=["ETag"],
            allow_credentials=False,
        )
    return app


def _add_routes(app: FastAPI, service: Service, heartbeat: float) -> None:
    """The ``/v1`` routes of the table, the events stream, the agent list, the health
    check and the OpenAPI document."""
    spec = orjson.dumps(document())
    # Plain Starlette routes: each endpoint reads its Request itself (routes.py declares and
    # checks the fields), so FastAPI's per-request dependency solving would be pure cost
    # (~0.1-0.2 ms a request, benchmarks/README.md).
    for route in ROUTES:
        app.add_route(
            route.full_path, _endpoint(service, route), methods=[route.verb], name=route.name
        )

    async def healthz(request: Request) -> Response:
        return _json({"status": "ok"}, 200)

    async def openapi(request: Request) -> Response:
        return Response(spec, media_type="application/json")

    app.add_route("/healthz", healthz, methods=["GET"])
    app.add_route("/openapi.json", openapi, methods=["GET"])
    app.add_route("/v1/agents", _agents(service), methods=["GET"])
    app.add_route(EVENTS_PATH, _events(service, heartbeat), methods=["GET"], name="events")


def cors_origins_from_env() -> list[str]:
    """``REMEM_SERVE_CORS_ORIGINS`` (space-separated origins), each checked."""
    return [check_origin(o) for o in os.environ.get("REMEM_SERVE_CORS_ORIGINS", "").split()]


def check_origin(origin: str) -> str:
    """``origin`` if it is a browser origin (scheme, host, optional port; nothing else)."""
    parts = urllib.parse.urlsplit(origin)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path
        or parts.query
        or parts.fragment
        or parts.username is not None
    ):
        raise InvalidInput(
            f"{origin[:100]!r} is not an origin: give scheme and host, with a port if any, "
            "e.g. https://console.example.com"
        )
    return origin


def _mount_mcp(app: FastAPI, service: Service) -> None:
    """MCP at ``/mcp`` (:mod:`remem.mcp.http`) when the ``mcp`` extra is installed."""
    from remem.mcp import sdk_installed

    if sdk_installed():
        from remem.mcp.http import mount

        public_url = service.mem.link_settings.base_url  # never the request's Host header

        def log(method: str, status: int, started: float, who: str) -> None:
            _log("/mcp", method, status, started, who)

        mount(app, service.principal, service.view, public_url=public_url, log=log)


def create_app_from_env() -> FastAPI:
    """The app ``remem serve`` runs in each worker: the data location in ``REMEM_SERVE_DATA``,
    ``REMEM_SERVE_TEST_CLOCK=1`` for the test clock, embeddings from the environment."""
    from remem.providers.embed import embedder_from_env

    if not ACCESS.handlers:  # one JSON line a request on stderr (uvicorn's own log is off)
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        ACCESS.addHandler(handler)
        ACCESS.setLevel(logging.INFO)
        ACCESS.propagate = False
    data = os.environ.get("REMEM_SERVE_DATA", "")
    trust = os.environ.get("REMEM_SERVE_TEST_CLOCK") == "1"
    beat = float(os.environ.get("REMEM_SERVE_HEARTBEAT") or HEARTBEAT)
    mem = Memory.open(data, clock=test_clock if trust else None, embedder=embedder_from_env())
    mem.link_settings = link_settings_from_env()
    cors = cors_origins_from_env()
    max_waits, stream_max = waits_from_env()
    return create_app(
        mem,
        mem.backend,
        trust_test_clock=trust,
        heartbeat=beat,
        cors_origins=cors,
        max_waits_per_principal=max_waits,
        stream_max_seconds=stream_max,
    )


def link_settings_from_env() -> LinkSettings:
    """Member links' settings from ``REMEM_SERVE_PUBLIC_URL`` (the service's public address)
    and ``REMEM_SERVE_LINK_MINUTES`` (how long a link lasts; default 15)."""
    minutes = os.environ.get("REMEM_SERVE_LINK_MINUTES") or "15"
    if not minutes.isdigit():
        raise InvalidInput("REMEM_SERVE_LINK_MINUTES is a whole number of minutes")
    public = os.environ.get("REMEM_SERVE_PUBLIC_URL") or None
    return LinkSettings(public, timedelta(minutes=int(minutes)))


__all__ = ["MAX_BODY", "create_app", "create_app_from_env", "error_response", "test_clock"]

"""The member pages of ``remem serve``: the scratchpad page and its member sessions.

==========================  ==================================================================
``GET /pad``                the page (static files shipped in ``remem/web/static``)
``GET /pad/static/{name}``  its script and style sheet
``POST /pad/session``       exchange a member link's token (``{"token"}``) once for a session
                            cookie; answers the session (agent, channel, member, expiry).
                            409 when the browser is signed in as another member (below)
``GET /pad/session``        the session of the cookie (401 without one)
``DELETE /pad/session``     sign out (the session record is deleted)
==========================  ==================================================================

The session cookie (:data:`COOKIE`) is ``HttpOnly``, ``SameSite=Strict``, ``Path=/`` and
``Secure`` where the service is reached over TLS (the request's scheme or the public URL
being ``https``); it lasts the session's lifetime. With it, the ``/v1`` routes act as the
session's :class:`~remem.app.principal.MemberSession` (see :func:`cookie_principal`):
its own DM envelope through :func:`remem.run_context`, like every principal.

Opening another member's link does not silently replace a session (a login CSRF: what
the person then types would land in the link owner's memory). While the request carries
a live session cookie of another member, or of the same member id with another agent or
DM (another agent's host can mint a link for any member id), ``POST /pad/session``
answers 409 with the error body plus ``signed_in`` and ``link`` (agent, channel, member
of each) and leaves the link unused; the page asks the person and sends ``{"token",
"replace": true}`` if they agree, which ends the old session. A link of the very session
signed in already (member, agent and DM) needs no question.

Cross-site requests: every unsafe request (not ``GET``/``HEAD``) that a cookie
authenticates must carry the service's own ``Origin`` and the ``Remem-Pad: 1`` header
(which no cross-site form can set, and a cross-origin script cannot send without a
preflight this service never grants); otherwise it is refused (401) before anything
runs. The page is served with a strict Content Security Policy (scripts, styles and
connections from this origin only, no inline script, no framing), ``Referrer-Policy:
no-referrer`` and ``Cache-Control: no-store``.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from remem.app.member_links import (
    SessionGrant,
    end_session,
    exchange_link,
    link_principal,
    session_principal,
)
from remem.app.principal import MemberSession
from remem.core.model import format_ts
from remem.error_table import error_body, http_status
from remem.errors import Conflict, InvalidInput, RememError, Unauthenticated
from remem.http.bounds import BODY_LIMITS

if TYPE_CHECKING:
    from remem.service import Memory
    from remem.store.base import ConfigStore

#: The session cookie's name, and the header every unsafe cookie request carries.
COOKIE, PAD_HEADER = "remem_pad", "remem-pad"
#: The page's headers (the CSP allows nothing from another origin and no inline script).
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\.(?:js|css|svg|png)$")
_SAFE = frozenset({"GET", "HEAD"})
#: The access log's name for a member session (as on the ``/v1`` routes).
MEMBER_LABEL = "member-session"
#: ``(route, method, status, perf_counter at the start, who)``: the access log.
LogLine = Callable[[str, str, int, float, str], None]
_CROSS_SITE = (
    "a member session's changes must come from its own memory page (the page's origin and "
    "its Remem-Pad header): reload the page and try again"
)


def own_origins(request: Request, mem: Memory) -> set[str]:
    """The origins the page may be served from: the request's own and the public URL's."""
    host = request.headers.get("host", "")
    origins = {f"{request.url.scheme}://{host}"}
    base = mem.link_settings.base_url
    if base:
        url = urllib.parse.urlsplit(base)
        origins.add(f"{url.scheme}://{url.netloc}")
    return origins


def check_same_site(request: Request, mem: Memory) -> None:
    """``Unauthenticated`` for an unsafe request without this service's ``Origin`` and the
    ``Remem-Pad: 1`` header (a cookie request; see the module docstring)."""
    if request.method in _SAFE:
        return
    origin = request.headers.get("origin")
    if origin not in own_origins(request, mem) or request.headers.get(PAD_HEADER) != "1":
        raise Unauthenticated(_CROSS_SITE)


def cookie_principal(request: Request, mem: Memory) -> tuple[str, MemberSession]:
    """The member session of the request's cookie (``Unauthenticated`` for none, an expired
    one, or an unsafe request failing :func:`check_same_site`)."""
    check_same_site(request, mem)
    grant = session_principal(mem.backend, request.cookies.get(COOKIE, ""), mem.clock())
    return MEMBER_LABEL, grant.principal


def _json(data: Any, status: int, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(data),
        status_code=status,
        media_type="application/json",
        headers={**PAGE_HEADERS, **(headers or {})},
    )


def _principal_json(p: MemberSession) -> dict[str, str]:
    return {"agent": p.agent, "channel": p.channel, "member": p.member}


def _session_json(grant: SessionGrant) -> dict[str, Any]:
    return {**_principal_json(grant.principal), "expires_at": format_ts(grant.expires_at)}


def _cookie(request: Request, mem: Memory, value: str, max_age: int) -> str:
    base = mem.link_settings.base_url or ""
    secure = request.url.scheme == "https" or base.startswith("https:")
    return f"{COOKIE}={value}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict" + (
        "; Secure" if secure else ""
    )


def _exchange_body(raw: bytes) -> tuple[str, bool]:
    """The link's token and whether the person agreed to replace another member's session."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("token"), str):
        raise InvalidInput('send {"token": "<the token from the link>"}')
    replace = data.get("replace", False)
    if not isinstance(replace, bool):
        raise InvalidInput('"replace" is true or false')
    return str(data["token"]), replace


def _signed_in(request: Request, store: ConfigStore, now: datetime) -> SessionGrant | None:
    """The live session of the request's cookie, if any."""
    try:
        return session_principal(store, request.cookies.get(COOKIE, ""), now)
    except Unauthenticated:
        return None


def _switch_refused(current: MemberSession, link: MemberSession) -> Response:
    """409: this browser is signed in as another member, or to another agent or DM, than
    the link's (nothing changed)."""
    error = Conflict(
        f"this browser is signed in as {current.member} (with {current.agent}), and the "
        f"link is {link.member}'s with {link.agent}: nothing changed and the link is still "
        f"unused. To sign out {current.member} and sign in as {link.member} with "
        f'{link.agent}, send it again with "replace": true'
    )
    body = {**error_body(error), "signed_in": _principal_json(current)}
    return _json({**body, "link": _principal_json(link)}, http_status(error))


def _exchange(
    request: Request, mem: Memory, store: ConfigStore, raw: bytes, who: list[str]
) -> Response:
    check_same_site(request, mem)
    now = mem.clock()
    current = _signed_in(request, store, now) if COOKIE in request.cookies else None
    if current is not None:  # known before the body is read: its refusals name it
        who[0] = MEMBER_LABEL
    token, replace = _exchange_body(raw)
    if current is not None and not replace:
        link = link_principal(store, token, now)
        if link != current.principal:  # another member, or another agent's or DM's
            return _switch_refused(current.principal, link)
    grant = exchange_link(store, token, now, mem.link_settings)
    who[0] = MEMBER_LABEL
    if current is not None:  # the session this browser held ends with its cookie
        end_session(store, current.token)
    max_age = int((grant.expires_at - mem.clock()).total_seconds())
    cookie = _cookie(request, mem, grant.token, max_age)
    return _json(_session_json(grant), 201, {"Set-Cookie": cookie})


def _current(request: Request, mem: Memory, store: ConfigStore, who: list[str]) -> Response:
    grant = session_principal(store, request.cookies.get(COOKIE, ""), mem.clock())
    who[0] = MEMBER_LABEL
    return _json(_session_json(grant), 200)


def _sign_out(request: Request, mem: Memory, store: ConfigStore, who: list[str]) -> Response:
    check_same_site(request, mem)
    if _signed_in(request, store, mem.clock()) is not None:
        who[0] = MEMBER_LABEL
    end_session(store, request.cookies.get(COOKIE, ""))
    return _json({"signed_out": True}, 200, {"Set-Cookie": _cookie(request, mem, "", 0)})


def add_pad_routes(app: FastAPI, mem: Memory, log: LogLine | None = None) -> None:
    """Serve the member pages (see the module docstring) from ``app`` over ``mem``.
    ``log``: writes each session request's access-log line, naming ``member-session``
    once a session (the cookie's, or the one a link was exchanged for) is known,
    refusals included."""
    store = mem.backend

    async def page(request: Request) -> Response:
        return Response((STATIC / "pad.html").read_bytes(), 200, PAGE_HEADERS, _TYPES[".html"])

    async def static(request: Request) -> Response:
        name = str(request.path_params["name"])
        path = STATIC / name
        if not _NAME.fullmatch(name) or not path.is_file():
            return _json({"code": "not_found", "message": "no such file"}, 404)
        return Response(path.read_bytes(), 200, PAGE_HEADERS, _TYPES[path.suffix])

    async def session(request: Request) -> Response:
        started, who = time.perf_counter(), ["-"]
        response = await _session(request, who)
        if log is not None:
            log("/pad/session", request.method, response.status_code, started, who[0])
        return response

    async def _session(request: Request, who: list[str]) -> Response:
        raw = await request.body() if request.method == "POST" else b""
        try:
            if len(raw) > BODY_LIMITS["/pad/session"]:  # RequestBounds refuses it first
                raise InvalidInput(f"the request body is over {BODY_LIMITS['/pad/session']} bytes")
            if request.method == "POST":
                return await run_in_threadpool(_exchange, request, mem, store, raw, who)
            if request.method == "DELETE":
                return await run_in_threadpool(_sign_out, request, mem, store, who)
            return await run_in_threadpool(_current, request, mem, store, who)
        except RememError as exc:
            return _json(error_body(exc), http_status(exc))

    # Plain Starlette routes, like the /v1 ones: each endpoint reads its Request itself.
    app.add_route("/pad", page, methods=["GET"])
    app.add_route("/pad/static/{name}", static, methods=["GET"])
    app.add_route("/pad/session", session, methods=["GET", "POST", "DELETE"])


__all__ = [
    "COOKIE",
    "PAD_HEADER",
    "PAGE_HEADERS",
    "add_pad_routes",
    "check_same_site",
    "cookie_principal",
    "own_origins",
]

"""What one request may cost ``remem serve`` before any route runs: its request line and
headers, and its body.

=================================  ===========  ===========================================
limit                              past it      where it is enforced
=================================  ===========  ===========================================
request line + headers: 16 KiB     431, closed  while the bytes arrive, by the HTTP
(:data:`MAX_HEAD`)                              protocol ``remem serve`` runs
                                                (:mod:`remem.http.protocols`, any parser)
header fields: 100                 431          the protocol where its parser allows, and
(:data:`MAX_FIELDS`)                            :class:`RequestBounds` for every request
                                                (which holds every head to
                                                :data:`MAX_HEAD` again: a pipelined
                                                request's head can reach the parser
                                                within the bytes of the one before it)
body: 1 MiB (:data:`MAX_BODY`),    413, closed  :class:`RequestBounds`: by
less on some routes                             ``Content-Length`` before the route runs,
(:data:`BODY_LIMITS`)                           else counted while the route reads it
=================================  ===========  ===========================================

The errors are :class:`~remem.errors.HeadersTooLarge` and
:class:`~remem.errors.BodyTooLarge`, in the one error body (:mod:`remem.error_table`).
A refused request's connection is closed (``Connection: close``), so the rest of an
oversized request is never read; so is the connection of any request answered before its
body was read (a 401 before a route reads anything), which would otherwise read the rest
to find the next request.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from remem.error_table import error_body, http_status
from remem.errors import BodyTooLarge, HeadersTooLarge, RememError

#: The most bytes of a request line and its headers.
MAX_HEAD = 16 * 1024
#: The most header fields of a request.
MAX_FIELDS = 100
#: The largest request body accepted by default (the library's own text limits apply
#: within it).
MAX_BODY = 1 << 20
#: Routes that take less than :data:`MAX_BODY` (a path as the router sees it → bytes).
BODY_LIMITS: Mapping[str, int] = {"/pad/session": 4096}


def headers_too_large() -> HeadersTooLarge:
    return HeadersTooLarge(
        f"the request line and headers are over {MAX_HEAD} bytes or {MAX_FIELDS} fields: "
        "send fewer or shorter headers (the run envelope is at most 4 KiB)"
    )


def body_too_large(limit: int) -> BodyTooLarge:
    return BodyTooLarge(f"the request body is over {limit} bytes, this route's limit")


def error_bytes(error: RememError) -> tuple[int, bytes]:
    """``error``'s status and the one error body as JSON."""
    return http_status(error), orjson.dumps(error_body(error))


def raw_response(error: RememError) -> bytes:
    """A whole HTTP/1.1 response for ``error`` that closes the connection: what the
    protocol writes when it refuses a request before any application sees it."""
    status, body = error_bytes(error)
    phrase = {413: "Content Too Large", 431: "Request Header Fields Too Large"}.get(status, "")
    return (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n"
    ).encode() + body


async def _answer(send: Send, error: RememError) -> None:
    status, body = error_bytes(error)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The ``Content-Length``, or ``None`` when absent (a malformed one the server's
    parser refuses before any application runs)."""
    for name, value in headers:
        if name == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


def _head_size(scope: Scope) -> int:
    """The fewest bytes the request line and headers of ``scope`` took on the wire (the
    parsers drop the optional spaces around a value, so they are not counted)."""
    query = scope.get("query_string", b"")
    line = len(scope["method"]) + len(scope.get("raw_path") or b"") + len(b"  HTTP/1.1\r\n")
    line += len(query) + 1 if query else 0
    return line + sum(len(n) + len(v) + 3 for n, v in scope["headers"]) + 2


def _chunked(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(n == b"transfer-encoding" and b"chunked" in v.lower() for n, v in headers)


class RequestBounds:
    """ASGI middleware over the whole application: no route reads more headers or body
    than the limits (see the module docstring), so no route can forget them.

    ``limits``: the routes with a smaller body limit than ``default``."""

    def __init__(
        self, app: ASGIApp, limits: Mapping[str, int] = BODY_LIMITS, default: int = MAX_BODY
    ) -> None:
        self.app = app
        self.limits = limits
        self.default = default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        if len(headers) > MAX_FIELDS or _head_size(scope) > MAX_HEAD:
            await _answer(send, headers_too_large())
            return
        limit = self.limits.get(scope["path"], self.default)
        declared = _declared_length(headers)
        if declared is not None and declared > limit:
            await _answer(send, body_too_large(limit))
            return
        expects_body = bool(declared) or _chunked(headers)
        await _Counted(self.app, limit, expects_body).run(scope, receive, send)


class _Counted:
    """One request whose body is counted as the route reads it: past the limit, the read
    raises :class:`BodyTooLarge` and this answers 413, whatever the route does next."""

    def __init__(self, app: ASGIApp, limit: int, expects_body: bool) -> None:
        self.app, self.limit = app, limit
        self.received, self.refused, self.started = 0, False, False
        #: Whether body bytes may still come (the route has not read them all).
        self.unread = expects_body

    async def run(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def bounded_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                self.received += len(message.get("body", b""))
                self.unread = bool(message.get("more_body"))
                if self.received > self.limit:
                    self.refused = True
                    raise body_too_large(self.limit)
            return message

        async def guarded_send(message: Message) -> None:
            if self.refused:  # the 413 below answers instead
                return
            if message["type"] == "http.response.start" and self.unread:
                close = (b"connection", b"close")  # else the server reads on to the next request
                message = {**message, "headers": [*message.get("headers", []), close]}
            self.started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except BodyTooLarge:
            if not self.refused:
                raise
        finally:
            if self.refused and not self.started:
                await _answer(send, body_too_large(self.limit))

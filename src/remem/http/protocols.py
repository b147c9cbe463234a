"""The HTTP/1.1 protocols ``remem serve`` runs: uvicorn's, for either parser, bounded.

uvicorn reads a request's line and headers into memory until they end; under httptools
(the parser ``remem[server]`` installs) nothing limits them, and h11's own limit answers
400. The classes here count a request head's bytes as they arrive and hand the parser at
most :data:`~remem.http.bounds.MAX_HEAD` of them, so no parser ever buffers more: past
that, or past :data:`~remem.http.bounds.MAX_FIELDS` header fields where the parser
reports fields one by one, the request is answered 431 (the one error body,
:class:`~remem.errors.HeadersTooLarge`) and the connection closed. They also:

- close a connection whose request head is not complete ``header_timeout`` seconds after
  it opened or after the head's first byte (a slowloris client dribbling headers);
- hold a chunked body's trailer fields (which the parser buffers like a head's) to the
  same bytes, fields and timeout as a head;
- close at once any connection past ``max_connections`` open ones in this process.

A connection closed in the middle of a request (a refused head or body, a parser error)
is closed gracefully: the answer is sent, the sending side shut, and what the client is
still sending read and dropped for up to :data:`LINGER_SECONDS` or
:data:`LINGER_BYTES`, so that the client reads the answer instead of a reset.

Both settings come from ``remem serve`` (``--header-timeout``, ``--max-connections``)
through the environment (:func:`limits_from_env`), like the rest of the service's
settings, so every worker process reads the same ones.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import os
from dataclasses import dataclass
from typing import cast

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from remem.errors import InvalidInput, RememError
from remem.http.bounds import MAX_FIELDS, MAX_HEAD, headers_too_large, raw_response

#: Defaults of ``remem serve --max-connections`` and ``--header-timeout`` (seconds).
MAX_CONNECTIONS, HEADER_TIMEOUT = 1000, 10.0
#: How long, and how many bytes, a connection closed mid-request reads and drops.
LINGER_SECONDS, LINGER_BYTES = 1.0, 256 * 1024
#: ``remem serve --http-parser`` → the protocol class uvicorn imports.
PROTOCOLS = {
    "httptools": "remem.http.protocols:BoundedHttpTools",
    "h11": "remem.http.protocols:BoundedH11",
}


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one process of ``remem serve`` allows its connections."""

    max_connections: int = MAX_CONNECTIONS
    header_timeout: float = HEADER_TIMEOUT


@functools.cache
def limits_from_env() -> ConnectionLimits:
    """``REMEM_SERVE_MAX_CONNECTIONS`` and ``REMEM_SERVE_HEADER_TIMEOUT`` (the defaults
    where unset)."""
    connections = os.environ.get("REMEM_SERVE_MAX_CONNECTIONS") or str(MAX_CONNECTIONS)
    timeout = os.environ.get("REMEM_SERVE_HEADER_TIMEOUT") or str(HEADER_TIMEOUT)
    try:
        return ConnectionLimits(int(connections), float(timeout))
    except ValueError:
        raise InvalidInput(
            "REMEM_SERVE_MAX_CONNECTIONS is a whole number and REMEM_SERVE_HEADER_TIMEOUT "
            "a number of seconds"
        ) from None


def protocol_for(parser: str) -> str:
    """The bounded protocol class for ``parser`` (``auto``: httptools when installed)."""
    if parser == "auto":
        parser = "httptools" if importlib.util.find_spec("httptools") else "h11"
    if parser == "httptools" and not importlib.util.find_spec("httptools"):
        raise InvalidInput("--http-parser httptools needs httptools: pip install 'remem[server]'")
    if parser not in PROTOCOLS:
        raise InvalidInput(f"--http-parser is auto, httptools or h11, not {parser[:20]!r}")
    return PROTOCOLS[parser]


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing a refused request."""


class _Closing:
    """The transport uvicorn's protocol is given: the real one, except that ``close()`` in
    the middle of a request lingers (see the module docstring)."""

    def __init__(self, transport: asyncio.Transport, owner: _Bounded) -> None:
        self._transport, self._owner = transport, owner
        self.lingering = False
        self.dropped = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        transport = self._transport
        if self.lingering or transport.is_closing():
            return
        if not self._owner._mid_request() or not transport.can_write_eof():
            transport.close()
            return
        self.lingering = True
        transport.write_eof()  # after what is buffered: the client reads the answer, then EOF
        transport.resume_reading()
        asyncio.get_running_loop().call_later(LINGER_SECONDS, transport.close)

    def drop(self, data: bytes) -> None:
        self.dropped += len(data)
        if self.dropped > LINGER_BYTES:
            self._transport.close()


class _Bounded(asyncio.Protocol):
    """What both parsers' protocols add (see the module docstring). A concrete class says
    whether the next bytes its parser reads belong to a request head (:meth:`_in_head`)
    or to a body (:meth:`_in_body`), how many connections are open, and whether a
    response is under way."""

    _closer: _Closing | None = None
    _bounded: asyncio.Transport | None = None
    _head_bytes = 0
    _head_timer: asyncio.TimerHandle | None = None
    _refusal: RememError | None = None

    def _in_head(self) -> bool:
        raise NotImplementedError

    def _in_body(self) -> bool:
        raise NotImplementedError

    def _mid_request(self) -> bool:
        """Whether the client may still be sending this request's bytes."""
        return self._head_bytes > 0 or self._in_body()

    def _open_connections(self) -> int:
        raise NotImplementedError

    def _responding(self) -> bool:
        raise NotImplementedError

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are no asyncio.Transport subclasses, but have its methods.
        self._closer = _Closing(cast(asyncio.Transport, transport), self)
        self._bounded = cast(asyncio.Transport, self._closer)
        super().connection_made(self._bounded)
        if self._open_connections() > limits_from_env().max_connections:
            transport.close()
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._closer is not None and self._closer.lingering:
            self._closer.drop(data)
            return
        # A head's bytes go to the parser at most MAX_HEAD at a time: once a head is
        # complete the rest (a body, the next request) goes on its own way.
        while data and not self._closing():
            if not self._in_head():
                super().data_received(data)
                data = b""
            else:
                room = MAX_HEAD - self._head_bytes
                if room <= 0:
                    self._refuse(headers_too_large())
                    return
                if self._head_timer is None:
                    self._arm()
                piece, data = data[:room], data[room:]
                self._head_bytes += len(piece)
                super().data_received(piece)
            if not self._in_head():
                self._head_done()

    def _head_done(self) -> None:
        """A request head is complete: the next one is counted from zero."""
        self._head_bytes = 0
        self._disarm()

    def _refuse(self, error: RememError) -> None:
        """Answer ``error`` (unless a response is under way) and close the connection."""
        transport = self._bounded
        if transport is None or transport.is_closing():
            return
        if not self._responding():
            transport.write(raw_response(error))
        transport.close()
        self._disarm()

    def _closing(self) -> bool:
        return self._bounded is None or self._bounded.is_closing()

    def _arm(self) -> None:
        self._disarm()
        timeout = limits_from_env().header_timeout
        self._head_timer = asyncio.get_running_loop().call_later(timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _too_slow(self) -> None:
        self._head_timer = None
        if self._in_head() and self._bounded is not None and not self._bounded.is_closing():
            self._bounded.close()


class BoundedH11(_Bounded, H11Protocol):
    """uvicorn's h11 protocol, bounded (its header fields are counted by
    :class:`~remem.http.bounds.RequestBounds`, within the bytes counted here)."""

    def _in_head(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def _in_body(self) -> bool:
        return self.conn.their_state is h11.SEND_BODY

    def _open_connections(self) -> int:
        return len(self.connections)

    def _responding(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete


if importlib.util.find_spec("httptools"):  # the server extra installs it
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class BoundedHttpTools(_Bounded, HttpToolsProtocol):
        """uvicorn's httptools protocol, bounded; it also counts header fields as the
        parser reports them."""

        _reading_head = True
        _fields = 0
        #: After a chunk's size line and before its data: where a chunked body's
        #: trailer fields arrive (after the last, empty chunk), which the parser buffers
        #: like a head's fields; counted against the same 16 KiB.
        _chunk_line = False

        def _in_head(self) -> bool:
            return self._reading_head or self._chunk_line

        def _in_body(self) -> bool:
            return not self._reading_head

        def on_chunk_header(self) -> None:
            self._chunk_line = True

        def on_body(self, body: bytes) -> None:
            self._chunk_line = False
            super().on_body(body)

        def _open_connections(self) -> int:
            return len(self.connections)

        def _responding(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def on_message_begin(self) -> None:
            self._fields, self._chunk_line = 0, False
            super().on_message_begin()

        def on_header(self, name: bytes, value: bytes) -> None:
            self._fields += 1
            if self._fields > MAX_FIELDS:
                self._refusal = headers_too_large()
                raise _Refused  # uvicorn sees a parser error: send_400_response below
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._reading_head = False
            self._head_done()
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._chunk_line = False
            super().on_message_complete()
            self._reading_head = True

        def send_400_response(self, msg: str) -> None:
            if self._refusal is not None:
                self._refuse(self._refusal)
            else:
                super().send_400_response(msg)


__all__ = [
    "HEADER_TIMEOUT",
    "MAX_CONNECTIONS",
    "PROTOCOLS",
    "BoundedH11",
    "ConnectionLimits",
    "limits_from_env",
    "protocol_for",
]

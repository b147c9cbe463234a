"""Server-Sent Events of :meth:`remem.Memory.subscribe` (``GET /v1/agents/{agent}/events``).

One event a :class:`~remem.app.subscription.Change`::

    id: <seq>
    event: note.changed | agent.changed
    data: <the Change's JSON form>

``id`` is the log position: a client that reconnects with ``Last-Event-ID`` (what
browsers' ``EventSource`` sends) or ``?after=`` gets the changes after it. A comment line
is sent at once (so the client knows it is subscribed) and then every
:data:`HEARTBEAT` seconds of silence (so proxies keep the connection open and a gone
client is noticed). The subscription's ``poll`` runs in a worker thread a second at a
time (:data:`POLL_SECONDS`), on a limiter of its own so streams never starve the other
routes of threads; between polls the stream checks whether the client went, and the
subscription is closed however the stream ends. No thread outlives it by more than one
poll.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import orjson

from remem.app.subscription import Change, Subscription
from remem.errors import InvalidInput
from remem.schema import to_json

#: Seconds of silence after which a comment line is sent.
HEARTBEAT = 15.0
#: Seconds one poll of the subscription waits in its worker thread.
POLL_SECONDS = 1.0
#: Streams polling at once in worker threads (more wait their turn, a poll at a time).
MAX_POLLING = 64
_LIMITER: anyio.CapacityLimiter | None = None


def _limiter() -> anyio.CapacityLimiter:
    global _LIMITER
    if _LIMITER is None:  # made inside the event loop, on the first stream
        _LIMITER = anyio.CapacityLimiter(MAX_POLLING)
    return _LIMITER


def resume_position(last_event_id: str | None, after: str | None) -> int | None:
    """Where a stream starts: after ``Last-Event-ID`` when sent (a reconnect), else after
    the ``after`` query parameter, else from now on (``None``)."""
    for name, raw in (("Last-Event-ID", last_event_id), ("after", after)):
        if raw is None or raw == "":
            continue
        text = raw.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 18):
            raise InvalidInput(f"{name} must be a log position (an event's id), not {raw[:20]!r}")
        return int(text)
    return None


def frame(change: Change) -> bytes:
    """One change as an SSE event."""
    data = orjson.dumps(to_json(change))
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (change.seq, change.event.encode(), data)


async def stream(
    sub: Subscription,
    gone: Callable[[], Awaitable[bool]],
    *,
    heartbeat: float = HEARTBEAT,
) -> AsyncIterator[bytes]:
    """The SSE body of ``sub`` until the client is ``gone`` (or the stream is cancelled);
    ``sub`` is closed at the end either way."""
    try:
        yield b": subscribed\nretry: 2000\n\n"
        quiet_since = time.monotonic()
        while not sub.closed:
            changes = await anyio.to_thread.run_sync(sub.poll, POLL_SECONDS, limiter=_limiter())
            if changes:
                yield b"".join(frame(change) for change in changes)
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= heartbeat:
                yield b": heartbeat\n\n"
                quiet_since = time.monotonic()
            if await gone():
                break
    finally:
        sub.close()


__all__ = ["HEARTBEAT", "frame", "resume_position", "stream"]

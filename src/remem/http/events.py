"""Server-Sent Events of :meth:`remem.Memory.subscribe` (``GET /v1/agents/{agent}/events``).

One event a :class:`~remem.app.subscription.Change`::

    id: <seq>
    event: note.changed | agent.changed
    data: <the Change's JSON form>

``id`` is the log position: a client that reconnects with ``Last-Event-ID`` (what
browsers' ``EventSource`` sends) or ``?after=`` gets the changes after it. A comment line
is sent at once (so the client knows it is subscribed) and then every
:data:`HEARTBEAT` seconds of silence (so proxies keep the connection open and a gone
client is noticed). The stream waits on the event loop (:class:`remem.http.waits.Waiter`:
no thread is held while it waits, a second at a time, :data:`POLL_SECONDS`, between
which it checks whether the client went), re-checks the credential before each event and
at least every :data:`remem.http.waits.RECHECK_SECONDS` (a revoked token or an ended
session ends the stream with no further event), and ends after ``max_seconds``
(``remem serve --stream-max-seconds``) with a last block ``id: <the position read up
to>``, so that the client's reconnect with ``Last-Event-ID`` resumes where it stopped
and loses nothing. The subscription is closed however the stream ends.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

import orjson

from remem.app.subscription import Change
from remem.errors import InvalidInput, Unauthenticated
from remem.http.waits import STREAM_MAX_SECONDS, Waiter
from remem.schema import to_json

#: Seconds of silence after which a comment line is sent.
HEARTBEAT = 15.0
#: Seconds a stream waits for changes before checking whether its client went.
POLL_SECONDS = 1.0


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


def end_frame(after: int) -> bytes:
    """The last block of a stream that reached its time limit: no event, but the
    position read up to as the id (``EventSource`` keeps it as ``Last-Event-ID``)."""
    return b": the stream reached its time limit: reconnect with Last-Event-ID\nid: %d\n\n" % (
        after
    )


async def stream(
    waiter: Waiter,
    gone: Callable[[], Awaitable[bool]],
    *,
    heartbeat: float = HEARTBEAT,
    max_seconds: float = STREAM_MAX_SECONDS,
) -> AsyncIterator[bytes]:
    """The SSE body of ``waiter``'s subscription until the client is ``gone``, its
    credential ends, ``max_seconds`` pass (or the stream is cancelled); the waiter is
    closed at the end either way."""
    sub = waiter.sub
    try:
        yield b": subscribed\nretry: 2000\n\n"
        started = quiet_since = time.monotonic()
        while not sub.closed:
            left = started + max_seconds - time.monotonic()
            if left <= 0:
                yield end_frame(sub.after)
                break
            try:
                changes = await waiter.next(min(POLL_SECONDS, left))
            except Unauthenticated:  # the credential ended: not one more event
                break
            if changes:
                yield b"".join(frame(change) for change in changes)
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= heartbeat:
                yield b": heartbeat\n\n"
                quiet_since = time.monotonic()
            if await gone():
                break
    finally:
        waiter.close()


__all__ = ["HEARTBEAT", "end_frame", "frame", "resume_position", "stream"]

"""Long polls and event streams that hold no thread, and how many one principal may hold.

A wait (``GET …/changes?wait=N``, ``GET …/events``) is a
:class:`~remem.app.subscription.LocalSubscription` waited for on the event loop
(:class:`Waiter`): the subscription's wake-up (this process's writes, PostgreSQL's
``NOTIFY`` from any host) sets an :class:`asyncio.Event` through
:meth:`~remem.app.subscription.LocalSubscription.on_wake`, and the log is read again
when woken and every :attr:`~remem.app.subscription.LocalSubscription.interval`
seconds (other processes' appends to a JSONL log, which signal nothing). Each read is a
``poll(0)``: short, in a worker thread on a limiter of its own (:data:`READERS`), so
waits never take the threads the other routes run in, however many are held.

A waiter re-checks its credential (:data:`RECHECK_SECONDS`): before it hands out
changes, and at least that often while it waits; a revoked token or an ended session
raises :class:`~remem.errors.Unauthenticated` out of :meth:`Waiter.next`.

:class:`WaitLimits` counts each principal's waits in this process (an event loop's
count, so under ``remem serve --workers N`` each process holds its own): one past
``--max-waits-per-principal`` is :class:`~remem.errors.TooManyRequests` (429 with
``Retry-After: 1``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import anyio

from remem.app.subscription import Change, LocalSubscription
from remem.errors import InvalidInput, RememError, TooManyRequests, Unauthenticated

#: Concurrent waits and streams one principal may hold in one process (the default of
#: ``remem serve --max-waits-per-principal``).
MAX_WAITS_PER_PRINCIPAL = 8
#: The most seconds a waiter goes without re-checking its credential.
RECHECK_SECONDS = 5.0
#: The longest an event stream lasts before it ends for the client to resume
#: (the default of ``remem serve --stream-max-seconds``).
STREAM_MAX_SECONDS = 3600.0
#: Worker threads reading subscriptions (and re-checking credentials) at once.
READERS = 8
_READER_LIMIT: anyio.CapacityLimiter | None = None

#: Re-checks the waiter's credential: raises (``Unauthenticated``) once it has ended.
Recheck = Callable[[], Awaitable[None]]


def readers() -> anyio.CapacityLimiter:
    """The worker-thread limiter of waits' reads (made in the event loop, on first use)."""
    global _READER_LIMIT
    if _READER_LIMIT is None:
        _READER_LIMIT = anyio.CapacityLimiter(READERS)
    return _READER_LIMIT


class WaitLimits:
    """Each principal's concurrent waits in this process, at most ``per_principal``.

    Used from the event loop only (no lock): :meth:`hold` before answering, the returned
    release once the wait or stream ends (it may be called more than once)."""

    def __init__(self, per_principal: int = MAX_WAITS_PER_PRINCIPAL) -> None:
        if per_principal < 1:
            raise ValueError("per_principal is at least 1")
        self.per_principal = per_principal
        self._held: dict[Hashable, int] = {}

    def hold(self, principal: Hashable) -> Callable[[], None]:
        """Count one more wait of ``principal`` (``TooManyRequests`` past the limit); the
        function that ends it."""
        count = self._held.get(principal, 0)
        if count >= self.per_principal:
            raise TooManyRequests(
                f"this credential already holds {count} long polls or event streams on "
                f"this server process, the most it allows ({self.per_principal}): retry "
                "after Retry-After seconds, close a wait you no longer need, or have the "
                "operator raise `remem serve --max-waits-per-principal`",
                retry_after=1,
            )
        self._held[principal] = count + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            left = self._held[principal] - 1
            if left:
                self._held[principal] = left
            else:
                del self._held[principal]

        return release


class Waiter:
    """A subscription waited for on the event loop (see the module docstring); made in
    the event loop. :meth:`close` closes the subscription and calls ``release`` (the
    end of its :meth:`WaitLimits.hold`)."""

    def __init__(
        self, sub: LocalSubscription, recheck: Recheck, release: Callable[[], None]
    ) -> None:
        self.sub = sub
        self._recheck = recheck
        self._release = release
        self._loop = asyncio.get_running_loop()
        self._news = asyncio.Event()
        self._checked = time.monotonic()
        sub.on_wake(self._woken)

    def _woken(self) -> None:  # any thread: only schedules
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            self._loop.call_soon_threadsafe(self._news.set)

    def close(self) -> None:
        """End the wait (any number of times)."""
        self.sub.close()
        self._release()

    async def recheck(self) -> None:
        """Re-check the credential now (raises once it has ended)."""
        await self._recheck()
        self._checked = time.monotonic()

    async def next(
        self, timeout: float, gone: Callable[[], Awaitable[bool]] | None = None
    ) -> list[Change]:
        """The changes after the subscription's position, waiting up to ``timeout``
        seconds for one (``[]`` when none came, once closed, or once ``gone`` says the
        client went: its wait ends then, not at the timeout). The credential is
        re-checked before any change is returned and every :data:`RECHECK_SECONDS`."""
        deadline = time.monotonic() + timeout
        while True:
            self._news.clear()  # before the read: a wake-up during it is kept
            changes = await anyio.to_thread.run_sync(self.sub.poll, 0.0, limiter=readers())
            now = time.monotonic()
            if changes or now - self._checked >= RECHECK_SECONDS:
                await self.recheck()
                now = time.monotonic()
            left = deadline - now
            if changes or self.sub.closed or left <= 0:
                return changes
            pause = min(self.sub.interval, left, self._checked + RECHECK_SECONDS - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._news.wait(), max(pause, 0.0))
            if gone is not None and await gone():
                return []


def open_waiter(
    limits: WaitLimits, sub: Any, principal: Hashable, authenticate: Callable[[], Hashable]
) -> Waiter:
    """``sub`` (an opened :class:`~remem.app.subscription.LocalSubscription`) waited for
    on the event loop as one more of ``principal``'s waits (``TooManyRequests`` past
    ``limits``; ``sub`` is closed then), re-checked by calling ``authenticate`` (the
    request's authentication, in a reader thread): ``Unauthenticated`` once the token is
    revoked or the session ended, or once it stands for another principal. Made in the
    event loop."""
    if not isinstance(sub, LocalSubscription):  # `remem serve` serves a local Memory
        sub.close()
        raise RememError("this service's Memory cannot wait on its event loop")
    try:
        release = limits.hold(principal)
    except TooManyRequests:
        sub.close()
        raise

    async def recheck() -> None:
        now = await anyio.to_thread.run_sync(authenticate, limiter=readers())
        if now != principal:
            raise Unauthenticated(
                "the credential this wait began with has changed: authenticate again"
            )

    return Waiter(sub, recheck, release)


def waits_from_env() -> tuple[int, float]:
    """``REMEM_SERVE_MAX_WAITS`` (each principal's concurrent waits, default 8) and
    ``REMEM_SERVE_STREAM_MAX_SECONDS`` (an event stream's longest life, default 3600),
    as ``remem serve --max-waits-per-principal`` and ``--stream-max-seconds`` set them."""
    waits = os.environ.get("REMEM_SERVE_MAX_WAITS") or str(MAX_WAITS_PER_PRINCIPAL)
    seconds = os.environ.get("REMEM_SERVE_STREAM_MAX_SECONDS") or str(int(STREAM_MAX_SECONDS))
    if not (waits.isdigit() and int(waits) >= 1):
        raise InvalidInput("REMEM_SERVE_MAX_WAITS is a whole number of waits, at least 1")
    if not (seconds.isdigit() and int(seconds) >= 1):
        raise InvalidInput(
            "REMEM_SERVE_STREAM_MAX_SECONDS is a whole number of seconds, at least 1"
        )
    return int(waits), float(seconds)


__all__ = [
    "MAX_WAITS_PER_PRINCIPAL",
    "READERS",
    "RECHECK_SECONDS",
    "STREAM_MAX_SECONDS",
    "WaitLimits",
    "Waiter",
    "open_waiter",
    "readers",
    "waits_from_env",
]

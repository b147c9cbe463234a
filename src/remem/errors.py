"""The remem error tree.

Every error remem raises on purpose derives from :class:`RememError`, so a host
can catch one class. Each carries a short machine-readable ``code`` and a
message that says what was wrong and how to fix it::

    RememError
     ├── Denied          not authorized; the message names the rule that refused
     ├── Rejected        write policy refused the content (``reason``: secret, too_long, ...)
     ├── NotFound        no such note / run / agent visible to this context
     ├── Conflict        stale ``if_version``
     ├── InvalidInput    a malformed argument (unknown scope, bad id, empty query ...)
     │    ├── BodyTooLarge     a service request's body over its limit (HTTP 413)
     │    └── HeadersTooLarge  a request line and headers over the limits (HTTP 431)
     ├── ConfigError     remem.toml is malformed or names an unknown key
     ├── Unauthenticated  no host token, or one the service does not know (HTTP 401)
     ├── TooManyRequests  a principal holds all its concurrent waits (HTTP 429)
     └── StoreError      the data directory or log cannot be used
          ├── CorruptLog       a bad line inside a log (fail closed)
          ├── UnsupportedLog   a log written by a newer version of remem
          └── NotDurable       a new directory could not be made durable (writes stop)

Every interface (CLI, HTTP, MCP) maps these to its exit code, status or error code
through the one table in :mod:`remem.error_table`, which also builds the error body.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class RememError(Exception):
    """Root of every error remem raises deliberately."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class Denied(RememError):
    """The envelope's principal may not perform this action on this target."""

    code = "denied"

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule


class Rejected(RememError):
    """Write policy refused the content. ``reason`` is a stable reason code."""

    code = "rejected"

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class NotFound(RememError):
    """Nothing with that id is visible to this context."""

    code = "not_found"


class Conflict(RememError):
    """The note changed since the version the caller read.

    ``current`` is the note as it is now (a :class:`remem.Note`, which the caller may
    see), so a host can show it or retry against its ``version``; ``None`` when unknown.
    """

    code = "conflict"

    def __init__(self, message: str, current: Any = None) -> None:
        # Typed Any, not Note: this module stays a leaf that imports nothing from remem.
        super().__init__(message)
        self.current = current


class InvalidInput(RememError):
    """An argument is malformed (unknown scope name, bad id, wrong type)."""

    code = "invalid"


class BodyTooLarge(InvalidInput):
    """A request to ``remem serve`` whose body is over the route's limit, refused by its
    ``Content-Length`` or while it streams, before it is buffered (HTTP 413)."""

    code = "body_too_large"


class HeadersTooLarge(InvalidInput):
    """A request to ``remem serve`` whose request line and headers are over the service's
    limits (bytes or fields), refused while they arrive (HTTP 431)."""

    code = "headers_too_large"


#: How many offending keys an error names, and how many characters of each.
SHOWN_KEYS, SHOWN_KEY_CHARS = 5, 40


def shown_keys(keys: Iterable[object]) -> str:
    """Offending keys (unknown fields, arguments, parameters) as an error names them: the
    first :data:`SHOWN_KEYS` in sorted order, each cut to :data:`SHOWN_KEY_CHARS`
    characters, and how many more there are, so an error never grows with its input."""
    names = sorted(str(k) for k in keys)
    shown = [k if len(k) <= SHOWN_KEY_CHARS else k[:SHOWN_KEY_CHARS] + "…" for k in names]
    text = ", ".join(repr(k) for k in shown[:SHOWN_KEYS])
    more = len(names) - SHOWN_KEYS
    return f"[{text}, and {more} more]" if more > 0 else f"[{text}]"


class ConfigError(RememError):
    """The policy file is malformed or names an unknown key."""

    code = "config"


class Unauthenticated(RememError):
    """A service call without a valid credential: no ``Authorization: Bearer`` token, or
    one that is unknown or revoked. (Authenticated but refused is :class:`Denied`.)"""

    code = "unauthenticated"


class TooManyRequests(RememError):
    """The principal already holds as many long polls and event streams as one process
    allows it (``remem serve --max-waits-per-principal``): retry after ``retry_after``
    seconds (HTTP 429 with ``Retry-After``), or close a wait it no longer needs."""

    code = "too_many_requests"

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StoreError(RememError):
    """The data directory or an event log cannot be used.

    ``applied`` says what became of the change the failing call was making, and the
    message says it in words: ``False``, nothing was changed (retry after fixing the
    cause); ``True``, the change was made and is durable, only something after it failed
    (e.g. releasing the lock, or a compaction's clean-up, which the next open finishes);
    ``None``, unknown (a failed ``fsync``: the data may or may not survive a crash; the
    log takes no more writes until the store is reopened, and this process never serves
    that write). Errors of reads carry ``False``.

    ``detail``: what the operator needs besides (the database's host and name, the
    driver's own words), for the CLI and the service's log only: the message goes to
    every caller of a service, so it names no part of a connection string.
    """

    code = "store"

    def __init__(self, message: str, applied: bool | None = False, *, detail: str = "") -> None:
        super().__init__(message)
        self.applied = applied
        self.detail = detail


class CorruptLog(StoreError):
    """A line inside a log is damaged; the store refuses to guess."""

    code = "corrupt"


class UnsupportedLog(StoreError):
    """A log record was written by a newer remem than this one."""

    code = "unsupported"


class NotDurable(StoreError):
    """A new directory was made but its parent's ``fsync`` failed: a crash may lose it.
    The log in it takes no more writes until the store is reopened."""

    code = "not_durable"

"""Idempotency keys: a retried write returns the first result instead of writing twice.

A caller (the HTTP service, from a request's ``Idempotency-Key``) runs a write inside
:func:`idempotent` with a *seed*: a digest of who asks, the route, the envelope, the key
and the request. The write derives its ids from the seed (:func:`keyed_id`) instead of
drawing random ones, so the same request sent again builds the same note id and event
id: the store ignores an event whose id is in the log, and ``remember`` answers with the
note already written; a note change (correct, move, forget, disable, enable, pin, unpin)
derives its event id from the seed and the note id, and a retry whose first attempt was
applied answers with the note (as it is now) instead of a ``Conflict`` its own first
attempt caused. It holds across processes sharing the data directory and across
restarts, since only the log remembers. Other writes ignore it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_SEED: ContextVar[str | None] = ContextVar("remem_idempotency_seed", default=None)


@contextmanager
def idempotent(seed: str) -> Iterator[None]:
    """Writes in this block (this thread's context) derive their ids from ``seed``."""
    token = _SEED.set(seed)
    try:
        yield
    finally:
        _SEED.reset(token)


def current_seed() -> str | None:
    """The seed of the enclosing :func:`idempotent` block, if any. Read it in the caller's
    thread: a write's build may run on another writer's thread (group commit)."""
    return _SEED.get()


def seed_of(*parts: str | bytes) -> str:
    """A seed from the parts that identify one request (unambiguously joined)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def keyed_id(seed: str, prefix: str, part: str) -> str:
    """An id shaped like :func:`remem.core.ids.new_id`'s (``prefix_`` + 26 base32
    characters) derived from ``seed`` and ``part``: the same for the same request."""
    digest = hashlib.sha256(f"{seed}\0{part}".encode()).digest()
    n = int.from_bytes(digest[:17], "big") >> 6  # 130 bits: 26 characters of 5
    return prefix + "_" + "".join(_ALPHABET[(n >> (5 * i)) & 31] for i in range(25, -1, -1))


__all__ = ["current_seed", "idempotent", "keyed_id", "seed_of"]

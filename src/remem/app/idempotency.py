"""Idempotency keys: a retried write returns the first result instead of writing twice.

A caller (the HTTP service, from a request's ``Idempotency-Key``) runs a write inside
:func:`idempotent` with a :class:`Keyed` request: a *seed*, a digest of who asks (a host
token's name, or a member session's agent, channel and member), the agent and the key
only; and a *fingerprint*, a digest of the seed and of what is asked (the route, the
path, the ``Remem-Run`` header as sent, the body). The write derives its ids from the
seed (:func:`keyed_id`): one event id per key (:func:`request_eid`) and, for
``remember``, the new note's id. The event that applies the request carries that id and
the fingerprint (``Event.request``: a SHA-256 digest, never the request's content).

Under the agent's writer lock, before anything is written, :func:`replayed` looks that
event id up in the log (:meth:`remem.store.base.EventStore.find`):

- absent: a new request; it is applied, and its event records the key;
- present with the same fingerprint: the same request sent again; nothing is written,
  and the write answers with the note that event is about, as it is now;
- present with another fingerprint (another route, path, envelope or body): the key was
  reused for a different request, ``InvalidInput`` (:data:`REUSED`, HTTP 422), and
  nothing is written.

Only the log remembers, so this holds across processes sharing the data and across
restarts, on every backend. A request that wrote nothing (a change that was already so,
a ``recall`` tool call) leaves no event, so its key binds nothing. A write answers with a
note only if the caller may see it now (:meth:`remem.app.kernel.Kernel.given`): a
retried request whose note has since moved out of the caller's reach is ``NotFound``,
like a read of it. Other writes ignore the key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from remem.core.events import Erased, Event, NoteEvent
from remem.errors import InvalidInput
from remem.store.base import EventStore

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: The start of the refusal of a key sent again with a different request.
REUSED = "Idempotency-Key reused for a different request"


@dataclass(frozen=True, slots=True)
class Keyed:
    """A request sent with an idempotency key (see the module docstring).

    ``seed``: the ids' seed (who asks, the agent, the key). ``fingerprint``: the digest
    that tells this request from another one sent with the same key."""

    seed: str
    fingerprint: str


_KEYED: ContextVar[Keyed | None] = ContextVar("remem_idempotency", default=None)


@contextmanager
def idempotent(keyed: Keyed) -> Iterator[None]:
    """Writes in this block (this thread's context) are the request ``keyed``."""
    token = _KEYED.set(keyed)
    try:
        yield
    finally:
        _KEYED.reset(token)


def current() -> Keyed | None:
    """The request of the enclosing :func:`idempotent` block, if any. Read it in the
    caller's thread: a write's build may run on another writer's thread (group commit)."""
    return _KEYED.get()


def seed_of(*parts: str | bytes) -> str:
    """A digest of the parts (unambiguously joined): a seed or a fingerprint."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def keyed_id(seed: str, prefix: str, part: str) -> str:
    """An id shaped like :func:`remem.core.ids.new_id`'s (``prefix_`` + 26 base32
    characters) derived from ``seed`` and ``part``: the same for the same key."""
    digest = hashlib.sha256(f"{seed}\0{part}".encode()).digest()
    n = int.from_bytes(digest[:17], "big") >> 6  # 130 bits: 26 characters of 5
    return prefix + "_" + "".join(_ALPHABET[(n >> (5 * i)) & 31] for i in range(25, -1, -1))


def request_eid(keyed: Keyed) -> str:
    """The id of the event that applies the request: one per key, whatever the route."""
    return keyed_id(keyed.seed, "ev", "request")


def stamp(keyed: Keyed) -> dict[str, str]:
    """The envelope fields (``eid``, ``request``) of the event that applies ``keyed``."""
    return {"eid": request_eid(keyed), "request": keyed.fingerprint}


def replayed(log: EventStore, keyed: Keyed) -> str | None:
    """Under the writer lock: the id of the note the request's event is about if this
    request was applied already, ``None`` if its key is new; ``InvalidInput`` (nothing
    written) if the key was applied to a different request. A request whose note a
    compaction erased answers with that note's id (which no one may read any more)."""
    prior: Event | None = log.find(request_eid(keyed))
    if prior is None:
        return None
    if isinstance(prior, Erased):
        return prior.note_id
    if not isinstance(prior, NoteEvent) or prior.request != keyed.fingerprint:
        raise InvalidInput(
            f"{REUSED}: this key was already used with another route, note, Remem-Run "
            "envelope or body; send a new key with each new request (the same key only to "
            "retry the same request)"
        )
    return prior.note_id


__all__ = [
    "REUSED",
    "Keyed",
    "current",
    "idempotent",
    "keyed_id",
    "replayed",
    "request_eid",
    "seed_of",
    "stamp",
]

"""Sortable, globally unique identifiers (ULID layout: 48-bit ms time + 80 random bits).

Ids are Crockford base32, prefixed with their kind (``note_``, ``run_``, ``ev_``,
``rev_``). Within one process, ids generated in the same millisecond stay strictly
increasing, so sorting ids sorts by creation.
"""

from __future__ import annotations

import os
import re
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_BODY = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
_lock = threading.Lock()
_last_ms = -1
_last_rand = 0
#: Random bytes read ahead from the OS, 10 per id (one read serves 400 ids).
_pool = memoryview(b"")
_POOL_BYTES = 4000


def _forget_pool() -> None:
    """A forked child must never hand out the random bytes its parent will also use."""
    global _pool, _lock
    _pool = memoryview(b"")
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


#: Every 10-bit value as its two base32 characters: half the steps of one per character.
_PAIRS = [_ALPHABET[i >> 5] + _ALPHABET[i & 31] for i in range(1024)]


def _encode(value: int, length: int) -> str:
    """``value`` as ``length`` base32 characters, most significant first."""
    pairs = _PAIRS
    chars = []
    if length & 1:
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    for _ in range(length >> 1):
        chars.append(pairs[value & 1023])
        value >>= 10
    return "".join(reversed(chars))


def new_id(prefix: str, *, now_ms: int | None = None) -> str:
    """Return ``prefix_`` + a 26-character ULID body, monotonic within this process."""
    global _last_ms, _last_rand, _pool
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _lock:
        if ms <= _last_ms:
            ms = _last_ms
            rand = _last_rand + 1
        else:
            if len(_pool) < 10:
                _pool = memoryview(os.urandom(_POOL_BYTES))
            rand = int.from_bytes(_pool[:10], "big")
            _pool = _pool[10:]
        _last_ms, _last_rand = ms, rand
    return f"{prefix}_{_encode(ms, 10)}{_encode(rand & ((1 << 80) - 1), 16)}"


def is_id(value: object, prefix: str) -> bool:
    """True when ``value`` is a well-formed id of the given kind."""
    if not isinstance(value, str) or not value.startswith(prefix + "_"):
        return False
    return bool(_BODY.match(value[len(prefix) + 1 :]))

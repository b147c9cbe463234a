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
    p = _PAIRS  # 10-bit pairs, most significant first, unrolled: one id per event written
    return (
        f"{prefix}_{p[(ms >> 40) & 1023]}{p[(ms >> 30) & 1023]}{p[(ms >> 20) & 1023]}"
        f"{p[(ms >> 10) & 1023]}{p[ms & 1023]}{p[(rand >> 70) & 1023]}{p[(rand >> 60) & 1023]}"
        f"{p[(rand >> 50) & 1023]}{p[(rand >> 40) & 1023]}{p[(rand >> 30) & 1023]}"
        f"{p[(rand >> 20) & 1023]}{p[(rand >> 10) & 1023]}{p[rand & 1023]}"
    )


def is_id(value: object, prefix: str) -> bool:
    """True when ``value`` is a well-formed id of the given kind."""
    if not isinstance(value, str) or not value.startswith(prefix + "_"):
        return False
    return bool(_BODY.match(value[len(prefix) + 1 :]))

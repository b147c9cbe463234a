"""What a value looks like: a word, an identifier, or a chosen or random secret.

The secret detectors (:mod:`remem.policy.secrets` and the ``credentials_*``
modules) share these shape tests; each is a cheap predicate on one token.
"""

from __future__ import annotations

import math
import re
from collections import Counter

__all__ = ["has_digit", "looks_random", "mixed", "strong", "word_like", "wordset"]


def wordset(words: str) -> frozenset[str]:
    """The whitespace-separated words of ``words`` as a set."""
    return frozenset(words.split())


def has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def mixed(value: str) -> bool:
    """Random tokens almost always mix letters and digits; words and ids rarely do."""
    return has_digit(value) and any(c.isalpha() for c in value)


_SPECIAL = frozenset("!@#$%^&*+=?~_|\\/<>")


def strong(value: str) -> bool:
    """Looks like a chosen secret rather than an English word."""
    has_alpha = any(c.isalpha() for c in value)
    if mixed(value) or (has_alpha and any(c in _SPECIAL for c in value)):
        return True
    return any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)


_HOSTNAME = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}$")
_SEGMENT_SPLIT = re.compile(r"[_\-./+=~]+")
_WORD = re.compile(r"(?:[A-Z]?[a-z]+)+|[A-Z]+")


def _shannon(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def word_like(part: str) -> bool:
    """True for words such as "limiter", "HTTP", "getUserToken"; not for "uymATOUtyxcx"."""
    return _WORD.fullmatch(part) is not None


def _identifier_like(token: str) -> bool:
    """snake_case names, dates, versions and paths split into words or short parts."""
    parts = [p for p in _SEGMENT_SPLIT.split(token) if p]
    return all(word_like(p) or p.isdigit() or len(p) <= 4 for p in parts)


def looks_random(token: str) -> bool:
    """Long, letters-and-digits, not an identifier/path/host, high Shannon entropy."""
    token = token.strip(".-_~")
    if len(token) < 16 or not mixed(token):
        return False
    if token.startswith("http") or _HOSTNAME.match(token) or _identifier_like(token):
        return False
    return _shannon(token) >= 3.0

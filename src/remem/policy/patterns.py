"""Id patterns of a principal's grants: ``*`` stands for any run of characters and is the
only wildcard (``?`` and ``[`` are plain characters); ``*`` alone matches everything."""

from __future__ import annotations


def pattern_matches(pattern: str, value: str) -> bool:
    """Whether ``value`` matches ``pattern``, where ``*`` stands for any run of characters
    (the only wildcard: ``?`` and ``[`` are plain characters)."""
    if "*" not in pattern:
        return pattern == value
    first, *middle, last = pattern.split("*")
    if len(value) < len(first) + len(last) or not value.startswith(first):
        return False
    if not value.endswith(last):
        return False
    at, end = len(first), len(value) - len(last)
    for part in middle:
        found = value.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


__all__ = ["pattern_matches"]

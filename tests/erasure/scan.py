"""Scanners for erased text: every object the process can reach, every file of a data
directory. Used by the erasure tests (forget + compact must leave no copy anywhere)."""

from __future__ import annotations

import gc
import random
import string
import sys
from pathlib import Path

#: Objects whose contents are scanned for the marker (text and raw bytes).
_TEXT = (str, bytes, bytearray)
#: Leaf types with nothing to walk into (and no text).
_ATOMS = (int, float, complex, bool, type(None))


def new_marker() -> str:
    """A random lowercase word that no code, model vocabulary or test text contains."""
    return "".join(random.choice(string.ascii_lowercase) for _ in range(16))


def holders(marker: str) -> list[str]:
    """Type names of reachable objects that hold ``marker`` (as text or UTF-8 bytes),
    other than the caller's own ``marker`` object.

    The walk starts from ``sys.modules``, every object the cyclic collector tracks and
    every thread's frame, and follows ``gc.get_referents`` (plus the keys of dicts, which
    the collector does not visit when they are strings) through containers the collector
    does not track: a dict or tuple holding only strings is untracked, so a module-level
    memo of note text is invisible to ``gc.get_objects()`` alone but found here.
    """
    needle = marker.encode()
    roots: list[object] = [sys.modules, *sys._current_frames().values(), *gc.get_objects()]
    seen: set[int] = {id(roots), id(marker), id(needle)}
    stack: list[tuple[object, object]] = [(root, None) for root in roots]
    found: list[str] = []
    while stack:
        obj, parent = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        kind = type(obj)
        if kind is str:
            if marker in obj:  # type: ignore[operator]
                found.append(f"str in {type(parent).__name__}: {obj[:60]!r}")
            continue
        if kind in (bytes, bytearray):
            if needle in obj:  # type: ignore[operator]
                found.append(f"{kind.__name__} in {type(parent).__name__}")
            continue
        if kind in _ATOMS:
            continue
        refs = gc.get_referents(obj)
        if isinstance(obj, dict):
            refs = [*refs, *obj]  # str keys are not visited by the collector
        stack.extend((ref, obj) for ref in refs)
    del roots, stack
    return found


def files_holding(root: Path, marker: str) -> list[str]:
    """Every file under ``root`` (any name, hidden ones too) whose bytes contain ``marker``."""
    needle = marker.encode()
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and needle in path.read_bytes()
    )

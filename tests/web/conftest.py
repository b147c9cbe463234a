"""The browser tests' fixtures (see :mod:`.pad_browser`)."""

from __future__ import annotations

from .pad_browser import pad

__all__ = ["pad"]

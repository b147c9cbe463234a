"""Test embedders: deterministic, fast, and able to fail on demand."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from remem.providers.embed import EmbeddingError

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Bag of words hashed into ``dim`` buckets, L2-normalized: similar words → similar rows.

    ``fail`` makes every call raise; ``calls`` counts texts embedded and
    ``texts`` lists them (notes and queries alike).
    """

    def __init__(self, name: str = "hash-32", dim: int = 32) -> None:
        self._name = name
        self._dim = dim
        self.fail = False
        self.calls = 0
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def reset(self) -> None:
        self.calls = 0
        self.texts.clear()

    def embedded(self, among: Sequence[str]) -> int:
        """How many of the texts embedded since the last reset are in ``among``."""
        wanted = set(among)
        return sum(1 for t in self.texts if t in wanted)

    def embed(self, texts: Sequence[str]) -> Any:
        if self.fail:
            raise EmbeddingError("the fake embedder is down")
        self.calls += len(texts)
        self.texts.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
                out[i, h % self._dim] += 1.0 if h & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

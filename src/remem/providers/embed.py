"""Text embedders: the local static model (default) and OpenAI-compatible HTTP endpoints.

An :class:`Embedder` maps texts to L2-normalized ``float32`` vectors of a fixed
dimension. Embeddings are a derived, rebuildable signal in remem (DESIGN §6):
notes are the source of truth, vectors only help rank them.

numpy is optional: nothing here imports it (or a model) before an embedder is
built, so ``import remem`` works without it. :func:`default_embedder` returns
``None`` when embeddings are unavailable, and recall then runs lexically.

Choosing the embedder: :func:`build_embedder` from explicit settings (no environment);
:func:`embedder_from_env` from these variables (the command line's default; a library
caller passes ``Memory.open(..., embedder=...)`` and :func:`default_embedder`, the
bundled static model, reads no environment):

``REMEM_EMBEDDINGS``
    ``static`` (default): the bundled wordllama model, offline, ~256-d.
    ``off``: no embeddings (lexical recall).
    ``http``: an OpenAI-compatible ``/v1/embeddings`` endpoint, configured by
    ``REMEM_EMBEDDINGS_URL`` (base URL ending in ``/v1``),
    ``REMEM_EMBEDDINGS_MODEL`` and ``REMEM_EMBEDDINGS_KEY_ENV`` (the *name* of
    the environment variable holding the API key; default ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import copy
import json
import logging
import math
import os
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Vectors = NDArray[np.float32]

log = logging.getLogger("remem.embeddings")


class EmbeddingError(Exception):
    """An embedder could not produce vectors (never carries credentials)."""


@runtime_checkable
class Embedder(Protocol):
    """Texts → ``float32`` array ``[len(texts), dim]``, each row L2-normalized.

    ``name`` identifies the model and its version: vectors cached under one
    name are never reused under another. ``embed`` must be deterministic (the
    same text always gives the same vector) and may raise
    :class:`EmbeddingError`. A text with nothing to embed gives a zero row.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


_numpy: bool | None = None


def numpy_available() -> bool:
    """Whether numpy can be imported (checked once per process)."""
    global _numpy
    if _numpy is None:
        try:
            import numpy  # noqa: F401
        except ImportError:
            _numpy = False
        else:
            _numpy = True
    return _numpy


def _normalize(matrix: Vectors) -> Vectors:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


# -- the bundled static model ----------------------------------------------------------------


class StaticEmbedder:
    """The bundled wordllama model (static token embeddings, mean-pooled), fully offline.

    About 20-40 µs per short text on one core, no network, no GPU. Pooling is
    done here (sum of token rows, then L2 norm: the mean's 1/count cancels), so a text's
    vector never depends on the batch it was embedded in.
    """

    def __init__(self, model: Any) -> None:
        import numpy as np

        self._model = model
        matrix = getattr(model, "embedding", None)
        tokenizer = getattr(model, "tokenizer", None)
        if matrix is None or tokenizer is None:
            raise EmbeddingError("this wordllama version does not expose its embedding table")
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._tokenizer = tokenizer
        #: Whether the tokenizer allows assembling a text's ids from its words' (see
        #: :meth:`_token_ids`).
        self._separable = _word_separable(tokenizer)
        #: Token ids per space-separated word, kept between calls: only in the copy an
        #: agent binds to its own memo (:meth:`with_word_memo`); the process-wide model
        #: keeps no word of any text (None).
        self._words: dict[str, list[int]] | None = None
        self._dim = int(self._matrix.shape[1])
        try:
            from wordllama import __version__ as version
        except ImportError:  # pragma: no cover - every release has it
            version = "unknown"
        self._name = f"wordllama-{version}-l2_supercat-{self._dim}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if len(texts) == 1:
            return self._one(texts[0])
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            chunk = list(texts[start : start + _BATCH])
            ids = self._token_ids(chunk)
            counts = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
            filled = np.flatnonzero(counts)
            if not len(filled):
                continue
            flat = np.fromiter((t for i in ids for t in i), dtype=np.int64, count=int(counts.sum()))
            np.clip(flat, 0, self._matrix.shape[0] - 1, out=flat)
            rows = self._matrix.take(flat, axis=0)
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[filled]
            # Sum of token rows; the mean's 1/len cancels in the normalization.
            sums = np.add.reduceat(rows, starts, axis=0)
            norms = np.sqrt(np.einsum("ij,ij->i", sums, sums))
            good = norms > 0
            out[start + filled[good]] = sums[good] / norms[good, None]
        return out

    def with_word_memo(self, words: dict[str, list[int]]) -> StaticEmbedder:
        """This model, keeping words' token ids in ``words`` (one agent's memo, see
        :mod:`remem.recall.memos`, which compaction empties) instead of nowhere."""
        twin = copy.copy(self)
        twin._words = words if self._separable else None
        return twin

    def forget_words(self) -> None:
        """Drop the per-word token ids kept so far (they are words of notes, some since
        forgotten: compaction calls this so that no erased text outlives it in memory)."""
        if self._words is not None:
            self._words.clear()

    def _token_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, exactly as the tokenizer gives them.

        The model's tokenizer (SentencePiece-style BPE: ``▁`` marks a space, no
        merge joins two words) tokenizes a text with single spaces as the
        concatenation of its words' tokens, so words are tokenized once and their
        ids kept; other texts (leading, trailing or repeated spaces, a literal
        ``▁``) go to the tokenizer whole. ``tests/providers`` checks the two agree.
        """
        if not self._separable:
            return self._encode(texts)
        words = self._words
        if words is None:
            words = {}  # nothing is kept past this call
        split = [text.split(" ") if _single_spaced(text) else None for text in texts]
        missing = {w: None for parts in split if parts is not None for w in parts if w not in words}
        if len(words) + len(missing) > _WORDS_KEPT:
            words.clear()
            missing = {w: None for parts in split if parts is not None for w in parts}
        if missing:
            new = list(missing)
            words.update(zip(new, self._encode(new), strict=True))
        whole = [text for text, parts in zip(texts, split, strict=True) if parts is None]
        encoded = iter(self._encode(whole) if whole else [])
        result = []
        for parts in split:
            if parts is None:
                result.append(next(encoded))
                continue
            ids: list[int] = []
            for word in parts:
                known = words.get(word)
                if known is None:  # another thread started the cache over meanwhile
                    known = words[word] = self._encode([word])[0]
                ids += known
            result.append(ids)
        return result

    def _encode(self, texts: list[str]) -> list[list[int]]:
        """The tokenizer's ids, one text per call. The ``_fast`` encoder (tokenizers ≥
        0.20) gives the same ids without character offsets, at a fraction of the cost.
        One text at a time: a batch call hands the texts to the library's thread pool,
        which for the few short strings met here (new words, mostly) costs several
        times the tokenizing itself."""
        tok = self._tokenizer
        encode = getattr(tok, "encode_batch_fast", None) or tok.encode_batch
        return [encode([text], add_special_tokens=False)[0].ids for text in texts]

    def _one(self, text: str) -> Vectors:
        """One text (a query): the batch arithmetic, with less numpy overhead."""
        import numpy as np

        found = self._token_ids([text])[0]
        if not found:
            return np.zeros((1, self._dim), dtype=np.float32)
        ids = np.array(found, dtype=np.int64)
        if max(found) >= len(self._matrix) or min(found) < 0:
            np.clip(ids, 0, len(self._matrix) - 1, out=ids)
        sums = np.add.reduceat(self._matrix.take(ids, axis=0), _FIRST, axis=0)
        norm = np.sqrt(np.einsum("ij,ij->i", sums, sums))
        if not norm[0] > 0:
            return np.zeros((1, self._dim), dtype=np.float32)
        out: Vectors = sums / norm[:, None]  # the batch path's division, element for element
        return out


#: Texts per tokenizer batch: small batches keep the gathered token rows in cache.
_BATCH = 16
#: Words whose token ids are kept (the cache starts over past this).
_WORDS_KEPT = 200_000


def _single_spaced(text: str) -> bool:
    """Non-empty, words separated by single spaces, none at either end, no ``▁``."""
    return (
        bool(text) and text[0] != " " and text[-1] != " " and "  " not in text and ("▁" not in text)
    )


def _word_separable(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` is the kind :meth:`StaticEmbedder._token_ids` may split by
    words: BPE with no pre-tokenizer, a normalizer that prepends ``▁`` and turns spaces
    into ``▁``, and no token holding ``▁`` after its start except runs of ``▁``."""
    import json

    try:
        config = json.loads(tokenizer.to_str())
        vocab = tokenizer.get_vocab()
    except Exception:  # an unexpected tokenizer object: use it whole
        return False
    steps = (config.get("normalizer") or {}).get("normalizers") or []
    expected = [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
    ]
    if (
        config.get("pre_tokenizer") is not None
        or (config.get("model") or {}).get("type") != "BPE"
        or steps != expected
    ):
        return False
    return all(set(t) == {"▁"} for t in vocab if "▁" in t[1:])


_FIRST = [0]

_static_lock = threading.Lock()
_static: StaticEmbedder | None = None
_static_error: str | None = None


def load_static() -> StaticEmbedder:
    """The process-wide bundled model; raises :class:`EmbeddingError` if it cannot load."""
    global _static, _static_error
    with _static_lock:
        if _static is not None:
            return _static
        if _static_error is not None:
            raise EmbeddingError(_static_error)
        try:
            _static = StaticEmbedder(_load_wordllama())
        except ImportError as exc:
            _static_error = f"numpy or wordllama is not installed ({exc.name or exc})"
        except Exception as exc:  # a broken model file, an incompatible version
            _static_error = f"the bundled embedding model could not load: {exc}"
        if _static is None:
            raise EmbeddingError(_static_error or "unavailable")
        return _static


def _load_wordllama() -> Any:
    import numpy  # noqa: F401  (fail early and clearly without numpy)

    # wordllama calls logging.basicConfig() when imported; keep the host's logging as it was.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
        from wordllama import WordLlama
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    return WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)


# -- OpenAI-compatible HTTP endpoints -------------------------------------------------------------


class HttpEmbedder:
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint, over stdlib ``urllib``.

    ``base_url`` is the API root, e.g. ``https://api.openai.com/v1`` or
    ``http://127.0.0.1:8080/v1``. The API key is read from the environment
    variable *named* ``key_env`` at each request (no key set: no
    ``Authorization`` header); it is never stored on the object, logged or put
    in an error message. ``dim`` is probed with one request when not given.
    Raises :class:`EmbeddingError` on an error status, a timeout or a
    malformed answer.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        key_env: str | None = "OPENAI_API_KEY",
        dim: int | None = None,
        timeout: float = 10.0,
        batch_size: int = 128,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        if parsed.username or parsed.password:
            raise ValueError("base_url must not carry credentials; use key_env")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.key_env = key_env
        self.timeout = timeout
        self.batch_size = max(1, batch_size)
        self._dim = dim
        self._name = f"http:{parsed.netloc}{parsed.path.rstrip('/')}:{model}"

    def __repr__(self) -> str:
        return f"HttpEmbedder(url={self.url!r}, model={self.model!r}, key_env={self.key_env!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        out = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if self._dim is None:
            self._dim = int(out.shape[1])
        elif out.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.url} returned {out.shape[1]}-d vectors; {self._dim} were expected"
            )
        return out

    def _request(self, texts: list[str]) -> Vectors:
        import numpy as np

        body = json.dumps({"model": self.model, "input": texts, "encoding_format": "float"})
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.key_env) if self.key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self.url, data=body.encode("utf-8"), headers=headers, method="POST"
        )
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EmbeddingError(
                f"embedding request to {self.url} failed: HTTP {exc.code} {exc.reason}"
            ) from None
        except TimeoutError:
            raise EmbeddingError(
                f"embedding request to {self.url} timed out after {self.timeout:g} s"
            ) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                raise EmbeddingError(
                    f"embedding request to {self.url} timed out after {self.timeout:g} s"
                ) from None
            raise EmbeddingError(f"embedding request to {self.url} failed: {exc.reason}") from None
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"embedding request to {self.url} failed: {exc}") from None
        try:
            rows = sorted(payload["data"], key=lambda d: d.get("index", 0))
            matrix = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingError(
                f"{self.url} returned a malformed answer ({type(exc).__name__})"
            ) from None
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or not matrix.shape[1]:
            raise EmbeddingError(
                f"{self.url} returned {matrix.shape[0]} vectors for {len(texts)} texts"
            )
        if not np.isfinite(matrix).all():
            raise EmbeddingError(f"{self.url} returned non-finite values")
        return _normalize(matrix)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: following one would send the API key to another address."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


# -- choosing one -------------------------------------------------------------------------------


#: The names of the bundled static model in ``REMEM_EMBEDDINGS`` (case and spaces aside).
STATIC_CHOICES = ("static", "local", "on", "1", "true", "yes")


def build_embedder(
    choice: str = "static",
    *,
    url: str = "",
    model: str = "",
    key_env: str | None = "OPENAI_API_KEY",
) -> Embedder | None:
    """The embedder these explicit settings name, or ``None`` (recall runs lexically; the
    reason is logged once). Reads no environment variable (but the API key's, by name,
    at each request of an HTTP embedder).

    ``choice``: ``static`` (the bundled model), ``http`` (an OpenAI-compatible endpoint
    at ``url`` serving ``model``, its key in the environment variable named ``key_env``)
    or ``off``; case and surrounding spaces are ignored, and the module docstring lists
    the synonyms.
    """
    choice = choice.strip().lower() or "static"
    if choice in ("off", "none", "0", "false", "no"):
        return None
    if not numpy_available():
        _unavailable("numpy is not installed (pip install 'remem[embeddings]')")
        return None
    if choice == "http":
        if not url or not model:
            _unavailable("REMEM_EMBEDDINGS=http needs REMEM_EMBEDDINGS_URL and _MODEL")
            return None
        try:
            return HttpEmbedder(url, model, key_env=key_env)
        except ValueError as exc:
            _unavailable(str(exc))
            return None
    if choice not in STATIC_CHOICES:
        _unavailable(f"unknown REMEM_EMBEDDINGS={choice!r} (use static, http or off)")
        return None
    try:
        return load_static()
    except EmbeddingError as exc:
        _unavailable(str(exc))
        return None


def embedder_from_env(environ: Mapping[str, str] | None = None) -> Embedder | None:
    """The embedder the ``REMEM_EMBEDDINGS*`` variables of ``environ`` (default: this
    process's environment) name, through :func:`build_embedder`: the command line's
    default (module docstring)."""
    env = os.environ if environ is None else environ
    return build_embedder(
        env.get("REMEM_EMBEDDINGS", "static"),
        url=env.get("REMEM_EMBEDDINGS_URL", ""),
        model=env.get("REMEM_EMBEDDINGS_MODEL", ""),
        key_env=env.get("REMEM_EMBEDDINGS_KEY_ENV", "OPENAI_API_KEY"),
    )


def embedder_setting_from_env(environ: Mapping[str, str] | None = None) -> Embedder | bool | None:
    """What the command line passes as ``Memory.open(..., embedder=...)``: ``True`` when the
    environment names the bundled model (the library's default, loaded only once an agent
    needs it: a command that reads no notes does not pay the ~0.7 s load), otherwise
    :func:`embedder_from_env`."""
    env = os.environ if environ is None else environ
    if (env.get("REMEM_EMBEDDINGS", "static").strip().lower() or "static") in STATIC_CHOICES:
        return True
    return embedder_from_env(env)


def default_embedder() -> Embedder | None:
    """The embedder an agent gets when none was given: the bundled static model (``None``
    without the ``embeddings`` extra). Reads no environment variable: the command line
    passes :func:`embedder_from_env` instead."""
    return build_embedder("static")


_said: set[str] = set()


def _unavailable(reason: str) -> None:
    if reason not in _said:
        _said.add(reason)
        log.warning("remem recall runs lexically (no embeddings): %s", reason)


def is_unit(matrix: Vectors) -> bool:
    """True when every non-zero row of ``matrix`` has norm 1 (within float32 rounding)."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1)
    return bool(all(n == 0 or math.isclose(n, 1.0, abs_tol=1e-4) for n in norms.tolist()))


__all__ = [
    "Embedder",
    "EmbeddingError",
    "HttpEmbedder",
    "StaticEmbedder",
    "build_embedder",
    "default_embedder",
    "embedder_from_env",
    "is_unit",
    "load_static",
    "numpy_available",
]

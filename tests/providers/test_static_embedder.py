"""The bundled static model (wordllama) behind the ``Embedder`` protocol."""

from __future__ import annotations

import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("wordllama")

from remem.providers.embed import Embedder, is_unit, load_static  # noqa: E402

from .fakes import HashEmbedder  # noqa: E402


def test_shape_norm_and_determinism() -> None:
    emb = load_static()
    assert isinstance(emb, Embedder)
    assert emb.dim == 256 and "wordllama" in emb.name
    texts = ["Caroline went to a support group.", "When did Melanie paint a sunrise?", ""]
    a = emb.embed(texts)
    assert a.shape == (3, 256) and a.dtype == np.float32
    assert is_unit(a)
    assert not a[2].any()  # nothing to embed: a zero row
    # The same text gives the same vector whatever batch it is in.
    np.testing.assert_array_equal(a[1], emb.embed([texts[1]])[0])
    np.testing.assert_array_equal(a, emb.embed(texts))


def test_similar_texts_are_closer() -> None:
    emb = load_static()
    q, near, far = emb.embed(["adopting a child", "adoption agencies for kids", "car engines"])
    assert q @ near > q @ far


def test_matches_the_library_embedding() -> None:
    emb = load_static()
    text = "Jon lost his job as a banker and opened a dance studio."
    ours = emb.embed([text])[0]
    theirs = emb._model.embed([text], norm=True)[0]  # type: ignore[attr-defined]
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_loading_leaves_the_host_logging_alone() -> None:
    code = (
        "import logging; from remem.providers.embed import load_static; "
        "load_static(); root = logging.getLogger(); "
        "print(len(root.handlers), root.level)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", str(30)]


def test_fake_embedder_satisfies_the_protocol() -> None:
    assert isinstance(HashEmbedder(), Embedder)


def test_token_ids_match_the_tokenizer_on_any_text() -> None:
    """Ids are assembled from cached words where the tokenizer allows it (single spaces);
    whatever the text, they must be exactly the tokenizer's, alone or in a batch."""
    import random

    emb = load_static().with_word_memo({})  # as an agent's index uses it
    tok = emb._tokenizer  # type: ignore[attr-defined]
    assert emb._words is not None  # type: ignore[attr-defined]  # the word path is in use
    rng = random.Random(11)
    pieces = [
        "the",
        "a",
        "Caroline",
        "went",
        "support",
        "group.",
        "🎉",
        "café",
        "naïve",
        "—",
        "“quoted”",
        "‘single’",
        "(paren)",
        'quo"te',
        "new\nline",
        "tab\there",
        "日本語",
        "İstanbul",
        "ß",
        "ﬁ",
        "Ⅻ",
        "\u200bzw",
        "\u00a0nbsp",
        "https://example.org/a?b=c#d",
        "v1.2.3",
        "0xDEADBEEF",
        "3.14159",
        "snake_case",
        "kebab-case",
        "ALLCAPS",
        "x",
        "sk-proj?",
        "a▁b",
        "",
        " ",
    ]
    texts = [
        "",
        " ",
        "  double  spaces ",
        " leading",
        "trailing ",
        "a  b",
        "Caroline went to a support group.",
    ]
    for _ in range(2000):
        texts.append(" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))))
    plain = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    assert emb._token_ids(texts) == plain  # type: ignore[attr-defined]
    assert [emb._token_ids([t])[0] for t in texts[:300]] == plain[:300]  # type: ignore[attr-defined]
    batch = tok.encode_batch_fast(texts[:50], add_special_tokens=False)
    fast = [e.ids[: sum(e.attention_mask)] for e in batch]
    assert emb._encode(texts[:50]) == fast == plain[:50]  # type: ignore[attr-defined]


def test_word_ids_survive_the_cache_starting_over_midway(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another thread may empty the word cache between lookup and assembly."""
    emb = load_static().with_word_memo({})
    words = emb._words  # type: ignore[attr-defined]
    assert words is not None
    tok = emb._tokenizer  # type: ignore[attr-defined]
    emb._token_ids(["alpha"])  # type: ignore[attr-defined]  # "alpha" is cached now
    real_encode = emb._encode  # type: ignore[attr-defined]

    def encode_then_clear(texts: list[str]) -> list[list[int]]:
        out: list[list[int]] = real_encode(texts)
        words.clear()
        return out

    monkeypatch.setattr(emb, "_encode", encode_then_clear)
    got = emb._token_ids(["alpha beta gamma"])  # type: ignore[attr-defined]
    assert got == [tok.encode("alpha beta gamma", add_special_tokens=False).ids]

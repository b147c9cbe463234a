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


def test_the_fast_encoder_gives_the_plain_encoders_ids() -> None:
    emb = load_static()
    tok = emb._tokenizer  # type: ignore[attr-defined]
    texts = [
        "Caroline went to a support group.",
        "  double  spaces and a trailing one ",
        "émoji 🎉, tabs\tand\nnewlines",
        "日本語のテキスト",
        "",
        "sk-proj? no: v1.2.3 at https://example.org/a?b=c#d",
    ]
    ours = emb._token_ids(texts)  # type: ignore[attr-defined]
    plain = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    assert ours == plain
    assert [emb._token_ids([t])[0] for t in texts] == plain  # type: ignore[attr-defined]

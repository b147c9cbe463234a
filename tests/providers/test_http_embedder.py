"""``HttpEmbedder`` against a real ``/v1/embeddings`` server process on 127.0.0.1.

The server (``embed_server.py``) is started per module on a port it picks at
runtime. Checked: vectors come back ordered by ``index`` and L2-normalized;
the key is sent from the named environment variable and never kept on the
object, logged or put in an error; an error status, a timeout and a
malformed answer raise ``EmbeddingError``.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from remem.providers.embed import EmbeddingError, HttpEmbedder, is_unit  # noqa: E402

SERVER = Path(__file__).with_name("embed_server.py")
KEY = "test-key"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    seen = tmp_path_factory.mktemp("auth") / "seen.txt"
    env = {"PATH": "/usr/bin:/bin", "REQUIRE_KEY": "1", "SEEN_AUTH": str(seen)}
    proc = subprocess.Popen(
        [sys.executable, str(SERVER)], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEM_TEST_EMBED_KEY", KEY)


def _server_vector(text: str) -> list[float]:
    sys.path.insert(0, str(SERVER.parent))
    try:
        from embed_server import vector  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    out: list[float] = vector(text)
    return out


def test_embeds_in_order_and_normalizes(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    emb = HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY", timeout=5)
    texts = ["alpha", "beta", "gamma"]
    vectors = emb.embed(texts)
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    assert is_unit(vectors)
    for text, got in zip(texts, vectors, strict=True):
        want = np.asarray(_server_vector(text), dtype=np.float32)
        np.testing.assert_allclose(got, want / np.linalg.norm(want), rtol=1e-6)
    assert emb.dim == 8
    assert emb.embed([]).shape == (0, 8)


def test_batches_large_inputs(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    emb = HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY", batch_size=4)
    texts = [f"text {i}" for i in range(10)]
    np.testing.assert_allclose(emb.embed(texts)[7], emb.embed(["text 7"])[0], rtol=1e-6)


def test_dimension_is_probed_when_not_given(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    assert HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY").dim == 8


def test_key_is_sent_but_never_kept_or_shown(
    server: tuple[str, Path], keyed: None, caplog: pytest.LogCaptureFixture
) -> None:
    url, seen = server
    caplog.set_level(logging.DEBUG)
    emb = HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY")
    emb.embed(["hello"])
    assert f"Bearer {KEY}" in seen.read_text().splitlines()
    assert KEY not in repr(emb)
    assert KEY not in repr(vars(emb))
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["__error__"])
    assert KEY not in str(info.value)
    assert KEY not in caplog.text


def test_wrong_or_missing_key_is_an_error_status(
    server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = server
    monkeypatch.setenv("REMEM_TEST_EMBED_KEY", "wrong-key")
    with pytest.raises(EmbeddingError, match="HTTP 401") as info:
        HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY").embed(["x"])
    assert "wrong-key" not in str(info.value)
    monkeypatch.delenv("REMEM_TEST_EMBED_KEY")
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY").embed(["x"])


def test_error_status_raises(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    emb = HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY")
    with pytest.raises(EmbeddingError, match="HTTP 500"):
        emb.embed(["fine", "__error__"])
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        HttpEmbedder(url + "/nowhere", "tiny", key_env="REMEM_TEST_EMBED_KEY").embed(["x"])


def test_redirects_are_not_followed(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    moved = url.replace("/v1", "/redirect/v1")
    with pytest.raises(EmbeddingError, match="HTTP 302"):
        HttpEmbedder(moved, "tiny", key_env="REMEM_TEST_EMBED_KEY").embed(["x"])


def test_timeout_raises(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    emb = HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY", timeout=0.5)
    with pytest.raises(EmbeddingError, match="timed out"):
        emb.embed(["__slow__"])


def test_malformed_answer_raises(server: tuple[str, Path], keyed: None) -> None:
    url, _ = server
    with pytest.raises(EmbeddingError, match="malformed"):
        HttpEmbedder(url, "tiny", key_env="REMEM_TEST_EMBED_KEY").embed(["__malformed__"])


def test_unreachable_server_raises() -> None:
    # A port nobody listens on (bound then closed by the OS for us).
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbeddingError, match="failed"):
        HttpEmbedder(f"http://127.0.0.1:{port}/v1", "tiny", key_env=None, timeout=2).embed(["x"])


def test_rejects_urls_with_credentials_or_other_schemes() -> None:
    with pytest.raises(ValueError, match="credentials"):
        HttpEmbedder("http://user:secret@127.0.0.1:1/v1", "m")
    with pytest.raises(ValueError, match="http"):
        HttpEmbedder("file:///etc/passwd", "m")

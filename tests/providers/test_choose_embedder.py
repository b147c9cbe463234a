"""Choosing an embedder: from explicit settings (``build_embedder``, no environment) or
from the ``REMEM_EMBEDDINGS*`` variables (``embedder_from_env``, the CLI's default)."""

from __future__ import annotations

import logging

import pytest

from remem.providers.embed import HttpEmbedder, build_embedder, embedder_from_env

pytest.importorskip("numpy")

URL = "http://127.0.0.1:9/v1"


def test_explicit_settings_ignore_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEM_EMBEDDINGS", "off")
    monkeypatch.setenv("REMEM_EMBEDDINGS_MODEL", "from-the-environment")
    chosen = build_embedder("http", url=URL, model="given", key_env="MY_KEY")
    assert isinstance(chosen, HttpEmbedder)
    assert (chosen.url, chosen.model, chosen.key_env) == (URL + "/embeddings", "given", "MY_KEY")
    monkeypatch.setenv("REMEM_EMBEDDINGS", "http")
    monkeypatch.setenv("REMEM_EMBEDDINGS_URL", URL)
    assert build_embedder(" OFF ") is None


def test_the_environment_is_read_from_the_mapping_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMEM_EMBEDDINGS", "off")
    env = {"REMEM_EMBEDDINGS": "http", "REMEM_EMBEDDINGS_URL": URL, "REMEM_EMBEDDINGS_MODEL": "m"}
    chosen = embedder_from_env(env)
    assert isinstance(chosen, HttpEmbedder)
    assert (chosen.model, chosen.key_env) == ("m", "OPENAI_API_KEY")
    assert embedder_from_env() is None  # this process's environment: off
    monkeypatch.setenv("REMEM_EMBEDDINGS", "http")
    monkeypatch.setenv("REMEM_EMBEDDINGS_URL", URL)
    monkeypatch.setenv("REMEM_EMBEDDINGS_MODEL", "m3")
    monkeypatch.setenv("REMEM_EMBEDDINGS_KEY_ENV", "OTHER_KEY")
    chosen = embedder_from_env()
    assert isinstance(chosen, HttpEmbedder)
    assert (chosen.model, chosen.key_env) == ("m3", "OTHER_KEY")


def test_unusable_settings_mean_lexical_recall_with_a_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="remem.embeddings"):
        assert build_embedder("bogus-choice") is None
        assert build_embedder("http", url="", model="m") is None
        assert build_embedder("http", url="ftp://host/v1", model="m") is None
    assert "unknown REMEM_EMBEDDINGS='bogus-choice'" in caplog.text
    assert "must be an http(s) URL" in caplog.text

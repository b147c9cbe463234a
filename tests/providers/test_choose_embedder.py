"""Choosing an embedder: from explicit settings (``build_embedder``, no environment) or
from the ``REMEM_EMBEDDINGS*`` variables (``embedder_from_env``, the CLI's default)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from remem import InvalidInput, Memory, RunContext
from remem.cli import main
from remem.providers.embed import (
    HttpEmbedder,
    build_embedder,
    embedder_from_env,
    embedder_setting_from_env,
)

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


def test_the_library_reads_no_environment_for_its_embedder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``Memory.open`` takes the embedder as an argument; REMEM_EMBEDDINGS is only the
    command line's default (here it would make recall lexical)."""
    monkeypatch.setenv("REMEM_EMBEDDINGS", "off")
    ctx = RunContext.dm("yuko", "discord:dm-1", "discord:1")
    with Memory.open(tmp_path / "default") as mem:
        mem.remember(ctx, "Prefers green tea.")
        assert mem.recall(ctx, "tea").retrieval != "lexical"
    with Memory.open(tmp_path / "given", embedder=None) as mem:
        mem.remember(ctx, "Prefers green tea.")
        assert mem.recall(ctx, "tea").retrieval == "lexical"
    with pytest.raises(InvalidInput, match="embedder"):
        Memory.open(tmp_path / "bad", embedder="static")  # type: ignore[arg-type]


def test_the_command_line_takes_its_embedder_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REMEM_EMBEDDINGS", "off")
    data = str(tmp_path / "data")
    runner = CliRunner()
    runner.invoke(
        main,
        [
            "--data",
            data,
            "remember",
            "--agent",
            "yuko",
            "--scope",
            "agent",
            "--kind",
            "fact",
            "The office opens at nine.",
        ],
    )
    out = runner.invoke(main, ["--data", data, "recall", "--agent", "yuko", "--json", "office"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["retrieval"] == "lexical"


def test_the_command_line_leaves_the_bundled_model_to_load_when_needed() -> None:
    """The static choice is the library's default (``True``): loaded once an agent needs it,
    not when a command that reads no notes opens the store."""
    assert embedder_setting_from_env({}) is True
    assert embedder_setting_from_env({"REMEM_EMBEDDINGS": " Static "}) is True
    assert embedder_setting_from_env({"REMEM_EMBEDDINGS": "off"}) is None
    env = {"REMEM_EMBEDDINGS": "http", "REMEM_EMBEDDINGS_URL": URL, "REMEM_EMBEDDINGS_MODEL": "m"}
    assert isinstance(embedder_setting_from_env(env), HttpEmbedder)

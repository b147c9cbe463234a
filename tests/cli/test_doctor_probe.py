"""``remem doctor`` leaves nothing behind (issue 20, item 9), through the CLI and the files:
its round trip runs as a fresh ``#doctor-<random>`` agent removed completely, even when
a step fails; probe agents of earlier doctors are reported and their removal offered."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from remem import StoreError
from remem.cli import main
from remem.service import Memory

AGENT = "yuko"


def cli(data: Path, *args: str, input: str | None = None) -> Result:
    result = CliRunner().invoke(
        main, ["--data", str(data), *args], input=input, env={"REMEM_EMBEDDINGS": "off"}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def everything(data: Path) -> set[str]:
    return {str(p.relative_to(data)) for p in data.rglob("*")}


def test_doctor_removes_its_probe_completely(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert cli(data, "remember", "--agent", AGENT, "Reports use warehouse A.").exit_code == 0
    before = everything(data)
    for _ in range(2):
        result = cli(data, "doctor")
        assert result.exit_code == 0, result.output
        assert "ok  forget+compact" in result.output and "healthy" in result.output
    assert os.listdir(data / "agents") == [AGENT]
    assert everything(data) == before  # no probe directory, no trash, nothing else


def test_probe_is_removed_when_the_round_trip_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    seen: list[str] = []

    def broken_compact(self: Memory, ctx: object, **kw: object) -> None:
        seen.append(os.listdir(data / "agents")[0])
        raise StoreError("disk on fire (injected)")

    monkeypatch.setattr(Memory, "compact", broken_compact)
    result = cli(data, "doctor")
    assert result.exit_code == 1 and "FAIL error" in result.output
    assert seen and seen[0].startswith("#doctor-") and len(seen[0]) == len("#doctor-") + 16
    assert os.listdir(data / "agents") == []
    assert not (data / ".trash").exists()


def test_leftover_probes_are_reported_and_removed_when_asked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for agent in ("remem-doctor", AGENT):
        assert cli(data, "remember", "--agent", agent, "A probe note.").exit_code == 0
    killed = data / "agents" / "#doctor-0123456789abcdef"  # a doctor killed midway
    killed.mkdir(mode=0o700)
    (killed / "memory.jsonl").write_bytes(b"")
    os.chmod(killed / "memory.jsonl", 0o600)

    kept = cli(data, "doctor", input="n\n")
    assert kept.exit_code == 0, kept.output
    assert "warn leftover probe  agent 'remem-doctor' was left by an earlier doctor" in kept.output
    assert "'#doctor-0123456789abcdef' was left" in kept.output
    assert "Remove the probe agents" in kept.output and "--yes" in kept.output
    assert sorted(os.listdir(data / "agents")) == sorted([killed.name, "remem-doctor", AGENT])

    removed = cli(data, "doctor", "--yes")
    assert removed.exit_code == 0, removed.output
    assert "removed agent remem-doctor" in removed.output
    assert os.listdir(data / "agents") == [AGENT]
    again = cli(data, "doctor")
    assert "leftover probe" not in again.output and "healthy" in again.output

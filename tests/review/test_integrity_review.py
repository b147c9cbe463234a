"""Review of issue 11, class "integrity": ``remem doctor`` does not call a store healthy
when a file beside the log makes every recall fail or hides the agent's rules."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from remem import Memory, RunContext, StoreError
from remem.cli import main

AGENT = "yuko"


def _cli(data: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--data", str(data), *args])


def _store(data: Path) -> Path:
    with Memory.open(data) as mem:
        owner = RunContext.owner(AGENT)
        mem.remember(owner, "Reports use CSV.", scope="agent")
        mem.set_rule(owner, "style", "Answer briefly.")
        mem.recall(owner, "reports")
    return data / "agents" / AGENT


def _dir_over(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _file_over(path: Path) -> None:
    shutil.rmtree(path)
    path.write_text("not a folder\n")


DAMAGE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "traces-dir": (lambda f: _dir_over(f / "traces.jsonl"), "FAIL yuko: traces", "fails"),
    "rule-dir": (lambda f: _dir_over(f / "rules" / "style.md"), "FAIL yuko: rules", "fails"),
    "rules-file": (lambda f: _file_over(f / "rules"), "FAIL yuko: rules", "no rules"),
}


@pytest.mark.parametrize("case", DAMAGE.keys())
def test_doctor_fails_when_a_file_beside_the_log_breaks_recall(tmp_path: Path, case: str) -> None:
    data = tmp_path / "data"
    damage, line, effect = DAMAGE[case]
    damage(_store(data))
    with Memory.open(data) as mem:  # what the damage does to the store
        owner = RunContext.owner(AGENT)
        if effect == "fails":
            with pytest.raises(StoreError):
                mem.recall(owner, "reports")
        else:
            assert not mem.recall(owner, "reports").rules  # the rule is silently gone
    doctor = _cli(data, "doctor")
    assert doctor.exit_code == 1, doctor.output
    assert line in doctor.output
    assert "healthy" not in doctor.output


def test_doctor_warns_about_a_vector_cache_that_is_not_a_file(tmp_path: Path) -> None:
    folder = _store(tmp_path / "data")
    cache = folder / "vectors.cache"
    if not cache.exists():
        pytest.skip("no embedder here: no vector cache is written")
    _dir_over(cache)
    doctor = _cli(tmp_path / "data", "doctor")
    assert doctor.exit_code == 0, doctor.output
    assert "warn yuko: vector cache" in doctor.output

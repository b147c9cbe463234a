"""The ``remem`` command line.

The real console script (``<venv>/bin/remem``) runs in subprocesses for what
only a real process shows: the entry point, JSON output, exit codes, one-line
errors on stderr without tracebacks, ``$REMEM_DATA``, ``doctor`` and ``demo``.
Starting it costs most of a second, so those invocations run as one concurrent
batch (the ``script`` fixture). The long command-by-command scenarios drive the
same click application in-process (``cli``), which is fast; any exception other
than a clean exit fails the test with its traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from remem import Denied, InvalidInput, Memory, NotFound, Rejected, RunContext, StoreError
from remem.cli import EXIT_CODES, main

REMEM = Path(sys.executable).parent / "remem"
AGENT = "yuko"
ALICE = "discord:100"
DM_ALICE = "discord:dm-alice"
GENERAL = "discord:general"
UNKNOWN_ID = "note_01J00000000000000000000000"


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    code: int
    out: str
    err: str

    def ok(self) -> Result:
        assert self.code == 0, f"remem {' '.join(self.args)} exited {self.code}: {self.err}"
        assert "Traceback" not in self.err
        return self

    def json(self) -> Any:
        return json.loads(self.ok().out)


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REMEM_DATA"}
    env.update(extra or {})
    return env


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    proc = subprocess.run(
        [str(REMEM), *args],
        capture_output=True,
        text=True,
        env=_env(env),
        timeout=60,
        check=False,
    )
    return Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """Invoke the click application in-process (same commands as the console script)."""
    environ: dict[str, str | None] = {"REMEM_DATA": None, **(env or {})}
    result = CliRunner().invoke(main, list(args), env=environ)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(tuple(args), result.exit_code, result.stdout, result.stderr)


def cli_all(*calls: Sequence[str]) -> list[Result]:
    return [cli(*args) for args in calls]


def exit_code_for(error: type[Exception]) -> int:
    for cls, code in EXIT_CODES:
        if issubclass(error, cls):
            return code
    raise AssertionError(f"{error} is not in EXIT_CODES")


@pytest.fixture
def data(tmp_path: Path) -> str:
    return str(tmp_path / "data")


def one_line_error(result: Result, error: type[Exception]) -> None:
    """The contract for user mistakes: one line on stderr, the table's exit code."""
    assert result.code == exit_code_for(error), result
    assert "Traceback" not in result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("remem:"), result.err


# -- the real console script ------------------------------------------------------------


@dataclass(frozen=True)
class Script:
    """Results of every console-script invocation, run as one concurrent batch."""

    results: dict[str, Result]
    note_id: str
    root: Path

    def __getitem__(self, name: str) -> Result:
        return self.results[name]


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Script:
    root = tmp_path_factory.mktemp("script")
    data = str(root / "data")
    with Memory.open(data) as mem:
        note = mem.remember(RunContext.owner(AGENT), "Reports use warehouse A.", scope="agent")
    afile = root / "afile"
    afile.write_text("not a directory")
    d = ("--data", data)
    calls: dict[str, tuple[tuple[str, ...], dict[str, str] | None]] = {
        "ls_json": ((*d, "ls", "--json"), None),
        "show_json": ((*d, "show", note.id, "--json"), None),
        "recall_json": ((*d, "recall", "--agent", AGENT, "--json", "warehouse"), None),
        "not_found": ((*d, "show", UNKNOWN_ID), None),
        "store": (("--data", str(afile), "ls"), None),
        "missing_data": (("ls",), None),
        "env_remember": (
            ("remember", "--agent", AGENT, "--kind", "fact", "Waves."),
            {"REMEM_DATA": str(root / "from-env")},
        ),
        "doctor": (("--data", str(root / "doctor"), "doctor"), None),
        "demo": (("demo",), None),
        "help": (("--help",), None),
    }
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {name: pool.submit(run, *args, env=env) for name, (args, env) in calls.items()}
        results = {name: future.result() for name, future in futures.items()}
    return Script(results, note.id, root)


def test_console_script_is_installed() -> None:
    assert REMEM.is_file(), f"{REMEM} missing: is the package installed in the venv?"


def test_console_script_round_trip(script: Script) -> None:
    assert [n["id"] for n in script["ls_json"].json()] == [script.note_id]
    assert script["show_json"].json()["text"] == "Reports use warehouse A."
    body = script["recall_json"].json()
    assert set(body) >= {"run_id", "retrieval", "notes", "text", "rules"}
    assert [n["id"] for n in body["notes"]] == [script.note_id]
    assert "Reports use warehouse A." in body["text"]


def test_console_script_errors(script: Script) -> None:
    one_line_error(script["not_found"], NotFound)
    assert UNKNOWN_ID in script["not_found"].err
    one_line_error(script["store"], StoreError)


def test_data_directory_from_the_environment(script: Script) -> None:
    missing = script["missing_data"]
    one_line_error(missing, InvalidInput)
    assert "--data" in missing.err and "REMEM_DATA" in missing.err
    assert script["env_remember"].ok().out.startswith("remembered:")
    with Memory.open(script.root / "from-env") as mem:
        assert [n.text for n in mem.list(RunContext.owner(AGENT))] == ["Waves."]


def test_doctor(script: Script) -> None:
    lines = script["doctor"].ok().out.splitlines()
    checks = [line for line in lines if line.startswith("ok ")]
    assert len(checks) >= 3, lines
    assert not any(line.startswith("FAIL") for line in lines)
    assert any("recall" in line for line in checks)
    assert "healthy" in lines[-1]


def test_demo(script: Script) -> None:
    assert script["demo"].ok().out.strip()


def test_help_through_the_console_script(script: Script) -> None:
    assert "Example" in script["help"].ok().out


# -- every command, in-process ------------------------------------------------------------


def test_note_lifecycle(data: str) -> None:
    d = ("--data", data)
    first = cli(*d, "remember", "--agent", AGENT, "--kind", "fact", "Reports use warehouse A.")
    assert first.ok().out.startswith("remembered: note_")
    with Memory.open(data) as mem:
        owner = RunContext.owner(AGENT)
        agent_note = mem.list(owner)[0]
        alice = RunContext.dm(AGENT, DM_ALICE, ALICE)
        notes = [mem.remember(alice, f"Prefers option {c}.") for c in "BCDE"]
    to_correct, to_pin, to_disable, to_forget = (n.id for n in notes)

    ls, ls_json, user_json, show, corrected, pinned, disabled, forgotten = cli_all(
        (*d, "ls"),
        (*d, "ls", "--json"),
        (*d, "ls", "--agent", AGENT, "--scope", "user", "--scope-id", ALICE, "--json"),
        (*d, "show", agent_note.id, "--json"),
        (*d, "correct", to_correct, "Prefers option Z."),
        (*d, "pin", to_pin),
        (*d, "disable", to_disable),
        (*d, "rm", to_forget),
    )
    assert agent_note.id in ls.ok().out and "Reports use warehouse A." in ls.out
    listed = ls_json.json()
    assert isinstance(listed, list) and len(listed) == 5
    assert {n["id"] for n in listed} == {agent_note.id, *(n.id for n in notes)}
    assert all({"id", "text", "scope", "status", "version"} <= set(n) for n in listed)
    assert [n["scope"] for n in user_json.json()] == ["user"] * 4
    shown = show.json()
    assert (shown["id"], shown["text"], shown["scope"]) == (
        agent_note.id,
        "Reports use warehouse A.",
        "agent",
    )
    assert corrected.ok().out.startswith("corrected:") and "Prefers option Z." in corrected.out
    assert "pinned" in pinned.ok().out
    assert "[disabled]" in disabled.ok().out
    assert "[forgotten]" in forgotten.ok().out

    history, history_json, unpinned, enabled, compacted, ls_all = cli_all(
        (*d, "history", to_correct),
        (*d, "history", to_correct, "--json"),
        (*d, "unpin", to_pin),
        (*d, "enable", to_disable),
        (*d, "compact", "--agent", AGENT, "--json"),
        (*d, "ls", "--all", "--json"),
    )
    assert "Prefers option B." in history.ok().out  # the old text survives a correction
    assert "Prefers option Z." in history.out
    assert [e["op"] for e in history_json.json()] == ["remember", "correct"]
    assert "pinned" not in unpinned.ok().out
    assert "[disabled]" not in enabled.ok().out
    assert compacted.json()[0]["notes_erased"] == [to_forget]
    assert to_forget not in {n["id"] for n in ls_all.json()}
    assert "Prefers option E." not in Path(data, "agents", AGENT, "memory.jsonl").read_text()

    recall = cli(*d, "recall", "--agent", AGENT, "--dm", DM_ALICE, "--user", ALICE, "--json")
    body = recall.json()
    assert set(body) >= {"run_id", "retrieval", "notes", "text", "rules"}
    assert body["run_id"].startswith("run_")
    recalled = {n["id"] for n in body["notes"]}
    assert recalled == {agent_note.id, to_correct, to_pin, to_disable}
    assert "Prefers option Z." in body["text"]
    explain, explain_text, preview = cli_all(
        (*d, "explain", body["run_id"], "--json"),
        (*d, "explain", body["run_id"]),
        (*d, "recall", "--agent", AGENT, "--dm", DM_ALICE, "--user", ALICE, "option"),
    )
    trace = explain.json()
    assert trace["run_id"] == body["run_id"]
    assert {note_id for note_id, _score in trace["selected"]} == recalled
    assert body["run_id"] in explain_text.ok().out
    assert "--- memory block ---" in preview.ok().out
    assert "Prefers option Z." in preview.out
    one_line_error(cli(*d, "explain", "run_01J00000000000000000000000"), NotFound)


def test_review_rules_and_channels(data: str) -> None:
    d = ("--data", data)
    with Memory.open(data) as mem:
        alice = RunContext.dm(AGENT, DM_ALICE, ALICE)
        keep = mem.remember(alice, "Works in the Lisbon office.", basis="inferred")
        drop = mem.remember(alice, "Works in the Oslo office.", basis="inferred")
    review, review_json = cli_all((*d, "review", "--agent", AGENT), (*d, "review", "--json"))
    assert keep.id in review.ok().out and drop.id in review.out
    assert {n["id"] for n in review_json.json()} == {keep.id, drop.id}

    approved, rejected, rule_set, channel_set, steward_set = cli_all(
        (*d, "approve", keep.id),
        (*d, "reject", drop.id),
        (*d, "rules", "set", AGENT, "style", "Answer in British English."),
        (*d, "channel", "set", AGENT, GENERAL, "recall-max-notes", "5"),
        (*d, "channel", "set", AGENT, GENERAL, "stewards", "discord:300,discord:301"),
    )
    assert approved.ok().out.startswith("approved:")
    assert rejected.ok().out.startswith("rejected:")
    assert "saved" in rule_set.ok().out
    channel_set.ok()
    steward_set.ok()

    after_review, rules_ls, rules_show, channel_show, channel_json, ls_all = cli_all(
        (*d, "review", "--agent", AGENT),
        (*d, "rules", "ls", AGENT),
        (*d, "rules", "show", AGENT, "style"),
        (*d, "channel", "show", AGENT, GENERAL),
        (*d, "channel", "show", AGENT, GENERAL, "--json"),
        (*d, "ls", "--all", "--json"),
    )
    assert "nothing awaits review" in after_review.ok().out
    assert "style" in rules_ls.ok().out
    assert rules_show.ok().out.strip() == "Answer in British English."
    assert "recall_max_notes" in channel_show.ok().out and "(channel)" in channel_show.out
    policy = channel_json.json()
    assert policy["values"]["recall_max_notes"] == {"value": 5, "layer": "channel"}
    assert policy["stewards"] == ["discord:300", "discord:301"]
    statuses = {n["id"]: n["status"] for n in ls_all.json()}
    assert statuses == {keep.id: "active", drop.id: "rejected"}
    one_line_error(cli(*d, "rules", "show", AGENT, "nope"), NotFound)
    one_line_error(cli(*d, "approve", keep.id), InvalidInput)  # not awaiting review any more

    # A looser channel value is clamped, and the CLI says so.
    Path(data, "remem.toml").write_text("[memory]\nrecall_max_notes = 3\n", encoding="utf-8")
    clamped = cli(*d, "channel", "set", AGENT, GENERAL, "recall-max-notes", "10")
    assert "note: recall_max_notes=10 from channel is looser than 3" in clamped.ok().out
    one_line_error(cli(*d, "channel", "set", AGENT, GENERAL, "memory", "maybe"), InvalidInput)

    recall = cli(*d, "recall", "--agent", AGENT, "--channel", GENERAL, "--json").json()
    assert "British English" in recall["rules"]
    removed = cli(*d, "rules", "set", AGENT, "style", "")
    assert "removed" in removed.ok().out
    assert "no rules" in cli(*d, "rules", "ls", AGENT).ok().out


def test_user_mistakes_are_one_line_errors(data: str) -> None:
    d = ("--data", data)
    with Memory.open(data) as mem:
        mem.remember(RunContext.owner(AGENT), "Signs with a wave.", scope="agent")
    one_line_error(cli(*d, "show", UNKNOWN_ID), NotFound)
    one_line_error(cli(*d, "rm", "bogus"), InvalidInput)
    one_line_error(cli(*d, "remember", "--agent", AGENT, "--scope", "user", "Tea."), Denied)
    one_line_error(cli(*d, "remember", "--agent", AGENT, "--scope", "agent", " "), Rejected)
    one_line_error(cli(*d, "recall", "--agent", AGENT, "--dm", DM_ALICE), InvalidInput)
    one_line_error(cli(*d, "ls", "--scope-id", ALICE), InvalidInput)
    usage = cli(*d, "ls", "--scope", "team")
    assert usage.code == 2 and "Traceback" not in usage.err  # click's own usage error
    assert "agent" in usage.err and "channel" in usage.err


def test_agents_ls_and_trash(data: str) -> None:
    d = ("--data", data)
    assert "no agents" in cli(*d, "agents", "ls").ok().out
    with Memory.open(data) as mem:
        for agent in ("yuko", "kiko"):
            mem.remember(RunContext.owner(agent), f"{agent} signs with a wave.", scope="agent")
    assert cli(*d, "agents", "ls").ok().out.split() == ["kiko", "yuko"]
    trashed = cli(*d, "agents", "trash", "kiko")
    assert "moved kiko to" in trashed.ok().out
    moved = list((Path(data) / ".trash").iterdir())
    assert len(moved) == 1 and moved[0].name.startswith("kiko-")
    assert cli(*d, "agents", "ls", "--json").json() == ["yuko"]
    one_line_error(cli(*d, "agents", "trash", "nobody"), NotFound)


# -- --help, in-process --------------------------------------------------------------------


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        yield path
        if isinstance(command, click.Group):
            yield from _command_paths(command, path)


COMMANDS = [(), *_command_paths(main)]
EXPECTED = {
    ("ls",),
    ("show",),
    ("history",),
    ("rm",),
    ("correct",),
    ("pin",),
    ("unpin",),
    ("disable",),
    ("enable",),
    ("remember",),
    ("recall",),
    ("explain",),
    ("review",),
    ("approve",),
    ("reject",),
    ("compact",),
    ("doctor",),
    ("demo",),
    ("rules",),
    ("rules", "set"),
    ("rules", "ls"),
    ("rules", "show"),
    ("channel",),
    ("channel", "set"),
    ("channel", "show"),
    ("agents",),
    ("agents", "ls"),
    ("agents", "trash"),
}


def test_every_documented_command_exists() -> None:
    assert set(COMMANDS) >= EXPECTED


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "remem")
def test_help_has_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"], env={"REMEM_DATA": ""})
    assert result.exit_code == 0, result.output
    assert "Example" in result.output

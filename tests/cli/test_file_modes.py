"""Data at rest belongs to the service's user only (issue 20, item 8), through the CLI and
the files on disk: every file 0600 and every directory 0700 from the moment it exists,
whatever the umask; a root owner's files go to the data directory's owner; ``remem
doctor`` warns about the rest and ``remem repair --permissions`` fixes it."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from remem.cli import main
from remem.store import syscalls
from remem.store.open import open_backend
from remem.store.postgres.keyring import KeyFile

AGENT = "yuko"
NOBODY = 65534


def cli(data: Path, *args: str, input: str | None = None) -> Result:
    result = CliRunner().invoke(
        main, ["--data", str(data), *args], input=input, env={"REMEM_EMBEDDINGS": "off"}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def ok(data: Path, *args: str, input: str | None = None) -> str:
    result = cli(data, *args, input=input)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def workload(data: Path) -> None:
    """Every kind of file the JSONL store makes, through the CLI (and, for the caches,
    the secret and the PostgreSQL key file, the store's own calls)."""
    note = ok(data, "remember", "--agent", AGENT, "Reports use warehouse A.").split()[1]
    ok(data, "remember", "--agent", "gone", "A short-lived agent.")
    ok(data, "recall", "--agent", AGENT, "warehouse")
    ok(data, "correct", note, "Reports use warehouse B.")
    ok(data, "rm", note)
    ok(data, "compact", "--agent", AGENT)
    log = data / "agents" / AGENT / "memory.jsonl"
    with log.open("ab") as fh:
        fh.write(b'{"op":"remem')  # a torn tail: the next write cuts it and saves it aside
    ok(data, "remember", "--agent", AGENT, "After the crash.")
    with log.open("ab") as fh:
        fh.write(b"not an event\n")  # a damaged line: repair saves it aside
    ok(data, "repair", "--agent", AGENT, "--yes")
    ok(data, "rules", "set", AGENT, "style", "Answer briefly.")
    ok(data, "tokens", "create", "--name", "bot", "--agent", AGENT, "--channel", "*")
    ok(data, "agents", "trash", "gone")
    backend = open_backend(data)
    backend.cache(AGENT, "catalog").replace([b"{}"])
    backend.agent_secret(AGENT)
    backend.close()
    KeyFile(data / "keyring.json")  # REMEM_KEY_FILE of a PostgreSQL deployment


def modes(data: Path) -> dict[str, str]:
    """Every path under ``data`` (itself included) whose mode is not 0600/0700."""
    wrong = {}
    for path in [data, *data.rglob("*")]:
        st = path.lstat()
        want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if stat.S_IMODE(st.st_mode) != want:
            wrong[str(path.relative_to(data.parent))] = oct(stat.S_IMODE(st.st_mode))
    return wrong


@pytest.mark.parametrize("umask", [0o000, 0o022], indirect=True, ids=["000", "022"])
def test_every_path_is_private_from_birth(
    tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[tuple[str, str]] = []
    real_open, real_mkdir = syscalls.open_fd, syscalls.mkdir

    def open_fd(path: Any, flags: int, mode: int = 0o777) -> int:
        if flags & os.O_CREAT and (not flags & os.O_EXCL or mode != 0o600):
            created.append((str(path), f"open flags {flags:#x} mode {mode:04o}"))
        return real_open(path, flags, mode)

    def mkdir(path: Any, mode: int = 0o777) -> None:
        if mode != 0o700:
            created.append((str(path), f"mkdir mode {mode:04o}"))
        real_mkdir(path, mode)

    monkeypatch.setattr(syscalls, "open_fd", open_fd)
    monkeypatch.setattr(syscalls, "mkdir", mkdir)
    data = tmp_path / "data"
    workload(data)
    names = {p.name for p in data.rglob("*")}
    for expected in ("memory.jsonl", "traces.jsonl", "memory.jsonl.lock", "style.md", "bot.json"):
        assert expected in names
    assert any(".torn-" in n for n in names) and any(".damaged-" in n for n in names)
    assert {"catalog.cache", "secret.key", "keyring.json", ".trash", "rules"} <= names
    assert modes(data) == {}
    # No file or directory was ever made with a wider mode, even for a moment.
    assert created == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: chown to another user")
def test_root_leaves_files_the_service_user_owns(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    os.chown(data, NOBODY, NOBODY)
    workload(data)
    foreign = {
        str(p.relative_to(data)): p.lstat().st_uid
        for p in data.rglob("*")
        if p.lstat().st_uid != NOBODY and p.name != "keyring.json"
    }
    assert foreign == {}


def test_doctor_warns_and_repair_permissions_fixes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ok(data, "remember", "--agent", AGENT, "Reports use warehouse A.")
    ok(data, "remember", "--agent", "kai", "Deploys on Monday.")
    (data / "remem.toml").write_text("# the operator's policy\n")
    os.chmod(data / "remem.toml", 0o644)  # the operator's file: left alone
    for path in [data / "agents" / AGENT, data / "agents" / "kai", data / "agents"]:
        os.chmod(path, 0o755)  # as an older remem made them
    os.chmod(data / "agents" / "kai" / "memory.jsonl", 0o644)
    if os.geteuid() == 0:
        os.chown(data / "agents" / AGENT / "memory.jsonl", NOBODY, NOBODY)

    out = ok(data, "doctor")
    warned = [line for line in out.splitlines() if line.startswith("warn permissions")]
    assert any("agents/kai/memory.jsonl is readable" in line and "0644" in line for line in warned)
    assert any(f"agents/{AGENT} is readable" in line for line in warned)
    if os.geteuid() == 0:
        assert any("owned by nobody (uid 65534)" in line for line in warned)
    assert "repair --permissions" in warned[-1]
    assert not any("remem.toml" in line for line in warned)

    refused = cli(data, "repair", "--permissions", input="n\n")
    assert refused.exit_code == 1 and "Make these" in refused.output
    assert stat.S_IMODE((data / "agents").stat().st_mode) == 0o755  # nothing done unasked

    fixed = ok(data, "repair", "--permissions", "--yes")
    assert "fixed" in fixed
    assert modes(data) == {"data/remem.toml": "0o644"}
    assert {p.lstat().st_uid for p in data.rglob("*")} == {os.geteuid()}
    assert not [line for line in ok(data, "doctor").splitlines() if line.startswith("warn")]


def test_repair_says_what_to_repair(tmp_path: Path) -> None:
    result = cli(tmp_path, "repair")
    assert result.exit_code == 2 and "--permissions" in result.output
    help_text = ok(tmp_path, "repair", "--help")
    assert "Example" in help_text and "--permissions" in help_text


def test_tokens_json_is_private(tmp_path: Path) -> None:
    """The records that were already 0600 still are, made by the same helper."""
    data = tmp_path / "data"
    out = ok(data, "tokens", "create", "--name", "bot", "--owner", "--json")
    assert json.loads(out)["token"]
    assert modes(data) == {}

"""Names starting with ``#`` are the service's own (issue 20, item 11): one validator
refuses them in every envelope, on the command line and in every backend; an agent an
older remem stored under one is reported by doctor and renamed by ``agents rename``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from remem import InvalidInput, Memory, RunContext
from remem.app.envelope import envelope_from_json
from remem.cli import main
from remem.store.open import open_backend

RESERVED = ["#config", "#keyring", "#directory", "#doctor-0123456789abcdef", "#x"]


def cli(data: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, ["--data", str(data), *args], env={"REMEM_EMBEDDINGS": "off"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.mark.parametrize("name", RESERVED)
def test_no_envelope_may_name_a_reserved_agent(name: str) -> None:
    for build in (
        lambda: RunContext.owner(name),
        lambda: RunContext.dm(name, "discord:1", "discord:7"),
        lambda: RunContext.system(name, __import__("remem").Role.CRON),
    ):
        with pytest.raises(InvalidInput, match="reserved"):
            build()
    envelope = {**RunContext.owner("yuko").to_json(), "agent": name}
    with pytest.raises(InvalidInput, match="reserved"):
        envelope_from_json(envelope)


@pytest.mark.parametrize("name", ["#config", "#keyring", "#directory"])
def test_the_cli_refuses_a_reserved_agent(tmp_path: Path, name: str) -> None:
    data = tmp_path / "data"
    for args in (
        ("remember", "--agent", name, "A note."),
        ("ls", "--agent", name),
        ("rules", "set", name, "style", "Be brief."),
        ("agents", "trash", name),
    ):
        result = cli(data, *args)
        assert result.exit_code == 2, (args, result.output)
        assert "reserved" in result.output and "agents rename" in result.output
    assert not (data / "agents" / name).exists()


def test_every_jsonl_path_to_an_agent_checks_the_name(tmp_path: Path) -> None:
    backend = open_backend(tmp_path / "data")
    try:
        for call in (
            lambda: backend.event_log("#config"),
            lambda: backend.trace_log("#keyring"),
            lambda: backend.read_rules("#directory"),
            lambda: backend.write_rule("#config", "style", "x"),
            lambda: backend.agent_secret("#keyring"),
            lambda: backend.cache("#config", "catalog"),
            lambda: backend.trash_agent("#config"),
        ):
            with pytest.raises(InvalidInput, match="reserved"):
                call()
    finally:
        backend.close()
    assert not (tmp_path / "data" / "agents" / "#config").exists()


def test_a_minted_service_name_is_accepted_only_while_minted() -> None:
    from remem.core.names import check_agent, mint_service_agent, release_service_agent

    probe = mint_service_agent("doctor")
    assert check_agent(probe) == probe and RunContext.owner(probe).agent == probe
    release_service_agent(probe)
    with pytest.raises(InvalidInput, match="reserved"):
        RunContext.owner(probe)


def test_an_existing_reserved_directory_is_reported_refused_and_renamed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert cli(data, "remember", "--agent", "cfg", "Deploys happen on Monday.").exit_code == 0
    os.rename(data / "agents" / "cfg", data / "agents" / "#config")  # as an older remem let it

    doctor = cli(data, "doctor")
    assert doctor.exit_code == 0, doctor.output
    assert "warn reserved name   agent '#config'" in doctor.output
    assert "agents rename '#config' NEW-NAME" in doctor.output

    refused = cli(data, "ls", "--agent", "#config")
    assert refused.exit_code == 2 and "remem agents rename '#config'" in refused.output
    # Not listed as an agent of the owner's.
    assert cli(data, "agents", "ls").output.strip() == "no agents"

    assert cli(data, "agents", "rename", "#config", "#keyring").exit_code == 2
    renamed = cli(data, "agents", "rename", "#config", "config-bot")
    assert renamed.exit_code == 0, renamed.output
    with Memory.open(data) as mem:
        notes = mem.list(RunContext.owner("config-bot"))
        assert [n.text for n in notes] == ["Deploys happen on Monday."]
    assert "reserved name" not in cli(data, "doctor").output
    assert "rename" in cli(data, "agents", "rename", "--help").output

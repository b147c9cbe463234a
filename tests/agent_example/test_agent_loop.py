"""The example agent loop (examples/agent_loop.py) end to end, against a loopback HTTP
server that plays the model: tool specs offered, tool calls run through ``run_tool``,
memory compiled into the next turn, the chip shown when a turn wrote memory."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from agent_example.scripted_model import model_server, requests
from remem import InvalidInput, Memory, RunContext, Status

AGENT = "yuko"
BOB, CAROL = "discord:bob", "discord:carol"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def base_url() -> Iterator[str]:
    with model_server() as url:
        yield url


def dm(user: str = BOB) -> RunContext:
    return RunContext.dm(AGENT, f"discord:dm-{user}", user)


def test_a_conversation_remembers_recalls_and_forgets(
    example: ModuleType, mem: Memory, base_url: str
) -> None:
    run = example.run_turn
    said = run(mem, dm(), "Please remember that I prefer green tea.", base_url=base_url, model="m")
    assert said.tool_calls == [("remember", {"fact": "Prefers green tea."}, False)]
    assert said.chip == example.CHIP and said.receipts[0].startswith("Noted")
    offered = [t["function"]["name"] for t in requests[0]["tools"]]
    assert offered == ["remember", "forget", "recall"]
    assert said.reply.startswith("Done. (remembered")
    (note,) = mem.list(RunContext.owner(AGENT))
    assert (note.scope_id, note.basis.value, note.source.via) == (BOB, "inferred", "tool")

    requests.clear()
    plain = run(mem, dm(), "Which tea do I like?", base_url=base_url, model="m")
    assert plain.chip is None and plain.tool_calls == []  # a turn that wrote nothing: no chip
    shown = requests[0]["messages"][1]["content"]
    assert "Prefers green tea." in shown and "BEGIN REMEMBERED NOTES" in shown

    gone = run(mem, dm(), "Please forget that.", base_url=base_url, model="m")
    assert gone.tool_calls == [("forget", {"number": 1}, False)]
    assert gone.chip == example.CHIP and gone.receipts[0].startswith("Forgot")
    assert mem.get(RunContext.owner(AGENT), note.id).status is Status.FORGOTTEN


def test_the_model_cannot_pick_whose_memory(
    example: ModuleType, mem: Memory, base_url: str
) -> None:
    mem.remember(dm(CAROL), "Prefers oolong tea.", scope="user")
    turn = example.run_turn(mem, dm(), "smuggle something", base_url=base_url, model="m")
    (call,) = turn.tool_calls
    assert call[0] == "recall" and call[2] is True  # refused, and said so to the model
    assert "whose memory" in requests[-1]["messages"][-1]["content"]
    assert "oolong" not in turn.reply and turn.chip is None
    garbled = example.run_turn(mem, dm(), "garble it", base_url=base_url, model="m")
    assert garbled.tool_calls[0][2] is True and garbled.chip is None


def test_a_group_turn_offers_recall_only(example: ModuleType, mem: Memory, base_url: str) -> None:
    group = RunContext.group(AGENT, "discord:general", BOB)
    turn = example.run_turn(
        mem, group, "Please remember that I prefer tea.", base_url=base_url, model="m"
    )
    assert [t["function"]["name"] for t in requests[0]["tools"]] == ["recall"]
    assert turn.tool_calls == [] and turn.chip is None
    assert mem.list(RunContext.owner(AGENT)) == []


def test_the_loop_runs_against_a_remem_service(
    example: ModuleType, base_url: str, tmp_path: Path
) -> None:
    from http_server import serve

    with serve(tmp_path / "data") as server:
        token = server.token("--name", "bot", "--agent", AGENT, "--channel", "*", "--actor", "*")
        with Memory.open(server.url, token=token) as remote:
            turn = example.run_turn(
                remote, dm(), "Please remember that I prefer rooibos.", base_url=base_url, model="m"
            )
            assert turn.chip == example.CHIP and turn.tool_calls[0][2] is False
            (note,) = remote.list(dm())
            assert note.text == "Prefers rooibos." and note.source.via == "tool"
            with pytest.raises(InvalidInput, match="JSON values"):
                remote.run_tool(dm(), "recall", {"query": b"bytes"})  # type: ignore[dict-item]
            odd = remote.run_tool(dm(), "recall", ["not", "an", "object"])  # type: ignore[arg-type]
            assert odd.is_error and odd.code == "invalid_arguments"  # as in-process


def test_the_example_runs_from_the_command_line(base_url: str, data_dir: Path) -> None:
    import os
    import subprocess

    out = subprocess.run(
        [
            *(sys.executable, str(EXAMPLE), "--data", str(data_dir), "--agent", AGENT),
            *("--dm", "discord:dm-bob", "--user", BOB, "--base-url", base_url, "--model", "m"),
            "Please remember that I prefer mint tea.",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        'Done. (remembered: "Prefers mint tea.")',
        "[Noted — see what I remember]",
    ]

"""Bad input gets a typed error and loses nothing; stored text has one canonical form;
output is inert; limits are ceilings; receipts say what happened (issue 11, items 9,
10 (stored text), 15-18)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from remem import (
    ConfigError,
    InvalidInput,
    Memory,
    Message,
    Rejected,
    Role,
    RunContext,
    Scope,
)
from remem.cli import main
from remem.core.events import Remembered
from remem.core.ids import new_id
from remem.core.model import Basis, Kind, Status
from remem.recall.render import parse_block

AGENT = "yuko"
ALICE = "discord:100"
BOB = "discord:200"
DM = "discord:dm-alice"
GENERAL = "discord:general"
REMEM = Path(sys.executable).parent / "remem"


def alice() -> RunContext:
    return RunContext.dm(AGENT, DM, ALICE)


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def write_toml(data_dir: Path, text: str) -> None:
    """Write remem.toml with a distinct mtime (a live reload must notice every edit)."""
    path = data_dir / "remem.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10_000_000, before + 10_000_000))


# -- 15: every entry point raises a RememError subclass for bad input ----------------------


@pytest.mark.parametrize("bad", ["\ud800", "a\udfffb"])
def test_lone_surrogates_in_texts_and_ids_are_invalid_input(mem: Memory, bad: str) -> None:
    with pytest.raises(InvalidInput, match="surrogate"):
        mem.remember(alice(), f"Likes tea {bad}")
    note = mem.remember(alice(), "Likes tea.")
    with pytest.raises(InvalidInput, match="surrogate"):
        mem.correct(alice(), note.id, f"Likes {bad} coffee.")
    with pytest.raises(InvalidInput):
        mem.remember(owner(), "A channel fact.", scope="channel", scope_id=f"discord:{bad}")
    with pytest.raises(InvalidInput):
        RunContext.dm(AGENT, DM, f"discord:{bad}")
    with pytest.raises(InvalidInput):
        mem.remember(alice(), "Likes tea a lot.", source=f"msg{bad}")
    with pytest.raises(InvalidInput, match="surrogate"):
        mem.recall(alice(), bad)
    with pytest.raises(InvalidInput, match="surrogate"):
        mem.learn(alice(), [Message(ALICE, Role.MEMBER, f"I like {bad} tea.")])
    assert [n.text for n in mem.list(alice())] == ["Likes tea."]  # nothing lost


def test_nul_and_control_characters_in_ids_are_invalid_input(mem: Memory) -> None:
    for agent in ("yu\x00ko", "yu\x1bko", "yu\u202eko", ""):
        with pytest.raises(InvalidInput, match="agent"):
            RunContext.owner(agent)
    with pytest.raises(InvalidInput, match="actor"):
        RunContext(agent=AGENT, kind=alice().kind, role=Role.MEMBER, actor="a\x00b")
    with pytest.raises(InvalidInput, match="channel"):
        mem.set_channel_policy(owner(), "disc\x00ord", memory=False)
    with pytest.raises(InvalidInput, match="steward"):
        mem.set_channel_policy(owner(), GENERAL, stewards=["discord:1\n"])


def test_ids_keep_any_printable_platform_id(mem: Memory) -> None:
    """Ids are checked by character set only: digits that pass Luhn, colons, slashes and
    non-Latin letters are ordinary ids."""
    ctx = RunContext.dm(AGENT, "slack:T1/C9", "discord:4111111111111111")
    assert mem.remember(ctx, "Likes tea.").scope_id == "discord:4111111111111111"
    assert RunContext.dm(AGENT, "line:群組", "line:ユーザー").actor == "line:ユーザー"


def test_wrong_types_are_invalid_input(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="tags"):
        mem.remember(alice(), "Likes tea.", tags=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="tags"):
        mem.remember(alice(), "Likes tea.", tags=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="tag"):
        mem.remember(alice(), "Likes tea.", tags=[b"x"])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="unknown channel policy key"):
        mem.set_channel_policy(owner(), GENERAL, bogus=1)
    note = mem.remember(alice(), "Likes tea.")
    with pytest.raises(InvalidInput, match="if_version"):
        mem.forget(alice(), note.id, if_version="1")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        mem.undo(owner(), ["rev_1"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        mem.learn(alice(), [{"author": ALICE, "role": "member", "text": "hi", "x": 1}])
    with pytest.raises(InvalidInput):
        mem.relearn(owner(), "arch\x00ive.jsonl")
    with pytest.raises(InvalidInput):
        mem.command(None, "forget that")  # type: ignore[arg-type]
    assert mem.get(alice(), note.id).status is Status.ACTIVE


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("recall_max_chars = 99999999999999999999", "recall_max_chars"),
        ("recall_max_notes = 5000", "recall_max_notes"),
        ("retention_days = 99999999", "retention_days"),
        ('inferred = "evidence:99999999999"', "inferred"),
        ("max_note_chars = 0", "max_note_chars"),
    ],
)
def test_numbers_out_of_range_in_remem_toml_fail_at_load(
    data_dir: Path, line: str, key: str
) -> None:
    write_toml(data_dir, f"[memory]\n{line}\n")
    with pytest.raises(ConfigError, match=rf"{key}.*from 1 to"):
        Memory.open(data_dir)


def test_invalid_utf8_in_cli_arguments_prints_one_line(tmp_path: Path) -> None:
    data = str(tmp_path / "data").encode()
    proc = subprocess.run(
        [str(REMEM).encode(), b"--data", data, b"remember", b"--agent", b"yuko", b"hi \xff"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert b"Traceback" not in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"surrogate" in proc.stderr


# -- 10 (stored text) and 16: one canonical form; inert output -----------------------------


def test_stored_text_is_nfc_without_invisible_or_control_characters(mem: Memory) -> None:
    raw = "Likes\u200b caf\u0065\u0301 \u202eand\u202c\tthe\x1b[31m team\ufeff."
    note = mem.remember(alice(), raw)
    assert note.text == "Likes café and the[31m team."
    assert mem.recall(alice(), "café").notes[0].text == note.text
    with pytest.raises(Rejected, match="empty"):
        mem.remember(alice(), "\u200b\u200d\u2060\ufeff\u00ad\U000e0041")


def test_correct_stores_the_same_form_as_remember(mem: Memory) -> None:
    note = mem.remember(alice(), "Likes tea.")
    fixed = mem.correct(alice(), note.id, "Likes\n\ngreen\r\n tea\u200b.\x00")
    assert fixed.text == "Likes green tea."
    assert fixed.text == mem.remember(alice(), "Likes\n\ngreen\r\n tea\u200b.\x00").text


def _hostile_note(mem: Memory, text: str, status: Status = Status.ACTIVE) -> str:
    """A note written by an older version, which stored text as given."""
    ctx = owner()
    agent = mem._agent(ctx)
    note_id = new_id("note")
    event = Remembered(
        note_id=note_id,
        scope=Scope.AGENT,
        scope_id=None,
        kind=Kind.FACT,
        text=text,
        basis=Basis.EXPLICIT,
        status=status,
        **mem._envelope(ctx),
    )
    agent.write(lambda state: ([event], None))
    return note_id


HOSTILE = "Deploys\x1b[2J\x1b]0;pwned\x07 on \u202efriday\x9b31m\x00 always"


def test_cli_output_is_inert(data_dir: Path) -> None:
    with Memory.open(data_dir) as mem:
        note_id = _hostile_note(mem, HOSTILE)
        _hostile_note(mem, HOSTILE + " pending", Status.PENDING)
        mem.set_rule(owner(), "style", "Be brief.\x1b[31m\nAlways.")
    runner = CliRunner()
    env = {"REMEM_DATA": str(data_dir)}
    outputs = []
    for args in (
        ["ls", "--all"],
        ["show", note_id],
        ["history", note_id],
        ["review"],
        ["recall", "--agent", AGENT, "friday"],
        ["rules", "show", AGENT, "style"],
        ["disable", note_id],
    ):
        result = runner.invoke(main, args, env=env)
        assert result.exit_code == 0, (args, result.output)
        outputs.append(result.output)
    for output in outputs:
        for ch in ("\x1b", "\x07", "\x9b", "\x00", "\u202e"):
            assert ch not in output
    assert "\\x1b[2J" in outputs[0] and "\\u202e" in outputs[1]
    assert "Be brief.\\x1b[31m\nAlways." in outputs[5]  # a rule keeps its lines
    # --json stays exact (JSON escapes the characters itself)
    exact = runner.invoke(main, ["show", note_id, "--json"], env=env).output
    assert '"text": "Deploys\\u001b[2J' in exact


def test_command_replies_are_inert(mem: Memory) -> None:
    ctx = RunContext.dm(AGENT, DM, ALICE)
    agent = mem._agent(ctx)
    event = Remembered(
        note_id=new_id("note"),
        scope=Scope.USER,
        scope_id=ALICE,
        kind=Kind.PREFERENCE,
        text="Likes \x1b[31mred\u202e tea",
        basis=Basis.EXPLICIT,
        status=Status.ACTIVE,
        **mem._envelope(ctx),
    )
    agent.write(lambda state: ([event], None))
    reply = mem.command(ctx, "what do you remember about me?")
    assert reply is not None and "red" in reply.text
    assert "\x1b" not in reply.text and "\u202e" not in reply.text
    assert "\n" in reply.text  # its own line breaks stay


# -- 17: caps ---------------------------------------------------------------------------


def test_learn_refuses_a_huge_message_quickly(mem: Memory) -> None:
    started = time.monotonic()
    with pytest.raises(InvalidInput, match="at most 8000"):
        mem.learn(alice(), [Message(ALICE, Role.MEMBER, "I like tea. " * 90_000)])
    with pytest.raises(InvalidInput, match="200000"):
        mem.learn(alice(), [Message(ALICE, Role.MEMBER, "I like tea. " * 600)] * 30)
    assert time.monotonic() - started < 1.0
    assert mem.list(alice()) == []


def test_tag_count_and_length_are_capped(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="at most 20 tags"):
        mem.remember(alice(), "Likes tea.", tags=[f"t{i}" for i in range(10_000)])
    with pytest.raises(InvalidInput, match="up to 40"):
        mem.remember(alice(), "Likes tea.", tags=["x" * 41])
    note = mem.remember(alice(), "Likes tea.", tags=[f"t{i}" for i in range(20)] + ["t0"])
    assert len(note.tags) == 20


# -- 18: receipts and writes() ---------------------------------------------------------------


def test_receipts_say_what_happened(mem: Memory) -> None:
    note = mem.remember(alice(), "Likes tea.")
    assert note.receipt.startswith("Noted")
    assert mem.correct(alice(), note.id, "Likes green tea.").receipt.startswith("Corrected")
    assert mem.disable(alice(), note.id).receipt.startswith("Disabled")
    assert mem.enable(alice(), note.id).receipt.startswith("Enabled")
    assert mem.pin(alice(), note.id).receipt.startswith("Pinned")
    assert mem.forget(alice(), note.id).receipt.startswith("Forgot")
    again = mem.remember(alice(), "Likes coffee.")
    assert mem.remember(alice(), "Likes coffee.").receipt.startswith("Noted again")
    moved = mem.move(alice(), again.id, scope="channel")
    assert moved.receipt.startswith("Moved")
    reply = mem.command(alice(), "forget that")
    assert reply is not None and reply.text.startswith("Forgot")


def test_writes_lists_what_one_run_wrote_as_the_caller_may_see_it(mem: Memory) -> None:
    run = RunContext.dm(AGENT, DM, ALICE, run_id="run_alice_1")
    tea = mem.remember(run, "Likes tea.")
    mem.correct(run, tea.id, "Likes green tea.")
    cake = mem.remember(run, "Likes cake.")
    mem.forget(run, cake.id)
    mem.remember(RunContext.dm(AGENT, DM, ALICE, run_id="run_other"), "Likes jazz.")
    writes = mem.writes(alice(), "run_alice_1")
    assert [(w.note.id, w.ops) for w in writes] == [
        (tea.id, ("remember", "correct")),
        (cake.id, ("remember", "forget")),
    ]
    assert writes[0].note.text == "Likes green tea." and writes[0].receipt.startswith("Corrected")
    assert writes[1].note.text == "" and writes[1].receipt.startswith("Forgot")
    bob = RunContext.dm(AGENT, "discord:dm-bob", BOB)
    assert mem.writes(bob, "run_alice_1") == []  # not visible to Bob
    assert mem.writes(alice(), "run_unknown") == []
    with pytest.raises(InvalidInput):
        mem.writes(alice(), "run\x00")


# -- 9: built-in recall limits are ceilings; readers re-clamp --------------------------------


def test_a_steward_cannot_raise_recall_limits_past_the_built_in_ceiling(mem: Memory) -> None:
    admin = RunContext.group(AGENT, GENERAL, "discord:1", role=Role.ADMIN)
    mem.set_channel_policy(admin, GENERAL, stewards=[ALICE])
    steward = RunContext.group(AGENT, GENERAL, ALICE)
    change = mem.set_channel_policy(
        steward, GENERAL, recall_max_notes=500, recall_max_chars=100_000
    )
    assert any("recall_max_notes=500" in n and "20 applies" in n for n in change.notices)
    assert any("recall_max_chars=100000" in n and "6000 applies" in n for n in change.notices)
    assert mem.limits(steward, GENERAL).recall_max_notes == 20
    for i in range(30):
        mem.remember(steward, f"Deploy rule number {i} of the team.", scope="channel")
    assert len(mem.recall(RunContext.task(AGENT, GENERAL), "deploy").notes) == 20


def test_remem_toml_may_raise_the_recall_ceiling(data_dir: Path) -> None:
    write_toml(data_dir, f"[agents.{AGENT}.memory]\nrecall_max_notes = 50\n")
    with Memory.open(data_dir) as mem:
        change = mem.set_channel_policy(owner(), GENERAL, recall_max_notes=40)
        assert change.notices == []
        assert mem.limits(owner(), GENERAL).recall_max_notes == 40


def test_render_cuts_a_note_longer_than_the_current_limit(data_dir: Path) -> None:
    write_toml(data_dir, "[memory]\nmax_note_chars = 1000\n")
    with Memory.open(data_dir) as mem:
        long = "Deploys " + "carefully " * 89
        note = mem.remember(owner(), long, scope="agent")
        write_toml(data_dir, "[memory]\nmax_note_chars = 100\n")
        recall = mem.recall(RunContext.agent_only(AGENT), "deploys")
        assert [n.id for n in recall.notes] == [note.id]
        body = parse_block(recall.text)[0]
        assert len(body) <= 101 and body.endswith("…")
        assert f"cut 100/{len(note.text)}" in recall.text

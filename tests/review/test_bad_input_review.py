"""Review of issue 11, class "bad input": hostile values the first fuzz pass did not reach
(nested in valid arguments, or arriving from an archive file) give a typed error, and no
value a caller may store makes a later recall, listing or compaction crash."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from remem import InvalidInput, Memory, Message, Role, RunContext
from remem.cli import main

AGENT = "yuko"
ALICE = "discord:100"
DM = "discord:dm-alice"


def test_a_note_said_near_year_9999_does_not_break_recall_under_retention(mem: Memory) -> None:
    """A `said_at` near the end of datetime's range plus a retention period overflowed:
    one such note made every recall, status_of and compact of the agent crash."""
    owner = RunContext.owner(AGENT)
    alice = RunContext.dm(AGENT, DM, ALICE)
    mem.set_channel_policy(owner, DM, retention_days=36_500)
    far = mem.remember(
        alice, "The plan is to meet on Mondays.", kind="decision", said_at="9999-12-31T00:00:00Z"
    )
    assert [n.id for n in mem.recall(alice, "plan Mondays").notes] == [far.id]
    assert mem.status_of(alice, far).value == "active"
    mem.compact(owner)
    assert mem.get(alice, far.id).text == "The plan is to meet on Mondays."


@pytest.mark.parametrize(
    "when", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"], ids=["late", "early"]
)
def test_a_time_out_of_range_in_utc_is_invalid_input(mem: Memory, when: str) -> None:
    alice = RunContext.dm(AGENT, DM, ALICE)
    with pytest.raises(InvalidInput, match="out of range"):
        mem.remember(alice, "Likes tea.", said_at=when)
    with pytest.raises(InvalidInput, match="out of range"):
        mem.learn(alice, [Message(ALICE, Role.MEMBER, "I prefer tea.", None, when)])


def test_status_of_takes_a_naive_now_as_utc(mem: Memory) -> None:
    alice = RunContext.dm(AGENT, DM, ALICE)
    note = mem.remember(alice, "Likes tea.", expires_at="2030-01-01T00:00:00Z")
    assert mem.status_of(alice, note, datetime(2029, 12, 31, 23)).value == "active"
    assert mem.status_of(alice, note, datetime(2030, 1, 1, 1)).value == "expired"


@pytest.mark.parametrize(
    "raw",
    [{"text": "I prefer tea."}, {"author": ALICE, "text": "hi"}, {1: 2}, {"bogus": 1}],
    ids=["text-only", "no-role", "int-key", "unknown-key"],
)
def test_learn_with_a_malformed_message_dict_is_invalid_input(mem: Memory, raw: dict) -> None:
    alice = RunContext.dm(AGENT, DM, ALICE)
    with pytest.raises(InvalidInput, match="message 1"):
        mem.learn(alice, [raw])


def _relearn(tmp_path: Path, line: str) -> tuple[int, str]:
    archive = tmp_path / "archive.jsonl"
    archive.write_text(line + "\n")
    data = tmp_path / "data"
    result = CliRunner().invoke(
        main, ["--data", str(data), "relearn", "--agent", AGENT, str(archive)]
    )
    return result.exit_code, result.output + repr(result.exception)


def test_relearn_of_a_deeply_nested_archive_line_is_a_clear_error(tmp_path: Path) -> None:
    code, output = _relearn(tmp_path, '{"a":' * 100_000 + "1" + "}" * 100_000)
    assert code == 2, output
    assert "is not JSON" in output
    assert "RecursionError" not in output


def test_relearn_of_an_out_of_range_time_is_a_clear_error(tmp_path: Path) -> None:
    row = '{"author": "discord:1", "role": "admin", "text": "Reports use sheet Q."'
    code, output = _relearn(tmp_path, row + ', "ts": "9999-12-31T23:59:59-14:00"}')
    assert code == 2, output
    assert "out of range" in output

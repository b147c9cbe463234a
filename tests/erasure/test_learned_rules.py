"""A rule learned from a note goes with it: forgetting the note takes its line out of
``rules/`` and every system prompt at once, also after a reopen, and a compaction leaves
no copy of it in any file."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from remem import Memory, Message, Role, RunContext

from .scan import files_holding, new_marker

AGENT = "yuko"
ALICE = "discord:900"


def _admin() -> RunContext:
    return RunContext.group(AGENT, "discord:general", ALICE, role=Role.ADMIN)


def _learn_rule(mem: Memory, marker: str) -> str:
    """An admin's standing style instruction, learned and approved into the rule."""
    text = f"Never start replies with the word {marker}."
    ts = datetime(2026, 7, 10, 12, tzinfo=UTC)
    report = mem.learn(_admin(), [Message(ALICE, Role.ADMIN, text, "m1", ts)])
    (proposal,) = report.pending
    assert "learned-rule" in proposal.tags
    mem.approve(_admin(), proposal.id)
    assert marker in mem.rules(_admin())["learned"]
    assert marker in mem.compile(_admin(), "hello").system
    return proposal.id


def test_forgetting_the_note_takes_its_rule_away(tmp_path: Path) -> None:
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        mem.set_rule(_admin(), "tone", "Be brief.")
        note_id = _learn_rule(mem, marker)
    with Memory.open(tmp_path) as mem:  # the link survives a reopen
        mem.forget(_admin(), note_id)
        assert marker not in mem.compile(_admin(), "hello").system
        assert all(marker not in rule for rule in mem.rules(_admin()).values())
        assert mem.rules(_admin())["tone"] == "Be brief."  # a human rule is untouched
        mem.compact(RunContext.owner(AGENT))
    assert files_holding(tmp_path, marker) == []


def test_a_line_written_before_links_goes_with_its_note(tmp_path: Path) -> None:
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        note_id = _learn_rule(mem, marker)
    rule = tmp_path / "agents" / AGENT / "rules" / "learned.md"
    unlinked = "\n".join(line.split(" <!--")[0] for line in rule.read_text().splitlines())
    rule.write_text(unlinked + "\n")  # as an older version wrote it: no link
    with Memory.open(tmp_path) as mem:
        mem.forget(_admin(), note_id)
        assert marker not in mem.compile(_admin(), "hello").system
        mem.compact(RunContext.owner(AGENT))
    assert files_holding(tmp_path, marker) == []


def test_compaction_drops_a_line_whose_note_is_gone(tmp_path: Path) -> None:
    """A link naming a note that no longer lives (erased, or never known here) is not
    kept: compaction drops the line, whoever wrote it."""
    marker = new_marker()
    with Memory.open(tmp_path) as mem:
        note_id = _learn_rule(mem, marker)
    rule = tmp_path / "agents" / AGENT / "rules" / "learned.md"
    stale = rule.read_text().replace(note_id, "note_01J0000000000000000000000Z")
    rule.write_text(stale)
    with Memory.open(tmp_path) as mem:
        mem.compact(RunContext.owner(AGENT))
        assert marker not in mem.compile(_admin(), "hello").system
    assert not rule.exists() or marker not in rule.read_text()

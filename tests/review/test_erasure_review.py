"""Review of issue 11, class "erasure": a member's "forget everything about me" leaves
none of their text in the data directory, whatever state their notes were in."""

from __future__ import annotations

from pathlib import Path

from erasure.scan import files_holding, new_marker
from remem import Memory, Message, Role, RunContext

AGENT = "yuko"
ALICE = "discord:100"
DM = "discord:dm-alice"


def test_erase_all_erases_a_rejected_note_about_the_member(tmp_path: Path) -> None:
    """A note learned about the member and rejected at review is never used, but its text
    stayed in the log after the member's erase-all (only an owner's compact removed it)."""
    data = tmp_path / "data"
    rejected, kept = new_marker(), new_marker()
    with Memory.open(data) as mem:
        alice = RunContext.dm(AGENT, DM, ALICE)
        mem.learn(alice, [Message(ALICE, Role.MEMBER, f"I prefer {rejected} for dinner.")])
        (pending,) = mem.pending(alice)
        mem.reject(alice, pending.id)
        mem.remember(alice, f"Prefers {kept} for lunch.")
        assert files_holding(data, rejected)  # on disk before the erase-all
        reply = mem.command(alice, "forget everything about me")
        assert reply is not None
        assert mem.command(alice, "what do you remember about me?").text.startswith(  # type: ignore[union-attr]
            "I don't remember"
        )
    assert files_holding(data, kept) == []
    assert files_holding(data, rejected) == []

"""Nothing outside a principal's view leaks through errors or traces (issue 11, item 4).

An error names only what the caller may see (or the id the caller gave); a
steward's ``explain`` lists only the notes that steward may see; a revision row
does not name a replacing note its reader may not see.
"""

from __future__ import annotations

from typing import Any

import pytest

from remem import Memory, NotFound, RunContext

from .cast import (
    AGENT,
    BOB,
    CAROL,
    GENERAL,
    admin,
    member,
    no_operational_from_non_admins,  # noqa: F401  (an autouse fixture: importing it applies it)
    owner,
)

DM_BOB = "discord:dm-bob"


def bobs_revision(mem: Memory) -> tuple[str, str, str, str]:
    """Bob retires his private note by another of his: (revision id, run id, old, new)."""
    tea = mem.remember(member(BOB), "Prefers tea.", scope="user")
    green = mem.remember(member(BOB), "Prefers green tea.", scope="user")
    run = member(BOB)
    mem.supersede(run, tea.id, green.id)
    (rev,) = mem.revisions(member(BOB))
    return rev.id, run.run_id, tea.id, green.id


def test_undo_of_another_persons_revision_names_none_of_their_notes(mem: Memory) -> None:
    rev_id, run_id, tea, green = bobs_revision(mem)
    with pytest.raises(NotFound) as hidden:
        mem.undo(member(CAROL), rev_id)
    message = str(hidden.value)
    assert tea not in message and green not in message
    # The same answer as for a revision that does not exist.
    absent = "rev_01J00000000000000000000000"
    with pytest.raises(NotFound) as missing:
        mem.undo(member(CAROL), absent)
    assert message.replace(rev_id, "X") == str(missing.value).replace(absent, "X")
    # Nor does undoing Bob's run name his revision or notes.
    with pytest.raises(NotFound) as by_run:
        mem.undo_run(member(CAROL), run_id)
    assert not {rev_id, tea, green} & set(str(by_run.value).split())
    assert all(i not in str(by_run.value) for i in (rev_id, tea, green))


def test_a_revision_row_does_not_name_a_replacement_its_reader_may_not_see(
    mem: Memory,
) -> None:
    bobs = mem.remember(member(BOB), "Prefers tea.", scope="user")
    carols = mem.remember(member(CAROL), "Prefers coffee.", scope="user")
    mem.supersede(admin(), bobs.id, carols.id)  # an admin's (odd) manual revision
    (row,) = mem.revisions(member(BOB))  # Bob sees that his note was retired …
    assert row.retired == bobs.id
    assert row.replacement == ""  # … but not by which of Carol's notes
    assert carols.id not in repr(row)
    (full,) = mem.revisions(owner())
    assert full.replacement == carols.id
    # Nor does the history of his note.
    assert carols.id not in repr(mem.history(member(BOB), bobs.id))
    assert carols.id in repr(mem.history(owner(), bobs.id))
    # Bob may still take his note back, and learns no more from the answer.
    undone = mem.undo(member(BOB), row.id)
    assert undone.undone and undone.replacement == ""


def test_a_stewards_explain_lists_only_notes_the_steward_may_see(mem: Memory, clock: Any) -> None:
    mem.set_channel_policy(admin(), GENERAL, stewards=[CAROL])
    channel_note = mem.remember(member(BOB), "We ship on Thursdays.", kind="decision")
    private = mem.remember(member(BOB), "Prefers short status reports.", scope="user")
    rec = mem.recall(member(BOB), "status reports ship")
    full = mem.explain(owner(), rec.run_id)
    assert private.id in full.candidates and channel_note.id in full.candidates
    seen = mem.explain(RunContext.group(AGENT, GENERAL, CAROL), rec.run_id)
    listed = set(seen.candidates) | {i for i, _ in seen.selected} | {i for i, _ in seen.excluded}
    assert channel_note.id in listed
    assert private.id not in listed
    # The run's own speaker still sees their note in it.
    assert private.id in mem.explain(member(BOB), rec.run_id).candidates

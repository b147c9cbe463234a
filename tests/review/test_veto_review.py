"""Review of issue 11, class "vetoes": after an undo, the same statement written in
compatibility letters (fullwidth, ligatures) is the same statement and stays vetoed."""

from __future__ import annotations

import pytest

from remem import Memory, Role, RunContext

AGENT = "yuko"
SUBJECT = "report.source"


@pytest.mark.parametrize(
    "again",
    [
        "The weekly report uses the ｓａｌｅｓ sheet.",  # fullwidth letters
        "The weekly report uses the sales sheet.",  # the same words in ASCII
        "The weekly report uses the sales ｓｈｅｅｔ!",
    ],
    ids=["fullwidth", "ascii", "fullwidth-tail"],
)
def test_an_undone_replacement_in_compatibility_letters_stays_vetoed(
    mem: Memory, again: str
) -> None:
    owner = RunContext.owner(AGENT)
    admin = RunContext.group(AGENT, "discord:ops", "discord:9", role=Role.ADMIN)
    old = mem.remember(
        admin,
        "The weekly report uses the finance sheet.",
        scope="agent",
        kind="procedure",
        subject=SUBJECT,
    )
    new = mem.remember(
        admin,
        "The weekly report uses the sales sheet.",
        scope="agent",
        kind="procedure",
        subject=SUBJECT,
    )
    (revision,) = mem.revisions(owner)
    mem.undo(owner, revision.id)
    mem.forget(owner, new.id)
    mem.remember(admin, again, scope="agent", kind="procedure", subject=SUBJECT)
    assert mem.get(owner, old.id).status.value == "active"
    assert old.id in [n.id for n in mem.recall(admin, "weekly report sheet").notes]

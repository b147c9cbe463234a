"""A tool call given again (the same ``Idempotency-Key``, :mod:`remem.app.idempotency`)
answers only with what the run may read now: after an admin moved the note it wrote to
another member and corrected it, the replay is a ``not_found`` refusal, not the other
member's note (issue 20, item 1; over HTTP in ``test_http_replay.py``)."""

from __future__ import annotations

from remem import Memory, RunContext
from remem.app.idempotency import Keyed, idempotent, seed_of

AGENT = "yuko"
BOB, CAROL = "user:bob", "user:carol"
TURN = RunContext.dm(AGENT, f"dm:{BOB}", BOB, run_id="run-1")
OWNER = RunContext.owner(AGENT)


def _keyed(key: str, fact: str) -> Keyed:
    seed = seed_of("bot", AGENT, key)
    return Keyed(seed, seed_of(seed, "run_tool", "remember", fact))


def test_a_replayed_remember_tool_call_is_refused_once_its_note_is_out_of_reach(
    mem: Memory,
) -> None:
    call = {"fact": "Bob drinks tea at four"}
    with idempotent(_keyed("k1", call["fact"])):
        first = mem.run_tool(TURN, "remember", call)
    assert not first.is_error, first.text
    note_id = first.writes[-1].note.id
    with idempotent(_keyed("k1", call["fact"])):
        again = mem.run_tool(TURN, "remember", call)  # still Bob's: the same answer
    assert (again.is_error, again.writes[-1].note.version) == (False, 1)
    mem.move(OWNER, note_id, scope="user", scope_id=CAROL)
    mem.correct(OWNER, note_id, "Carol's door code is behind the clock")
    with idempotent(_keyed("k1", call["fact"])):
        replay = mem.run_tool(TURN, "remember", call)
    assert replay.is_error and replay.code == "not_found", replay
    assert "Carol" not in replay.text and replay.notices == () and replay.writes == ()
    with idempotent(_keyed("k1", "Bob drinks coffee")):
        other = mem.run_tool(TURN, "remember", {"fact": "Bob drinks coffee"})
    assert other.is_error and other.code == "invalid", other
    assert other.text.startswith("refused: Idempotency-Key reused for a different request")
    assert [n.text for n in mem.list(TURN)] == []  # nothing written by either

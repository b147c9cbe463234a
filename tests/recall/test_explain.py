"""Recall traces and ``Memory.explain`` (DESIGN §4.1, §6 step 7).

A trace is stored under the run id when the recall happens (``explain`` only
reads it back): the query's length (never its text), scopes, candidates, selected notes with scores,
exclusions with reasons, the budget, and the rendered text's sha256 and
length, but never a note's text. Who may read a trace: owners and admins all
of it; a channel's steward the runs in that channel and a participant their
own runs, each restricted to notes they may see now; anyone else gets
``NotFound``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from remem import Denied, Memory, NotFound, Role, RunContext
from remem.core.ids import new_id
from remem.recall.trace import Trace, expand

from .helpers import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    DM_ALICE,
    GENERAL,
    RANDOM,
    World,
    admin,
    dm_alice,
    dm_bob,
    explain,
    group,
    needs_channel_policy,
    owner,
)

TRACE_KEYS = {
    "type",
    "run_id",
    "agent",
    "ts",
    "run_kind",
    "actor",
    "role",
    "channel",
    "query_chars",
    "retrieval",
    "scopes",
    "selected",
    "excluded_by_reason",
    "budget",
    "text_sha256",
    "text_len",
}


def _trace_lines(data_dir: Path) -> list[dict[str, object]]:
    path = data_dir / "agents" / AGENT / "traces.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_trace_is_stored_under_the_run_id(mem: Memory, world: World, data_dir: Path) -> None:
    run_id = new_id("run")
    ctx = RunContext.group(AGENT, GENERAL, ALICE, run_id=run_id)
    rec = mem.recall(ctx, "when does the chat meet")
    assert rec.run_id == run_id
    stored = [r for r in _trace_lines(data_dir) if r.get("run_id") == run_id]
    assert len(stored) == 1
    record = stored[0]
    assert set(record) >= TRACE_KEYS
    assert record["type"] == "recall"
    assert record["query_chars"] == len("when does the chat meet")
    assert "query" not in record  # no text of the query is stored
    assert record["run_kind"] == "group"
    assert record["actor"] == ALICE
    assert record["channel"] == GENERAL
    assert record["retrieval"] == rec.retrieval
    assert record["scopes"] == ["agent", f"channel:{GENERAL}", f"user:{ALICE}"]
    # What every recall of this shape shares (the filters' verdicts) is stored once, in a
    # "shared" line the record names; the record keeps what this recall chose and cut.
    shared = [r for r in _trace_lines(data_dir) if r.get("type") == "shared"]
    assert [r["ref"] for r in shared] == [record["candidates_ref"]]
    assert shared[0]["excluded_by_reason"] == {"private_in_group": [world.user_alice]}
    assert set(shared[0]["kept"]) == {world.agent, world.ch_general}
    assert record["excluded_by_reason"] == {}
    # Read back whole: candidates are the selected plus the excluded, grouped by reason.
    whole = expand(record, lambda ref: {k: v for k, v in shared[0].items() if k != "type"})
    excluded = whole["excluded_by_reason"]
    candidates = [i for i, _ in whole["selected"]] + [i for ids in excluded.values() for i in ids]
    assert set(candidates) == {world.agent, world.ch_general, world.user_alice}
    assert [i for i, _ in record["selected"]] == [n.id for n in rec.notes]
    assert all(isinstance(s, float) for _, s in record["selected"])
    assert excluded == {"private_in_group": [world.user_alice]}
    # The same recall again writes no second shared line.
    mem.recall(RunContext.group(AGENT, GENERAL, ALICE), "when does the chat meet")
    assert len([r for r in _trace_lines(data_dir) if r.get("type") == "shared"]) == 1
    budget = dict(record["budget"])
    used_chars = budget.pop("used_chars")
    assert budget == {"max_notes": 20, "max_chars": 6000, "used_notes": 2}
    assert 0 < used_chars <= 6000
    assert record["text_sha256"] == hashlib.sha256(rec.text.encode()).hexdigest()
    assert record["text_len"] == len(rec.text)


def test_explain_reads_back_what_was_stored(mem: Memory, world: World) -> None:
    rec = mem.recall(dm_alice(), "tulips")
    trace = explain(mem, rec.run_id)
    assert isinstance(trace, Trace)
    assert trace.run_id == rec.run_id
    assert trace.query_chars == len("tulips")
    assert [i for i, _ in trace.selected] == [n.id for n in rec.notes]
    assert dict(trace.selected) == pytest.approx(rec.scores, abs=1e-6)
    assert trace.text_sha256 == hashlib.sha256(rec.text.encode()).hexdigest()
    # Nothing is recomputed: later changes do not rewrite the past.
    mem.disable(dm_alice(), world.user_alice)
    again = explain(mem, rec.run_id)
    assert again == trace
    assert world.user_alice in [i for i, _ in again.selected]


def test_traces_hold_no_note_text(mem: Memory, world: World, data_dir: Path) -> None:
    secret_ish = "Alice's private nickname is Moonbeam."
    mem.remember(dm_alice(), secret_ish)
    for ctx in (dm_alice(), dm_bob(), group(ALICE), owner(), RunContext.task(AGENT, GENERAL)):
        for query in ("", "nickname", "chess garden"):
            mem.recall(ctx, query)
    mem.compile(dm_alice(), "what do you know?", identity="You are Yuko.")
    raw = (data_dir / "agents" / AGENT / "traces.jsonl").read_text(encoding="utf-8")
    notes = mem.list(owner(), status=None)
    assert len(notes) == 8
    for note in notes:
        assert note.text not in raw
    for fragment in ("Moonbeam", "tulips", "Sicilian", "cat pictures", "garden planning"):
        assert fragment not in raw


def test_unknown_run_is_not_found(mem: Memory, world: World) -> None:
    with pytest.raises(NotFound):
        mem.explain(owner(), new_id("run"))


class TestWhoMayExplain:
    def test_owner_and_admin_see_everything(self, mem: Memory, world: World) -> None:
        rec = mem.recall(group(ALICE, GENERAL))
        full = explain(mem, rec.run_id)
        assert mem.explain(admin(), rec.run_id) == full
        assert mem.explain(RunContext.dm(AGENT, "discord:dm-x", BOB, role=Role.ADMIN), rec.run_id)

    def test_participant_sees_own_run(self, mem: Memory, world: World) -> None:
        rec = mem.recall(dm_alice(), "tulips")
        mine = mem.explain(dm_alice(), rec.run_id)
        assert mine == explain(mem, rec.run_id)
        # From another conversation the same person sees the run too, restricted to what
        # that envelope may read (the DM's channel note is not readable from #random).
        elsewhere = mem.explain(group(ALICE, RANDOM), rec.run_id)
        assert set(elsewhere.candidates) == {world.agent, world.user_alice}
        assert elsewhere.query_chars == mine.query_chars

    def test_participant_view_is_restricted_to_notes_they_may_see(
        self, mem: Memory, world: World
    ) -> None:
        rec = mem.recall(dm_alice())
        assert world.ch_dm_alice in explain(mem, rec.run_id).candidates
        # An admin moves the DM's channel note to a channel Alice is not in.
        mem.move(admin(), world.ch_dm_alice, scope="channel", scope_id=RANDOM)
        full = explain(mem, rec.run_id)
        mine = mem.explain(dm_alice(), rec.run_id)
        assert world.ch_dm_alice in full.candidates
        assert world.ch_dm_alice not in mine.candidates
        assert world.ch_dm_alice not in dict(mine.selected)
        assert set(mine.candidates) == {world.agent, world.user_alice}

    def test_other_members_and_system_principals_get_not_found(
        self, mem: Memory, world: World
    ) -> None:
        rec = mem.recall(dm_alice(), "tulips")
        for outsider in (
            dm_bob(),
            RunContext.system(AGENT, Role.CRON, channel=DM_ALICE),
            RunContext.task(AGENT, DM_ALICE),
            RunContext.agent_only(AGENT),
        ):
            with pytest.raises(NotFound):
                mem.explain(outsider, rec.run_id)
        # A group turn in alice's DM contradicts its recorded kind: refused outright.
        with pytest.raises(Denied) as refused:
            mem.explain(RunContext.group(AGENT, DM_ALICE, BOB), rec.run_id)
        assert refused.value.rule == "channel_kind"

    def test_members_cannot_read_system_runs(self, mem: Memory, world: World) -> None:
        rec = mem.recall(RunContext.task(AGENT, GENERAL))
        with pytest.raises(NotFound):
            mem.explain(group(ALICE, GENERAL), rec.run_id)
        assert explain(mem, rec.run_id).run_id == rec.run_id

    def test_not_found_looks_the_same_as_a_missing_run(self, mem: Memory, world: World) -> None:
        rec = mem.recall(dm_alice())
        with pytest.raises(NotFound) as hidden:
            mem.explain(dm_bob(), rec.run_id)
        absent = new_id("run")
        with pytest.raises(NotFound) as missing:
            mem.explain(dm_bob(), absent)
        assert str(hidden.value).replace(rec.run_id, "X") == str(missing.value).replace(absent, "X")

    @needs_channel_policy
    def test_steward_sees_runs_in_their_channel(self, mem: Memory, world: World) -> None:
        mem.set_channel_policy(admin(), GENERAL, stewards=[CAROL])
        rec = mem.recall(group(ALICE, GENERAL))
        carol_elsewhere = RunContext.dm(AGENT, "discord:dm-carol", CAROL)
        full = explain(mem, rec.run_id)
        seen = mem.explain(carol_elsewhere, rec.run_id)
        # The run is hers to inspect, but only as far as the notes she may see: not
        # Alice's private note, which the group recall considered.
        assert world.user_alice in full.candidates
        assert world.user_alice not in seen.candidates + [i for i, _ in seen.excluded]
        assert seen == full.visible_to(set(full.candidates) - {world.user_alice})
        other = mem.recall(group(ALICE, RANDOM))
        with pytest.raises(NotFound):
            mem.explain(carol_elsewhere, other.run_id)

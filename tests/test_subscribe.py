"""Change events in process (Memory.subscribe): other processes' writes, resume across a
compaction, policy, review and rules changes, and what a member never sees."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from remem import Change, Memory, Role, RunContext
from remem.schema import to_json
from remem.testing.memory_cases_changes import until

AGENT = "subs"
OWNER = RunContext.owner(AGENT)
BOB = RunContext.dm(AGENT, "dm:bob", "user:bob")
CAROL = RunContext.dm(AGENT, "dm:carol", "user:carol")
ADMIN = RunContext.group(AGENT, "chan:general", "user:alice", role=Role.ADMIN)

WRITER = """
import sys
from remem import Memory, RunContext
with Memory.open(sys.argv[1], embedder=None) as mem:
    mem.remember(RunContext.dm("subs", "dm:bob", "user:bob"), "Bob's tea: green.")
    mem.remember(RunContext.dm("subs", "dm:carol", "user:carol"), "Carol's secret plan.")
    mem.remember(RunContext.owner("subs"), "Deploys need a green build.", scope="agent")
"""


def test_another_process_writes_reach_a_subscriber_filtered(tmp_path: Path) -> None:
    with Memory.open(tmp_path, embedder=None) as mem, mem.subscribe(BOB) as bob:
        subprocess.run([sys.executable, "-c", WRITER, str(tmp_path)], check=True, timeout=120)
        seen = until(bob, 2)
        notes = {n.id: n for n in mem.list(OWNER, status=None)}
        texts = [notes[c.id].text for c in seen if c.id]
        assert texts == ["Bob's tea: green.", "Deploys need a green build."]
        assert all(c.event == "note.changed" and c.op == "remember" for c in seen)
        assert bob.poll() == []
        assert "secret" not in str([to_json(c) for c in seen])


def test_a_waiting_poll_wakes_on_a_write_and_ends_on_close(tmp_path: Path) -> None:
    with Memory.open(tmp_path, embedder=None) as mem:
        sub = mem.subscribe(OWNER)
        got: list[list[Change]] = []
        waiter = threading.Thread(target=lambda: got.append(sub.poll(30.0)))
        waiter.start()
        mem.remember(OWNER, "Invoices go out on the first.", scope="agent")
        waiter.join(10)
        assert not waiter.is_alive() and [c.op for c in got[0]] == ["remember"]
        closer = threading.Thread(target=lambda: got.append(list(sub)))
        closer.start()
        sub.close()
        closer.join(10)
        assert not closer.is_alive() and got[1] == [] and sub.closed


def test_resume_across_a_compaction_and_agent_changes(tmp_path: Path) -> None:
    with Memory.open(tmp_path, embedder=None) as mem:
        gone = mem.remember(BOB, "Bob's old address.")
        kept = mem.remember(OWNER, "The office opens at nine.", scope="agent")
        mem.forget(OWNER, gone.id)
        mem.compact(OWNER)  # erases gone's events: holes in the seqs
        mem.set_channel_policy(ADMIN, "chan:general", memory=True)
        mem.set_my_preferences(CAROL, inferred=False)
        held = mem.remember(BOB, "Bob seems to like tabs.", basis="inferred")  # pending
        with mem.subscribe(BOB, after=0) as bob, mem.subscribe(ADMIN, after=0) as admin:
            got = until(bob, 4)
            assert next(c.id for c in got if c.event == "note.changed") == kept.id
            assert gone.id not in {c.id for c in got}
            whats = [c.what for c in got if c.event == "agent.changed"]
            assert whats == ["compacted", "policy", "review"]  # not Carol's choices
            assert held.id in {c.id for c in got}
            seen = admin.poll()
            assert [c.what for c in seen].count("policy") == 2  # Carol's choices too
            assert [c.seq for c in got] == sorted(c.seq for c in got)
            mem.set_rule(OWNER, "tone", "Be very brief.")
            assert [c.what for c in bob.poll()] == ["rules"]
        with mem.subscribe(BOB, after=got[0].seq) as resumed:  # after a hole: the next ones
            assert [c.seq for c in until(resumed, len(got) - 1)] == [c.seq for c in got[1:]]

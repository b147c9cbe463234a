"""Caches have one owner: every decision and text memo kept between calls belongs to one
agent's memos, is keyed by the version of that agent's state, and goes in one call
(``AgentLog.forget_texts``). White-box: it looks at the agent's memos."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from remem import Memory, RunContext
from remem.app.kernel import Engine

AGENT = "yuko"


def _engine(mem: Memory) -> Engine:
    engine = mem._local()  # white-box: where the caches live
    assert isinstance(engine, Engine)
    return engine


def test_grants_and_recall_policies_live_in_the_agents_memos(tmp_path: Path) -> None:
    alice = RunContext.dm(AGENT, "dm:alice", "discord:alice")
    bob = RunContext.dm("kenji", "dm:bob", "discord:bob")
    with Memory.open(tmp_path) as mem:
        mem.remember(alice, "Alice likes sailing.")
        mem.remember(replace(alice), "Alice keeps bees.")  # an equal envelope: one grant
        mem.recall(alice, "sailing")
        mem.remember(bob, "Bob likes tea.")
        engine = _engine(mem)
        memos = engine.agent(AGENT).memos
        assert len(memos.grants) == 1
        assert len(memos.recall_policies) == 1
        assert len(engine.agent("kenji").memos.grants) == 1  # each agent its own
        assert not any(isinstance(v, dict) and v for k, v in vars(engine).items() if k != "_agents")


def test_a_new_state_version_starts_the_decisions_over(tmp_path: Path) -> None:
    alice = RunContext.dm(AGENT, "dm:alice", "discord:alice")
    with Memory.open(tmp_path) as mem:
        mem.remember(alice, "Alice likes sailing.")
        memos = _engine(mem).agent(AGENT).memos
        assert len(memos.grants) == 1
        mem.set_my_preferences(alice, inferred=False)  # participant choices: a new version
        mem.remember(alice, "Alice keeps bees.")
        assert len(memos.grants) == 1  # the old version's grant was dropped, not kept


def test_forget_texts_drops_every_memo_of_the_agent(tmp_path: Path) -> None:
    alice = RunContext.dm(AGENT, "dm:alice", "discord:alice")
    with Memory.open(tmp_path) as mem:
        mem.remember(alice, "Alice likes sailing.")
        mem.recall(alice, "sailing")
        agent = _engine(mem).agent(AGENT)
        assert len(agent.memos.grants) and len(agent.memos.recall_policies)
        agent.forget_texts()
        assert len(agent.memos) == 0

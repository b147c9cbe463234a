"""Contract cases for the memory tools a host offers its model (``tool_specs`` and
``run_tool``; see :mod:`remem.testing.memory_contract` and :mod:`remem.tools`)."""

from __future__ import annotations

from remem.testing.memory_world import OK, MemoryFactory, World, case


def _names(specs: list[dict[str, object]]) -> list[object]:
    return [spec["name"] for spec in specs]


class ToolCases:
    """Which tools a run offers, and what a call does or refuses."""

    @case("tool_specs", OK)
    def test_tool_sets_follow_the_run(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            assert _names(w.mem.tool_specs(w.dm(), style="mcp")) == ["remember", "forget", "recall"]
            assert _names(w.mem.tool_specs(w.member(), style="anthropic")) == ["recall"]
            assert w.mem.tool_specs(w.unpaired()) == []
            (openai,) = w.mem.tool_specs(w.cron(), style="openai")
            assert openai["type"] == "function"
            w.mem.set_channel_policy(w.owner(), f"dm:{w.BOB}", tools=["recall"])
            assert _names(w.mem.tool_specs(w.dm(), style="mcp")) == ["recall"]

    @case("run_tool", OK)
    def test_a_tool_call_writes_with_a_receipt_or_is_refused(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            ctx = w.dm()
            told = w.mem.run_tool(ctx, "remember", {"fact": "Prefers oolong tea."})
            assert not told.is_error and told.code is None and told.notices
            (written,) = told.writes
            note = written.note
            assert (note.scope_id, note.basis.value, note.source.via) == (w.BOB, "inferred", "tool")
            assert note.status.value == "active" and written.receipt == told.notices[0]
            assert [x.note.id for x in w.mem.writes(ctx, ctx.run_id)] == [note.id]
            w.mem.compile(ctx, "Which tea do I like?")
            gone = w.mem.run_tool(ctx, "forget", {"number": 1})
            assert not gone.is_error and w.mem.get(w.owner(), note.id).status.value == "forgotten"
            secret = {"fact": "The deploy password is Tr0ub4dor&3-horse-battery"}
            refused = w.mem.run_tool(ctx, "remember", secret)
            assert refused.is_error and refused.code == "rejected" and not refused.notices
            smuggled = w.mem.run_tool(ctx, "recall", {"query": "tea", "user_id": w.CAROL})
            assert smuggled.is_error and smuggled.code == "identity_argument"
            absent = w.mem.run_tool(w.member(), "remember", {"fact": "Likes chess."})
            assert absent.is_error and absent.code == "unknown_tool"
            assert w.mem.list(w.owner(), status=None) == [w.mem.get(w.owner(), note.id)]
            w.mem.set_my_preferences(ctx, tool_writes="review")  # the member's own choice
            held = w.mem.run_tool(ctx, "remember", {"fact": "Prefers rooibos."})
            assert [n.text for n in w.mem.pending(ctx)] == ["Prefers rooibos."], held

"""Contract cases for recall, review, rules, policy layers and compaction (see
:mod:`remem.testing.memory_contract`)."""

from __future__ import annotations

from datetime import timedelta

from remem.app.principal import HostPrincipal
from remem.context import Role
from remem.core.model import Status
from remem.errors import Denied, NotFound, Rejected
from remem.testing.memory_world import DENIED, NOT_FOUND, OK, MemoryFactory, World, case, raises


class PolicyCases:
    """Recall and its traces, review, rules, policy, compaction, agents."""

    @case("recall", OK, DENIED)
    def test_recall_gives_what_the_run_may_see(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            bobs = w.user_note(text="Prefers tea with lemon.")
            carols = w.user_note(w.CAROL, text="Prefers tea with milk.")
            shared = w.agent_note("The tea kettle is in the kitchen.")
            result = w.mem.recall(w.dm(), "tea")
            ids = [n.id for n in result.notes]
            assert bobs.id in ids and shared.id in ids and carols.id not in ids
            assert bobs.text in result.text and carols.text not in result.text
            assert result.run_id == w.dm().run_id or result.run_id.startswith("run_")
            assert isinstance(result.retrieval, str) and result.retrieval
            raises(Denied, w.mem.recall, w.unpaired(), "tea")

    @case("compile", OK, DENIED)
    def test_compile_puts_memory_after_authoritative_text(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            w.user_note(text="Prefers tea with lemon.")
            w.mem.set_rule(w.owner(), "tone", "Be brief.")
            prompt = w.mem.compile(w.dm(), "What tea?", identity="You are a bot.")
            assert prompt.system.startswith("You are a bot.") and "Be brief." in prompt.system
            assert "Prefers tea with lemon." not in prompt.system
            assert prompt.input.index("Prefers tea with lemon.") < prompt.input.index("What tea?")
            raises(Denied, w.mem.compile, w.unpaired(), "What tea?")

    @case("explain", OK, NOT_FOUND)
    def test_explain_returns_the_stored_trace(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            kept = w.user_note(text="Prefers tea with lemon.")
            off = w.user_note(text="Prefers tea at noon.")
            w.mem.disable(w.dm(), off.id)
            ctx = w.dm()
            result = w.mem.recall(ctx, "tea")
            trace = w.mem.explain(w.owner(), result.run_id)
            assert kept.id in [i for i, _ in trace.selected]
            assert (off.id, "disabled") in trace.excluded
            assert w.mem.explain(ctx, result.run_id).run_id == result.run_id
            raises(NotFound, w.mem.explain, w.dm(w.CAROL), result.run_id)
            raises(NotFound, w.mem.explain, w.owner(), "run_unknown")

    @case("pending", OK)
    @case("approve", OK, DENIED, NOT_FOUND)
    def test_review_by_the_person_it_is_about(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            held = w.mem.remember(w.dm(), "Prefers decaf.", basis="inferred")
            assert held.status is Status.PENDING
            assert [n.id for n in w.mem.pending(w.dm())] == [held.id]
            assert w.mem.pending(w.dm(w.CAROL)) == []
            raises(NotFound, w.mem.approve, w.dm(w.CAROL), held.id)
            raises(NotFound, w.mem.approve, w.dm(), w.missing_id())
            assert w.mem.approve(w.dm(), held.id).status is Status.ACTIVE
            assert w.mem.pending(w.dm()) == []
            channel = w.mem.remember(
                w.member(), "Standup is at ten.", scope="channel", basis="inferred"
            )
            assert channel.status is Status.PENDING
            raises(Denied, w.mem.approve, w.member(w.CAROL), channel.id)
            assert w.mem.approve(w.admin(), channel.id).status is Status.ACTIVE

    @case("reject", OK, DENIED, NOT_FOUND)
    def test_reject_keeps_a_note_out_for_good(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            held = w.mem.remember(w.dm(), "Prefers decaf.", basis="inferred")
            raises(NotFound, w.mem.reject, w.dm(w.CAROL), held.id)
            raises(NotFound, w.mem.reject, w.dm(), w.missing_id())
            channel = w.mem.remember(
                w.member(), "Standup is at ten.", scope="channel", basis="inferred"
            )
            raises(Denied, w.mem.reject, w.member(w.CAROL), channel.id)
            rejected = w.mem.reject(w.dm(), held.id)
            assert rejected.status is Status.REJECTED
            assert held.id not in [n.id for n in w.mem.recall(w.dm(), "decaf").notes]

    @case("rules", OK, DENIED)
    @case("set_rule", OK, DENIED)
    def test_rules_are_written_by_admins_only(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            w.mem.set_rule(w.admin(), "tone", "Be brief.")
            assert w.mem.rules(w.dm()) == {"tone": "Be brief."}
            raises(Denied, w.mem.set_rule, w.member(), "tone", "Be rude.")
            raises(Denied, w.mem.rules, w.unpaired())
            w.mem.set_rule(w.owner(), "tone", "")
            assert w.mem.rules(w.owner()) == {}
            raises(Rejected, w.mem.set_rule, w.owner(), "long", "x" * 1_000_000)

    @case("set_channel_policy", OK, DENIED)
    @case("channel_policy", OK, DENIED)
    @case("effective_policy", OK, DENIED)
    @case("limits", OK)
    def test_channel_policy_layers(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            change = w.mem.set_channel_policy(w.admin(), w.RANDOM, memory=False)
            assert change.stored.get("memory") is False
            assert w.mem.channel_policy(w.owner(), w.RANDOM)["memory"] is False
            there = w.member(channel=w.RANDOM)
            error = raises(Rejected, w.mem.remember, there, "Uses vim.", scope="channel")
            assert error.reason == "memory_off"
            values = w.mem.effective_policy(there)["values"]
            assert values["enabled"] == {"value": False, "layer": "channel"}
            assert w.mem.limits(there, w.RANDOM).enabled is False
            assert w.mem.limits(w.member()).enabled is True
            raises(Denied, w.mem.set_channel_policy, w.member(), w.GENERAL, memory=False)
            raises(Denied, w.mem.channel_policy, w.member(), w.RANDOM)
            raises(Denied, w.mem.effective_policy, w.unpaired())
            w.mem.remember(w.member(), "Uses vim.", scope="channel")  # general is still on

    @case("set_my_preferences", OK, DENIED)
    def test_preferences_apply_to_the_speaker(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            change = w.mem.set_my_preferences(w.dm(), inferred=False)
            assert change.stored.get("inferred") is False
            values = w.mem.effective_policy(w.dm())["values"]
            assert values["my_inferred"] == {"value": False, "layer": "participant"}
            error = raises(Rejected, w.mem.remember, w.dm(), "Likes jazz.", basis="inferred")
            assert error.reason
            assert w.mem.remember(w.dm(w.CAROL), "Likes jazz.", basis="inferred")
            raises(Denied, w.mem.set_my_preferences, w.cron(), inferred=False)

    @case("member_link", OK, DENIED)
    def test_member_link_only_in_the_members_own_dm(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            ctx = w.dm()
            link = w.mem.member_link(ctx)
            assert link.url.endswith("/pad#token=" + link.token) and len(link.token) >= 40
            assert (link.agent, link.channel, link.member) == (w.agent, ctx.channel, ctx.actor)
            now = w.user_note().created_at  # the store's clock, after the link was minted
            assert now < link.expires_at <= now + timedelta(days=1)
            assert w.mem.member_link(ctx).token != link.token  # a fresh one each time
            for other in (w.member(), w.cron(), w.unpaired(), w.owner()):
                error = raises(Denied, w.mem.member_link, other)
                assert error.rule in ("member_link_dm_only", "unpaired"), error.rule

    @case("compact", OK, DENIED)
    def test_compact_erases_forgotten_content(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            gone = w.user_note(text="Has a secret project called Falcon.")
            kept = w.user_note(text="Prefers tea.")
            w.mem.forget(w.dm(), gone.id)
            raises(Denied, w.mem.compact, w.admin())
            report = w.mem.compact(w.owner())
            assert report.agent == w.agent and report.notes_erased == [gone.id]
            assert report.events_after < report.events_before
            raises(NotFound, w.mem.get, w.owner(), gone.id)
            raises(NotFound, w.mem.history, w.owner(), gone.id)
            texts = [n.text for n in w.mem.list(w.owner(), status=None)]
            assert texts == [kept.text]
            assert "Falcon" not in w.mem.recall(w.owner(), "Falcon secret project").text
            assert w.mem.compact(w.owner()).notes_erased == []

    @case("agents", OK)
    @case("trash_agent", OK, DENIED)
    @case("close", OK)
    def test_agents_and_trash(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            note = w.agent_note()
            assert w.agent in w.mem.agents()
            raises(Denied, w.mem.trash_agent, w.admin(), w.agent)
            raises(Denied, w.mem.trash_agent, w.owner(), "some-other-agent")
            assert isinstance(w.mem.trash_agent(w.owner(), w.agent), str)
            assert w.agent not in w.mem.agents()
            raises(NotFound, w.mem.get, w.owner(), note.id)
            w.mem.close()

    @case("for_principal", OK, DENIED)
    def test_a_principals_view_admits_only_its_grants(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            host = HostPrincipal((w.agent,), ("*",), ("*",), Role.MEMBER)
            view = w.mem.for_principal(host)
            note = view.remember(w.dm(), "Prefers tea with lemon.", scope="user")
            assert w.mem.get(w.dm(), note.id) == note  # one store behind both
            raises(Denied, view.list, w.admin())  # an admin's envelope: above its grant
            raises(Denied, view.list, w.owner())  # an owner run: no owner grant

    @case("repairs", OK)
    def test_a_store_written_without_a_crash_reports_no_repairs(
        self, memory_factory: MemoryFactory
    ) -> None:
        """Nothing was cut from a log that no crash interrupted: ``repairs()`` is empty
        (the JSONL backend's own tests cut a real torn tail)."""
        with World(memory_factory) as w:
            w.agent_note()
            w.mem.recall(w.owner(), "anything")
            assert w.mem.repairs() == []


__all__ = ["PolicyCases"]

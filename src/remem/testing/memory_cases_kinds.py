"""Contract cases for channel kinds: a dm or group envelope is judged against its
channel's recorded kind, which only owners and admins correct (see
:mod:`remem.testing.memory_contract`)."""

from __future__ import annotations

from remem.context import RunContext
from remem.errors import Denied
from remem.testing.memory_world import DENIED, OK, MemoryFactory, World, case, raises


class KindCases:
    """set_channel_kind, channel_kinds, and envelopes that contradict a recorded kind."""

    @case("set_channel_kind", OK, DENIED)
    def test_a_recorded_kind_binds_envelopes_until_an_admin_corrects_it(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            team = w.mem.remember(w.admin(), "We ship on Fridays.", scope="channel")
            claim = RunContext.dm(w.agent, w.GENERAL, w.BOB)  # a DM claim on a group channel
            assert raises(Denied, w.mem.disable, claim, team.id).rule == "channel_kind"
            assert raises(Denied, w.mem.member_link, claim).rule == "channel_kind"
            assert w.mem.get(w.owner(), team.id).version == 1
            denied = raises(Denied, w.mem.set_channel_kind, w.member(), w.GENERAL, "group")
            assert denied.rule == "admin_only"
            fact = w.mem.set_channel_kind(w.admin(), w.RANDOM, "dm", member=w.BOB)
            assert (fact["kind"], fact["member"], fact["how"]) == ("dm", w.BOB, "set")
            raises(Denied, w.mem.recall, w.member(channel=w.RANDOM), "")
            w.mem.recall(RunContext.dm(w.agent, w.RANDOM, w.BOB), "")
            carol = RunContext.dm(w.agent, w.RANDOM, w.CAROL)  # another member's DM
            assert raises(Denied, w.mem.recall, carol, "").rule == "channel_kind"

    @case("channel_kinds", OK, DENIED)
    def test_the_recorded_kinds_are_listed_for_owners_and_admins(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            w.mem.recall(w.dm(), "")
            w.mem.recall(w.member(), "")
            kinds = w.mem.channel_kinds(w.owner())
            recorded = {c: (f["kind"], f["member"]) for c, f in kinds["recorded"].items()}
            assert recorded == {f"dm:{w.BOB}": ("dm", w.BOB), w.GENERAL: ("group", None)}
            assert kinds["unconfirmed"] == [] and kinds["unrecorded"] == []
            assert w.mem.channel_kinds(w.admin())["recorded"] == kinds["recorded"]
            raises(Denied, w.mem.channel_kinds, w.member())

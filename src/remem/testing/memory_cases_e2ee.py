"""Contract cases for end-to-end encrypted DM memory: the slot (``dm_slot``,
``put_dm_slot``) and a channel marked ``e2ee`` (see
:mod:`remem.testing.memory_contract`). The blobs here are opaque text: the server never
opens one, so the cases need no key (``remem.e2ee``'s tests seal real ones)."""

from __future__ import annotations

from remem.app.dm_slot import DmSlot
from remem.context import RunContext
from remem.errors import Conflict, Denied
from remem.testing.memory_world import CONFLICT, DENIED, OK, MemoryFactory, World, case, raises

#: Opaque sealed-slot stand-ins (base64url text, as long as a real empty slot at least).
FIRST, SECOND, THIRD = "A" * 40, "B" * 48, "C_-9" * 12


class E2eeCases:
    """The encrypted DM slot and the ``e2ee`` channel policy."""

    @case("dm_slot", OK, DENIED)
    @case("put_dm_slot", OK, DENIED, CONFLICT)
    def test_a_dm_slot_is_written_whole_at_the_version_read(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            dm = w.dm()
            thread = dm.channel
            assert thread is not None
            assert w.mem.dm_slot(dm) == DmSlot(thread, 0, None)
            assert w.mem.put_dm_slot(dm, FIRST, if_version=0) == DmSlot(thread, 1, FIRST)
            assert w.mem.put_dm_slot(dm, SECOND, if_version=1) == DmSlot(thread, 2, SECOND)
            # A writer that read version 1 lost the race: 409 with the slot as it is now.
            stale = raises(Conflict, w.mem.put_dm_slot, dm, THIRD, if_version=1)
            assert stale.current == DmSlot(thread, 2, SECOND)
            assert w.mem.dm_slot(w.dm()) == DmSlot(thread, 2, SECOND)
            # The host's system run in that thread reads and writes it too, once the
            # thread is marked e2ee (the server cannot tell a DM's channel otherwise).
            host = RunContext.system(w.agent, w.cron().role, channel=thread)
            assert raises(Denied, w.mem.dm_slot, host).rule == "dm_slot_thread"
            w.mem.set_channel_policy(w.owner(), thread, e2ee=True)
            assert w.mem.put_dm_slot(host, THIRD, if_version=2).version == 3
            # Another member's DM has its own slot; no group, owner or other-thread run
            # reaches this one.
            assert w.mem.dm_slot(w.dm(w.CAROL)).version == 0
            for other in (w.member(), w.admin(), w.owner(), w.cron()):
                denied = raises(Denied, w.mem.dm_slot, other)
                assert denied.rule == "dm_slot_thread"
                raises(Denied, w.mem.put_dm_slot, other, FIRST, if_version=3)
            raises(Denied, w.mem.dm_slot, w.unpaired())
            assert w.mem.dm_slot(dm).version == 3

    @case("set_channel_policy", OK)
    def test_an_e2ee_dm_refuses_plaintext(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            dm = w.dm()
            assert dm.channel is not None
            tea = w.mem.remember(dm, "Prefers tea.")  # before the mark: plaintext is allowed
            change = w.mem.set_channel_policy(w.owner(), dm.channel, e2ee=True)
            assert change.stored == {"e2ee": True}
            assert w.mem.limits(dm, dm.channel).e2ee is True
            refusals = [
                lambda: w.mem.remember(dm, "Lives in Lisbon."),
                lambda: w.mem.remember(dm, "Lives in Lisbon.", scope="user"),
                lambda: w.mem.correct(dm, tea.id, "Lives in Lisbon."),
                lambda: w.mem.learn(
                    dm, [{"author": w.BOB, "role": "member", "text": "I live in Lisbon."}]
                ),
                lambda: w.mem.compile(dm, "Where do I live? Lisbon."),
                lambda: w.mem.recall(dm, "Lisbon"),
            ]
            for refused in refusals:
                denied = raises(Denied, refused)
                assert denied.rule == "e2ee_plaintext"
                assert "end-to-end encrypted" in str(denied)
            assert not [n for n in w.mem.list(w.owner(), status=None) if "Lisbon" in n.text]
            assert w.mem.recall(dm).notes  # no query: nothing of the DM is sent
            # The mark is the channel's: Bob's other runs and Carol's DM are unaffected.
            assert w.mem.remember(w.member(), "Standup is at ten.", scope="channel")
            assert w.mem.remember(w.dm(w.CAROL), "Prefers coffee.")

"""Contract cases for notes: remember, the changes, reads and history (see
:mod:`remem.testing.memory_contract`)."""

from __future__ import annotations

from datetime import timedelta

from remem.core.model import Scope, Status
from remem.errors import Conflict, Denied, NotFound
from remem.testing.memory_world import (
    CONFLICT,
    DENIED,
    NOT_FOUND,
    OK,
    MemoryFactory,
    World,
    case,
    raises,
)

#: The changes that take ``if_version``, in an order each can follow the last, with the
#: status and pin each leaves a note with.
CHANGES = (
    ("pin", Status.ACTIVE, True),
    ("unpin", Status.ACTIVE, False),
    ("disable", Status.DISABLED, False),
    ("enable", Status.ACTIVE, False),
    ("forget", Status.FORGOTTEN, False),
)


class NoteCases:
    """Remember, change, read."""

    @case("remember", OK)
    def test_remember_returns_the_stored_note(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            note = w.mem.remember(w.dm(), "Prefers tea 🍵.", tags=["drinks"], pinned=True)
            assert (note.scope, note.scope_id, note.status) == (Scope.USER, w.BOB, Status.ACTIVE)
            assert (note.text, note.tags, note.pinned, note.version) == (
                "Prefers tea 🍵.",
                ("drinks",),
                True,
                1,
            )
            assert note.source.author_id == w.BOB and note.created_at == w.clock()
            assert w.mem.get(w.dm(), note.id) == note
            again = w.mem.remember(w.dm(), "Prefers tea 🍵.")
            assert again.id == note.id and again.evidence == 2  # reinforced, not duplicated

    @case("remember", DENIED)
    def test_members_cannot_write_agent_scope(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            raises(Denied, w.mem.remember, w.member(), "Everyone uses tabs.", scope="agent")
            raises(Denied, w.mem.remember, w.member(), "Carol likes tea.", scope="user",
                   scope_id=w.CAROL)  # fmt: skip
            raises(Denied, w.mem.remember, w.unpaired(), "I am the owner.")
            assert w.mem.list(w.owner(), status=None) == []

    @case("forget", OK)
    @case("disable", OK)
    @case("pin", OK)
    @case("unpin", OK)
    @case("enable", OK)
    def test_changes_return_the_changed_note(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            note = w.user_note()
            for method, status, pinned in CHANGES:
                before = w.mem.get(w.dm(), note.id)
                after = getattr(w.mem, method)(w.dm(), note.id, if_version=before.version)
                assert (after.id, after.status, after.pinned, after.version) == (
                    note.id,
                    status,
                    pinned,
                    before.version + 1,
                )
            assert note.id not in [n.id for n in w.mem.list(w.dm())]
            assert note.id not in [n.id for n in w.mem.recall(w.dm(), "short replies").notes]

    @case("correct", OK)
    def test_correct_replaces_the_text_and_keeps_history(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            note = w.user_note()
            fixed = w.mem.correct(w.dm(), note.id, "Prefers one-line replies.")
            assert (fixed.text, fixed.version) == ("Prefers one-line replies.", 2)
            assert [e.op for e in w.mem.history(w.dm(), note.id)] == ["remember", "correct"]

    @case("move", OK)
    def test_move_puts_a_note_in_another_scope(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            note = w.user_note()
            moved = w.mem.move(w.owner(), note.id, scope="channel", scope_id=w.GENERAL)
            assert (moved.scope, moved.scope_id, moved.version) == (Scope.CHANNEL, w.GENERAL, 2)
            assert w.mem.get(w.member(w.CAROL), note.id).id == note.id

    @case("forget", DENIED, NOT_FOUND)
    @case("correct", DENIED, NOT_FOUND)
    @case("disable", DENIED, NOT_FOUND)
    @case("enable", DENIED, NOT_FOUND)
    @case("pin", DENIED, NOT_FOUND)
    @case("unpin", DENIED, NOT_FOUND)
    @case("move", DENIED, NOT_FOUND)
    def test_changes_check_the_envelope(self, memory_factory: MemoryFactory) -> None:
        """Bob may see the agent-wide note but not change it (Denied); Carol's user note
        is invisible to him (NotFound, the same answer as a missing id)."""
        with World(memory_factory) as w:
            shared, carols = w.agent_note(), w.user_note(w.CAROL)
            bob = w.member()
            calls = {
                "forget": lambda i: w.mem.forget(bob, i),
                "correct": lambda i: w.mem.correct(bob, i, "Something else."),
                "disable": lambda i: w.mem.disable(bob, i),
                "enable": lambda i: w.mem.enable(bob, i),
                "pin": lambda i: w.mem.pin(bob, i),
                "unpin": lambda i: w.mem.unpin(bob, i),
                "move": lambda i: w.mem.move(bob, i, scope="channel"),
            }
            for call in calls.values():
                raises(Denied, call, shared.id)
                raises(NotFound, call, carols.id)
                raises(NotFound, call, w.missing_id())
            assert w.mem.get(w.owner(), shared.id) == shared
            assert w.mem.get(w.owner(), carols.id) == carols

    @case("forget", CONFLICT)
    @case("correct", CONFLICT)
    @case("disable", CONFLICT)
    @case("enable", CONFLICT)
    @case("pin", CONFLICT)
    @case("unpin", CONFLICT)
    @case("move", CONFLICT)
    def test_a_stale_version_conflicts(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            note = w.user_note()
            current = w.mem.correct(w.dm(), note.id, "Prefers one-line replies.")
            o, stale = w.owner(), note.version
            calls = [
                lambda: w.mem.forget(o, note.id, if_version=stale),
                lambda: w.mem.correct(o, note.id, "Other.", if_version=stale),
                lambda: w.mem.disable(o, note.id, if_version=stale),
                lambda: w.mem.enable(o, note.id, if_version=stale),
                lambda: w.mem.pin(o, note.id, if_version=stale),
                lambda: w.mem.unpin(o, note.id, if_version=stale),
                lambda: w.mem.move(o, note.id, scope="agent", if_version=stale),
            ]
            for call in calls:
                error = raises(Conflict, call)
                assert error.current == current  # the body an adapter sends with its 409
            assert w.mem.get(o, note.id) == current

    @case("get", OK, NOT_FOUND)
    def test_get_answers_only_what_the_envelope_may_see(
        self, memory_factory: MemoryFactory
    ) -> None:
        with World(memory_factory) as w:
            bobs, carols, shared = w.user_note(), w.user_note(w.CAROL), w.agent_note()
            assert w.mem.get(w.dm(), bobs.id) == bobs
            assert w.mem.get(w.dm(), shared.id) == shared
            raises(NotFound, w.mem.get, w.dm(), carols.id)
            raises(NotFound, w.mem.get, w.dm(), w.missing_id())
            raises(NotFound, w.mem.get, w.unpaired(), shared.id)

    @case("list", OK, DENIED)
    def test_list_shows_only_visible_notes(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            bobs, carols, shared = w.user_note(), w.user_note(w.CAROL), w.agent_note()
            gone = w.user_note(text="Uses vim.")
            w.mem.forget(w.dm(), gone.id)
            ids = [n.id for n in w.mem.list(w.dm())]
            assert ids == sorted([bobs.id, shared.id])
            assert gone.id in [n.id for n in w.mem.list(w.dm(), status=None)]
            assert [n.id for n in w.mem.list(w.dm(), status="forgotten")] == [gone.id]
            assert carols.id in [n.id for n in w.mem.list(w.owner())]
            raises(Denied, w.mem.list, w.dm(), scope="user", scope_id=w.CAROL)

    @case("history", OK, NOT_FOUND)
    def test_history_is_oldest_first_and_forgets_text(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            note = w.user_note()
            w.mem.pin(w.dm(), note.id)
            w.mem.forget(w.dm(), note.id)
            events = w.mem.history(w.dm(), note.id)
            assert [e.op for e in events] == ["remember", "pin", "forget"]
            assert all(getattr(e, "text", "") == "" for e in events)
            raises(NotFound, w.mem.history, w.dm(w.CAROL), note.id)
            raises(NotFound, w.mem.history, w.dm(), w.missing_id())

    @case("status_of", OK)
    def test_status_of_counts_expiry(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            expires = w.clock() + timedelta(days=1)
            note = w.mem.remember(w.dm(), "Is travelling.", expires_at=expires)
            assert w.mem.status_of(w.dm(), note) is Status.ACTIVE
            w.clock.advance(days=2)
            assert w.mem.status_of(w.dm(), note) is Status.EXPIRED
            assert note.id not in [n.id for n in w.mem.list(w.dm())]

    @case("tags", OK)
    def test_tags_count_visible_live_notes(self, memory_factory: MemoryFactory) -> None:
        with World(memory_factory) as w:
            w.mem.remember(w.dm(), "Prefers tea.", tags=["drinks"])
            w.mem.remember(w.dm(), "Prefers oat milk.", tags=["drinks", "diet"])
            w.mem.remember(w.dm(w.CAROL), "Prefers coffee.", tags=["drinks"])
            assert w.mem.tags(w.dm()) == {"diet": 1, "drinks": 2}
            assert w.mem.tags(w.owner()) == {"diet": 1, "drinks": 3}


__all__ = ["NoteCases"]

"""Tags: ``list(tag=...)``, ``recall(tag=...)`` and ``tags(ctx)`` counts, each within what
the context may see."""

from __future__ import annotations

from remem import Memory, RunContext

from .helpers import AGENT, dm_alice, dm_bob, explain, group, owner


def _seed(mem: Memory) -> dict[str, str]:
    ids = {
        "agent_garden": mem.remember(
            owner(), "Seeds are ordered in January.", scope="agent", tags=["garden", "ops"]
        ).id,
        "alice_garden": mem.remember(
            dm_alice(), "Alice grows tomatoes.", tags=["garden", "food"]
        ).id,
        "alice_food": mem.remember(dm_alice(), "Alice is vegetarian.", tags=["food"]).id,
        "alice_plain": mem.remember(dm_alice(), "Alice lives in Porto.").id,
        "bob_garden": mem.remember(dm_bob(), "Bob grows chillies.", tags=["garden"]).id,
        "channel_ops": mem.remember(
            dm_alice(), "This DM reviews the watering rota.", scope="channel", tags=["ops"]
        ).id,
    }
    return ids


def test_tags_are_normalized_and_sorted(mem: Memory) -> None:
    note = mem.remember(dm_alice(), "Alice bakes bread.", tags=["Food", "baking", "food"])
    assert note.tags == ("baking", "food")


def test_list_by_tag(mem: Memory) -> None:
    ids = _seed(mem)
    assert [n.id for n in mem.list(dm_alice(), tag="garden")] == sorted(
        [ids["agent_garden"], ids["alice_garden"]]
    )
    assert [n.id for n in mem.list(owner(), tag="garden")] == sorted(
        [ids["agent_garden"], ids["alice_garden"], ids["bob_garden"]]
    )
    assert mem.list(dm_alice(), tag="nothing") == []


def test_recall_by_tag(mem: Memory) -> None:
    ids = _seed(mem)
    rec = mem.recall(dm_alice(), tag="garden")
    assert {n.id for n in rec.notes} == {ids["agent_garden"], ids["alice_garden"]}
    # Notes without the tag are not even candidates; Bob's never are.
    assert set(explain(mem, rec.run_id).candidates) == {ids["agent_garden"], ids["alice_garden"]}
    rec = mem.recall(dm_alice(), "tomatoes vegetarian", tag="food")
    assert {n.id for n in rec.notes} == {ids["alice_garden"], ids["alice_food"]}
    assert mem.recall(RunContext.agent_only(AGENT), tag="food").notes == []
    # The tag narrows; it never widens (Alice's notes stay private in a group).
    rec = mem.recall(group(), tag="food")
    assert rec.notes == []
    assert set(dict(explain(mem, rec.run_id).excluded).values()) == {"private_in_group"}


def test_tag_counts_per_viewer(mem: Memory) -> None:
    _seed(mem)
    assert mem.tags(dm_alice()) == {"food": 2, "garden": 2, "ops": 2}
    assert mem.tags(dm_bob()) == {"garden": 2, "ops": 1}
    assert mem.tags(owner()) == {"food": 2, "garden": 3, "ops": 2}
    assert list(mem.tags(owner())) == sorted(mem.tags(owner()))


def test_tag_counts_follow_forget(mem: Memory) -> None:
    ids = _seed(mem)
    mem.forget(dm_alice(), ids["alice_food"])
    assert mem.tags(dm_alice())["food"] == 1
    assert [n.id for n in mem.list(dm_alice(), tag="food")] == [ids["alice_garden"]]

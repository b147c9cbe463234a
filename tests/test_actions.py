"""Governed actions through the public ``Memory`` API: write, read, change, forget, compact.

Every test runs on the fake clock from ``tests/conftest.py`` (fixture ``clock``)
in a fresh data directory (fixtures ``data_dir`` and ``mem``).
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from remem import (
    Conflict,
    Denied,
    InvalidInput,
    Memory,
    NotFound,
    Rejected,
    Role,
    RunContext,
    Status,
    StoreError,
    UnsupportedLog,
)
from remem.core.events import seal
from remem.core.ids import new_id

AGENT = "yuko"
ALICE = "discord:100"
BOB = "discord:200"
ADMIN = "discord:900"
DM_ALICE = "discord:dm-alice"
GENERAL = "discord:general"


def owner(agent: str = AGENT) -> RunContext:
    return RunContext.owner(agent)


def admin() -> RunContext:
    return RunContext.group(AGENT, GENERAL, ADMIN, role=Role.ADMIN)


def alice_dm() -> RunContext:
    return RunContext.dm(AGENT, DM_ALICE, ALICE)


def alice_general() -> RunContext:
    return RunContext.group(AGENT, GENERAL, ALICE)


def write_policy(data_dir: Path, text: str) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "remem.toml"
    path.write_text(text, encoding="utf-8")
    # Make sure a rewrite within the same clock tick is still seen as a change.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def files_containing(root: Path, needle: str) -> list[Path]:
    raw = needle.encode("utf-8")
    hits = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            if raw in path.read_bytes():
                hits.append(path)
    return hits


# -- remember, get, list ------------------------------------------------------------


def test_remember_then_get_and_list(mem: Memory, clock: Any) -> None:
    note = mem.remember(alice_dm(), "Prefers replies of one or two sentences.")
    assert note.id.startswith("note_")
    assert note.status is Status.ACTIVE
    assert note.agent == AGENT
    assert note.version == 1
    assert note.created_at == clock()
    assert note.source.author_id == ALICE
    assert note.source.channel_id == DM_ALICE
    assert mem.get(alice_dm(), note.id) == note
    assert [n.id for n in mem.list(alice_dm())] == [note.id]
    assert [n.id for n in mem.list(owner(), scope="user", scope_id=ALICE)] == [note.id]
    assert "remember" in note.receipt.lower() or "noted" in note.receipt.lower()


def test_text_is_normalized_on_write(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "  Prefers   tea\n over coffee. ")
    assert note.text == "Prefers tea over coffee."


@pytest.mark.parametrize(
    ("text", "kind", "scope", "scope_id"),
    [
        ("Prefers short answers.", "preference", "user", ALICE),
        ("Lives in Lisbon.", "fact", "user", ALICE),
        ("Prefers short answers.", None, "user", ALICE),
        ("The team decided to ship on Fridays.", "decision", "channel", GENERAL),
        ("Asked for the weekly report yesterday.", "interaction", "channel", GENERAL),
    ],
)
def test_scope_defaults(
    mem: Memory, text: str, kind: str | None, scope: str, scope_id: str
) -> None:
    note = mem.remember(alice_general(), text, kind=kind)
    assert (note.scope.value, note.scope_id) == (scope, scope_id)


def test_procedure_without_scope_is_invalid(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="scope='agent'"):
        mem.remember(admin(), "Weekly reports use the sales warehouse.", kind="procedure")
    note = mem.remember(
        admin(), "Weekly reports use the sales warehouse.", kind="procedure", scope="agent"
    )
    assert note.scope.value == "agent"


@pytest.mark.parametrize(
    "ctx",
    [
        owner(),
        RunContext.agent_only(AGENT),
        RunContext.system(AGENT, Role.CRON),
        RunContext.knowledge(AGENT),
    ],
    ids=["owner", "agent_only", "cron", "knowledge"],
)
def test_agent_scope_is_never_a_default(mem: Memory, ctx: RunContext) -> None:
    """Runs with neither a person nor a channel must name the scope; nothing falls to agent."""
    for kind in ("preference", "fact", "decision", "interaction"):
        with pytest.raises(InvalidInput, match="scope="):
            mem.remember(ctx, "Reports are due on Mondays.", kind=kind)
    assert mem.list(owner(), status=None) == []


def test_system_run_in_a_channel_defaults_to_the_channel(mem: Memory) -> None:
    cron = RunContext.system(AGENT, Role.CRON, channel=GENERAL)
    note = mem.remember(cron, "The nightly build is green.")
    assert (note.scope.value, note.scope_id) == ("channel", GENERAL)


# -- reinforcement, correction, flags ------------------------------------------------


def test_same_text_reinforces_instead_of_duplicating(mem: Memory) -> None:
    first = mem.remember(alice_dm(), "Prefers tea over coffee.")
    again = mem.remember(alice_dm(), "prefers TEA over coffee!")
    assert again.id == first.id
    assert again.evidence == 2
    assert again.version == first.version + 1
    assert len(mem.list(alice_dm())) == 1
    ops = [ev.op for ev in mem.history(alice_dm(), first.id)]
    assert ops == ["remember", "reinforce"]
    assert "already" in again.receipt


def test_no_duplicates_pile_up_behind_a_disabled_note(mem: Memory) -> None:
    old = mem.remember(alice_dm(), "Prefers tea over coffee.")
    mem.disable(alice_dm(), old.id)
    again = [mem.remember(alice_dm(), "Prefers tea over coffee.") for _ in range(3)]
    assert len({n.id for n in again}) == 1
    assert len(mem.list(alice_dm())) == 1


def test_same_text_in_another_scope_is_a_new_note(mem: Memory) -> None:
    mine = mem.remember(alice_general(), "Likes the blue theme.", scope="user")
    channel = mem.remember(alice_general(), "Likes the blue theme.", scope="channel")
    assert mine.id != channel.id
    assert mine.evidence == channel.evidence == 1


def test_correct_keeps_the_old_text_in_history(mem: Memory) -> None:
    note = mem.remember(alice_dm(), "Prefers daily updates.")
    fixed = mem.correct(alice_dm(), note.id, "Prefers weekly updates.")
    assert fixed.id == note.id
    assert fixed.text == "Prefers weekly updates."
    assert fixed.version == 2
    events = mem.history(alice_dm(), note.id)
    assert [ev.op for ev in events] == ["remember", "correct"]
    assert [getattr(ev, "text", None) for ev in events] == [
        "Prefers daily updates.",
        "Prefers weekly updates.",
    ]
    assert all(ev.actor == ALICE for ev in events)


def test_pin_unpin_disable_enable(mem: Memory) -> None:
    ctx = alice_dm()
    note = mem.remember(ctx, "Prefers metric units.")
    assert mem.pin(ctx, note.id).pinned is True
    assert mem.unpin(ctx, note.id).pinned is False
    disabled = mem.disable(ctx, note.id)
    assert disabled.status is Status.DISABLED
    assert mem.list(ctx) == []
    assert [n.id for n in mem.list(ctx, status="disabled")] == [note.id]
    assert note.id not in [n.id for n in mem.recall(ctx, "metric units").notes]
    enabled = mem.enable(ctx, note.id)
    assert enabled.status is Status.ACTIVE
    assert [n.id for n in mem.recall(ctx, "metric units").notes] == [note.id]
    ops = [ev.op for ev in mem.history(ctx, note.id)]
    assert ops == ["remember", "pin", "unpin", "disable", "enable"]


def test_forget_removes_the_text_everywhere_visible(mem: Memory) -> None:
    ctx = alice_dm()
    note = mem.remember(ctx, "Prefers the codename Bluebird.")
    gone = mem.forget(ctx, note.id)
    assert gone.status is Status.FORGOTTEN
    assert gone.text == ""
    assert mem.get(ctx, note.id).text == ""
    assert mem.list(ctx) == []
    listed = mem.list(ctx, status=None)
    assert [(n.id, n.text) for n in listed] == [(note.id, "")]
    assert all("Bluebird" not in getattr(ev, "text", "") for ev in mem.history(ctx, note.id))
    assert mem.recall(ctx, "Bluebird").notes == []
    # A forgotten note takes no further changes.
    with pytest.raises(InvalidInput):
        mem.pin(ctx, note.id)


def test_if_version_guards_against_stale_writes(mem: Memory) -> None:
    ctx = alice_dm()
    note = mem.remember(ctx, "Prefers email.")
    mem.correct(ctx, note.id, "Prefers chat.", if_version=1)
    with pytest.raises(Conflict, match="version 2"):
        mem.correct(ctx, note.id, "Prefers phone calls.", if_version=1)
    for action in ("pin", "disable", "forget"):
        with pytest.raises(Conflict):
            getattr(mem, action)(ctx, note.id, if_version=1)
    assert mem.get(ctx, note.id).text == "Prefers chat."
    assert mem.pin(ctx, note.id, if_version=2).version == 3
    assert mem.forget(ctx, note.id, if_version=3).status is Status.FORGOTTEN


# -- write policy: every reason code ----------------------------------------------------


def _rejected(mem: Memory, ctx: RunContext, text: str, **kw: object) -> str:
    before = len(mem.list(owner(), status=None))
    with pytest.raises(Rejected) as err:
        mem.remember(ctx, text, **kw)
    assert len(mem.list(owner(), status=None)) == before, "a rejected write wrote something"
    return err.value.reason


def test_reason_empty(mem: Memory) -> None:
    assert _rejected(mem, alice_dm(), "   \n ") == "empty"


def test_reason_too_long(mem: Memory) -> None:
    assert _rejected(mem, alice_dm(), "Prefers " + "very " * 200 + "long notes.") == "too_long"


def test_reason_secret_and_the_message_never_echoes_it(mem: Memory) -> None:
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    with pytest.raises(Rejected) as err:
        mem.remember(alice_dm(), f"Alice's OpenAI key is {key}")
    assert err.value.reason == "secret"
    assert key not in str(err.value)
    assert key[8:20] not in str(err.value)


def test_reason_kind_not_allowed(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, '[memory]\nkinds = ["preference", "fact"]\n')
    with Memory.open(data_dir, clock=clock) as mem:
        reason = _rejected(mem, alice_general(), "We ship on Fridays.", kind="decision")
        assert reason == "kind_not_allowed"
        assert mem.remember(alice_general(), "Prefers tea.").status is Status.ACTIVE


def test_reason_memory_off(mem: Memory) -> None:
    mem.set_channel_policy(admin(), GENERAL, memory=False)
    assert _rejected(mem, alice_general(), "We ship on Fridays.", kind="decision") == "memory_off"
    assert _rejected(mem, alice_general(), "Prefers tea.", scope="user") == "memory_off"
    # Another channel is unaffected.
    assert mem.remember(alice_dm(), "Prefers tea.").status is Status.ACTIVE


def test_reason_sensitive_for_inferred_notes_only(mem: Memory) -> None:
    text = "Seems to have anxiety before demos."
    assert _rejected(mem, alice_dm(), text, basis="inferred") == "sensitive"
    # What a person states about themselves, explicitly, may be remembered.
    assert mem.remember(alice_dm(), text, basis="explicit").status is Status.ACTIVE


def test_reason_policy_off_by_admin(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, '[memory]\ninferred = "off"\n')
    with Memory.open(data_dir, clock=clock) as mem:
        assert _rejected(mem, alice_dm(), "Likes jazz.", basis="inferred") == "policy_off"
        assert mem.remember(alice_dm(), "Likes jazz.").status is Status.ACTIVE


def test_reason_policy_off_by_the_participant(mem: Memory) -> None:
    mem.set_my_preferences(alice_dm(), inferred=False)
    assert _rejected(mem, alice_dm(), "Likes jazz.", basis="inferred") == "policy_off"
    # Nobody else can infer things about Alice either (an admin writing to her scope).
    reason = _rejected(mem, admin(), "Likes jazz.", basis="inferred", scope="user", scope_id=ALICE)
    assert reason == "policy_off"
    # Bob did not opt out.
    bob = RunContext.dm(AGENT, "discord:dm-bob", BOB)
    assert mem.remember(bob, "Likes jazz.", basis="inferred").status is Status.PENDING


def test_reason_scope_full(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, "[memory]\nmax_notes_per_scope = 2\n")
    with Memory.open(data_dir, clock=clock) as mem:
        first = mem.remember(alice_dm(), "Prefers tea.")
        mem.remember(alice_dm(), "Prefers cats.")
        assert _rejected(mem, alice_dm(), "Prefers rain.") == "scope_full"
        # Reinforcing an existing note still works when the scope is full ...
        assert mem.remember(alice_dm(), "Prefers tea.").evidence == 2
        # ... another scope has its own room, and forgetting makes room.
        assert mem.remember(alice_general(), "We ship on Fridays.", kind="decision")
        mem.forget(alice_dm(), first.id)
        assert mem.remember(alice_dm(), "Prefers rain.").status is Status.ACTIVE


# -- bad input -------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["42", "note-123", "note_short", "run_01J00000000000000000000000"])
def test_malformed_note_id_is_invalid_input(mem: Memory, bad: str) -> None:
    for call in (
        lambda: mem.get(owner(), bad),
        lambda: mem.forget(owner(), bad),
        lambda: mem.correct(owner(), bad, "x"),
    ):
        with pytest.raises(InvalidInput, match="not a note id"):
            call()


def test_unknown_scope_kind_basis_status_list_the_choices(mem: Memory) -> None:
    with pytest.raises(InvalidInput) as err:
        mem.remember(alice_dm(), "Prefers tea.", scope="team")
    assert "agent, channel, user" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        mem.remember(alice_dm(), "Prefers tea.", kind="opinion")
    assert "preference, fact, decision, interaction, procedure" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        mem.remember(alice_dm(), "Prefers tea.", basis="guessed")
    assert "explicit, inferred" in str(err.value)
    with pytest.raises(InvalidInput) as err:
        mem.list(alice_dm(), status="alive")
    assert "active" in str(err.value)
    with pytest.raises(InvalidInput):
        mem.list(alice_dm(), scope="team")


def test_a_note_id_of_another_agent_is_not_found(mem: Memory) -> None:
    note = mem.remember(owner(), "Signs replies with a wave.", scope="agent")
    with pytest.raises(NotFound):
        mem.get(owner("kiko"), note.id)
    with pytest.raises(NotFound):
        mem.forget(owner("kiko"), note.id)
    with pytest.raises(NotFound):
        mem.get(owner(), new_id("note"))


def test_non_context_first_argument_is_invalid(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="RunContext"):
        mem.remember("yuko", "Prefers tea.")


# -- compaction ------------------------------------------------------------------------


def test_compact_erases_forgotten_and_expired_content_from_every_file(
    mem: Memory, data_dir: Path, clock: Any
) -> None:
    ctx = alice_dm()
    keep = mem.remember(ctx, "Prefers the codename Kestrel.")
    secret = mem.remember(ctx, "Prefers the codename Bluebird.")
    mem.correct(ctx, secret.id, "Prefers the codename Bluebird Two.")
    mem.remember(ctx, "Prefers the codename Bluebird Two.")  # reinforcement event
    soon = clock() + timedelta(hours=1)
    expiring = mem.remember(ctx, "Prefers the codename Osprey.", expires_at=soon)
    mem.recall(ctx, "codename")  # leaves a trace naming both notes
    mem.forget(ctx, secret.id)
    clock.advance(hours=2)
    assert mem.status_of(ctx, mem.get(owner(), expiring.id)) is Status.EXPIRED

    report = mem.compact(owner())
    assert sorted(report.notes_erased) == sorted([secret.id, expiring.id])
    assert report.events_after < report.events_before

    for needle in ("Bluebird", "Osprey"):
        assert files_containing(data_dir, needle) == [], needle
    assert files_containing(data_dir, "Kestrel"), "live notes must survive compaction"

    # An erased marker keeps the ids (the audit trail says the note existed), no content.
    log = data_dir / "agents" / AGENT / "memory.jsonl"
    records = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    markers = {r["note_id"]: r for r in records if r["op"] == "erased"}
    assert set(markers) == {secret.id, expiring.id}
    assert markers[secret.id]["final_status"] == "forgotten"
    assert markers[expiring.id]["final_status"] == "expired"
    assert markers[secret.id]["eids"]
    with pytest.raises(NotFound):
        mem.get(owner(), secret.id)
    assert [n.id for n in mem.list(owner())] == [keep.id]

    # A second Memory on the same directory reads the compacted log happily.
    with Memory.open(data_dir) as other:
        assert [n.id for n in other.list(owner())] == [keep.id]


def test_compact_is_owner_only(mem: Memory) -> None:
    with pytest.raises(Denied):
        mem.compact(admin())
    assert mem.compact(owner()).notes_erased == []


# -- the log on disk -------------------------------------------------------------------


def test_a_record_from_a_newer_schema_is_refused_clearly(data_dir: Path) -> None:
    with Memory.open(data_dir) as mem:
        mem.remember(owner(), "Signs replies with a wave.", scope="agent")
    log = data_dir / "agents" / AGENT / "memory.jsonl"
    record = {
        "op": "remember",
        "v": 99,
        "eid": new_id("ev"),
        "ts": "2030-01-01T00:00:00Z",
        "id": new_id("note"),
        "scope": "agent",
        "scope_id": None,
        "kind": "fact",
        "note": "From the future.",
        "basis": "explicit",
    }
    with log.open("ab") as fh:
        fh.write(seal(orjson.dumps(record)))
    with pytest.raises(UnsupportedLog) as err, Memory.open(data_dir) as mem:
        mem.list(owner())
    message = str(err.value)
    assert "v99" in message or "99" in message
    assert "newer" in message
    assert "upgrade" in message
    assert "memory.jsonl" in message


def test_opening_a_regular_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "not-a-dir"
    path.write_text("hello")
    with pytest.raises(StoreError, match="not a directory"):
        Memory.open(path)
    with pytest.raises(StoreError):
        Memory.open(str(path))


def test_data_survives_reopening(data_dir: Path, clock: Any) -> None:
    with Memory.open(data_dir, clock=clock) as mem:
        note = mem.remember(alice_dm(), "Prefers tea.")
        mem.pin(alice_dm(), note.id)
        mem.set_channel_policy(admin(), GENERAL, stewards=[BOB])
    with Memory.open(data_dir, clock=clock) as again:
        got = again.get(alice_dm(), note.id)
        assert (got.text, got.pinned, got.version) == ("Prefers tea.", True, 2)
        assert again.channel_policy(owner(), GENERAL)["stewards"] == [BOB]


def test_two_instances_see_each_others_writes(data_dir: Path, clock: Any) -> None:
    a = Memory.open(data_dir, clock=clock)
    b = Memory.open(data_dir, clock=clock)
    try:
        first = a.remember(alice_dm(), "Prefers tea.")
        assert b.get(alice_dm(), first.id).text == "Prefers tea."
        # b's write catches up first: the same text reinforces a's note, no duplicate.
        again = b.remember(alice_dm(), "Prefers tea.")
        assert again.id == first.id and again.evidence == 2
        b.correct(alice_dm(), first.id, "Prefers green tea.")
        assert a.get(alice_dm(), first.id).text == "Prefers green tea."
        # a's stale version is detected against b's write.
        with pytest.raises(Conflict):
            a.pin(alice_dm(), first.id, if_version=1)
        a.forget(alice_dm(), first.id)
        a.compact(owner())
        assert b.list(alice_dm(), status=None) == []
        second = b.remember(alice_dm(), "Prefers coffee.")
        assert [n.id for n in a.list(alice_dm())] == [second.id]
    finally:
        a.close()
        b.close()


# -- agents ----------------------------------------------------------------------------


def test_agents_are_listed_after_their_first_write(mem: Memory) -> None:
    assert mem.agents() == []
    mem.remember(owner("yuko"), "Signs replies with a wave.", scope="agent")
    mem.remember(owner("kiko"), "Signs replies with a bow.", scope="agent")
    assert mem.agents() == ["kiko", "yuko"]


def test_trash_agent_moves_the_directory(mem: Memory, data_dir: Path) -> None:
    note = mem.remember(owner(), "Signs replies with a wave.", scope="agent")
    mem.remember(owner("kiko"), "Signs replies with a bow.", scope="agent")
    with pytest.raises(Denied):
        mem.trash_agent(admin(), AGENT)
    where = Path(mem.trash_agent(owner(), AGENT))
    assert where.parent == data_dir / ".trash"
    assert where.name.startswith(f"{AGENT}-") and len(where.name) > len(AGENT) + 1
    assert (where / "memory.jsonl").is_file()
    assert not (data_dir / "agents" / AGENT).exists()
    assert mem.agents() == ["kiko"]
    with pytest.raises(NotFound):
        mem.get(owner(), note.id)


def test_trash_agent_cannot_reach_another_agent(mem: Memory, data_dir: Path) -> None:
    mem.remember(owner("yuko"), "Signs replies with a wave.", scope="agent")
    with pytest.raises(Denied, match="other_agent"):
        mem.trash_agent(owner("kiko"), "yuko")
    assert (data_dir / "agents" / "yuko" / "memory.jsonl").is_file()

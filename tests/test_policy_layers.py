"""Policy layers: admin (``[memory]``) → agent (``[agents.<name>.memory]``) → channel →
participant. For every pair the stricter value wins, and a looser value is clamped
and reported; ``remem.toml`` is validated and reloaded live."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

import pytest

from remem import ConfigError, Denied, InvalidInput, Memory, Rejected, Role, RunContext, Status

AGENT = "yuko"
ALICE = "discord:100"
BOB = "discord:200"
STEWARD = "discord:300"
ADMIN = "discord:900"
DM_ALICE = "discord:dm-alice"
DM_ALICE_2 = "discord:dm-alice-2"
GENERAL = "discord:general"
RANDOM = "discord:random"
PREF, FACT, DECISION = "preference", "fact", "decision"


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def admin() -> RunContext:
    return RunContext.group(AGENT, GENERAL, ADMIN, role=Role.ADMIN)


def member(actor: str = ALICE, channel: str = GENERAL) -> RunContext:
    return RunContext.group(AGENT, channel, actor)


def alice_dm(channel: str = DM_ALICE) -> RunContext:
    return RunContext.dm(AGENT, channel, ALICE)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return str(value)


def write_policy(
    data_dir: Path, admin_settings: dict[str, Any], agent_settings: dict[str, Any]
) -> None:
    lines = ["[memory]"] + [f"{k} = {toml_value(v)}" for k, v in admin_settings.items()]
    lines += [f"[agents.{AGENT}.memory]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in agent_settings.items()]
    write_text(data_dir / "remem.toml", "\n".join(lines) + "\n")


_tick = [0]


def write_text(path: Path, text: str) -> None:
    """Write a file and give it a distinct mtime (a live reload must notice every edit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _tick[0] += 1
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + _tick[0] * 1_000_000))


def effective(mem: Memory, ctx: RunContext, key: str) -> tuple[Any, str]:
    item = mem.effective_policy(ctx)["values"][key]
    return item["value"], item["layer"]


def normalized(value: Any) -> Any:
    return sorted(value) if isinstance(value, list) else value


# -- admin vs agent ---------------------------------------------------------------------

# key, admin value, agent value, effective value, its layer, clamped?
ADMIN_VS_AGENT = [
    ("recall_max_notes", 5, 50, 5, "admin", True),
    ("recall_max_notes", 50, 5, 5, "agent", False),
    ("recall_max_chars", 2000, 9000, 2000, "admin", True),
    ("kinds", [PREF, FACT], [PREF, FACT, DECISION], [FACT, PREF], "admin", True),
    ("kinds", [PREF, FACT, DECISION], [PREF], [PREF], "agent", False),
    ("kinds", [PREF, FACT], [PREF, DECISION], [PREF], "agent", True),  # overlap: both hold
    ("inferred", "review", "auto", "review", "admin", True),
    ("inferred", "evidence:3", "evidence:2", "evidence:3", "admin", True),
    ("inferred", "evidence:2", "off", "off", "agent", False),
    ("retention_days", 30, 90, 30, "admin", True),
    ("retention_days", 90, 30, 30, "agent", False),
    ("enabled", False, True, False, "admin", True),
    ("enabled", True, False, False, "agent", False),
    ("cross_channel_user_recall", "off", "on", "off", "admin", True),
    ("cross_channel_user_recall", "opt_in", "off", "off", "agent", False),
    ("agent_writes", "review", "auto", "review", "admin", True),
    ("max_notes_per_scope", 10, 100, 10, "admin", True),
]


@pytest.mark.parametrize(
    ("key", "admin_value", "agent_value", "want", "layer", "clamped"), ADMIN_VS_AGENT
)
def test_admin_vs_agent_stricter_wins(
    data_dir: Path,
    key: str,
    admin_value: Any,
    agent_value: Any,
    want: Any,
    layer: str,
    clamped: bool,
) -> None:
    write_policy(data_dir, {key: admin_value}, {key: agent_value})
    with Memory.open(data_dir) as mem:
        value, source = effective(mem, owner(), key)
        assert normalized(value) == normalized(want)
        assert source == layer
        report = mem.effective_policy(owner())["clamped"]
        lines = [c for c in report if c.startswith(f"{key}=")]
        if clamped:
            assert len(lines) == 1, report
            assert "from agent is looser than" in lines[0]
            assert "from admin" in lines[0]
        else:
            assert lines == []


def test_other_agents_are_not_affected_by_an_agent_overlay(data_dir: Path) -> None:
    write_policy(data_dir, {"recall_max_notes": 10}, {"recall_max_notes": 3})
    with Memory.open(data_dir) as mem:
        assert effective(mem, owner(), "recall_max_notes") == (3, "agent")
        assert effective(mem, RunContext.owner("kiko"), "recall_max_notes") == (10, "admin")
        assert effective(mem, owner(), "max_note_chars") == (500, "default")


def test_agent_kinds_restriction_is_enforced_even_when_sets_overlap(
    data_dir: Path, clock: Any
) -> None:
    write_policy(data_dir, {"kinds": ["preference", "fact"]}, {"kinds": ["preference", "decision"]})
    with Memory.open(data_dir, clock=clock) as mem:
        for kind in ("fact", "decision"):
            with pytest.raises(Rejected) as err:
                mem.remember(alice_dm(), "Lives in Lisbon.", kind=kind)
            assert err.value.reason == "kind_not_allowed"
        assert mem.remember(alice_dm(), "Prefers tea.", kind="preference")


def test_effective_limits_are_enforced(data_dir: Path, clock: Any) -> None:
    write_policy(data_dir, {"recall_max_notes": 3}, {"recall_max_notes": 10, "enabled": True})
    with Memory.open(data_dir, clock=clock) as mem:
        for i in range(6):
            mem.remember(alice_dm(), f"Prefers option number {i}.")
        assert len(mem.recall(alice_dm(), "option").notes) == 3


# -- agent vs channel -------------------------------------------------------------------

# channel key, agent (toml) key, agent value, channel value, effective, layer, clamped?
AGENT_VS_CHANNEL = [
    ("recall_max_notes", "recall_max_notes", 5, 50, 5, "agent", True),
    ("recall_max_notes", "recall_max_notes", 50, 5, 5, "channel", False),
    ("recall_max_chars", "recall_max_chars", 3000, 1000, 1000, "channel", False),
    ("kinds", "kinds", [PREF, DECISION], [PREF, DECISION, FACT], [DECISION, PREF], "agent", True),
    ("kinds", "kinds", [PREF, DECISION], [DECISION], [DECISION], "channel", False),
    ("kinds", "kinds", [PREF, DECISION], [PREF, FACT], [PREF], "channel", True),
    ("inferred", "inferred", "review", "auto", "review", "agent", True),
    ("inferred", "inferred", "auto", "off", "off", "channel", False),
    ("retention_days", "retention_days", 30, 90, 30, "agent", True),
    ("retention_days", "retention_days", 90, 7, 7, "channel", False),
    ("memory", "enabled", False, True, False, "agent", True),
    ("memory", "enabled", True, False, False, "channel", False),
]


@pytest.mark.parametrize(
    ("key", "field", "agent_value", "channel_value", "want", "layer", "clamped"),
    AGENT_VS_CHANNEL,
)
def test_agent_vs_channel_stricter_wins(
    data_dir: Path,
    key: str,
    field: str,
    agent_value: Any,
    channel_value: Any,
    want: Any,
    layer: str,
    clamped: bool,
) -> None:
    write_policy(data_dir, {}, {field: agent_value})
    with Memory.open(data_dir) as mem:
        change = mem.set_channel_policy(admin(), GENERAL, **{key: channel_value})
        assert normalized(change.stored[key]) == normalized(channel_value)
        assert normalized(change.effective[field]["value"]) == normalized(want)
        assert change.effective[field]["layer"] == layer
        value, source = effective(mem, member(), field)
        assert (normalized(value), source) == (normalized(want), layer)
        if clamped:
            assert len(change.notices) == 1, change.notices
            assert change.notices[0].startswith(f"{field}=")
            assert "from channel is looser than" in change.notices[0]
            assert change.notices[0] in mem.effective_policy(member())["clamped"]
        else:
            assert change.notices == []
        # Another channel is untouched by this channel's policy.
        other_value, other_layer = effective(mem, member(channel=RANDOM), field)
        assert other_layer == "agent"
        assert normalized(other_value) == normalized(agent_value)


def test_channel_policy_is_enforced_on_writes_and_recall(mem: Memory) -> None:
    mem.set_channel_policy(admin(), GENERAL, kinds=["decision"], recall_max_notes=2)
    with pytest.raises(Rejected) as err:
        mem.remember(member(), "Prefers tea.", scope="user")
    assert err.value.reason == "kind_not_allowed"
    for i in range(4):
        mem.remember(member(), f"The team decided item {i}.", kind="decision")
    assert len(mem.recall(member(), "decided").notes) == 2
    # In another channel the agent's defaults apply.
    assert mem.remember(member(channel=RANDOM), "Prefers tea.", scope="user")


def test_invalid_channel_settings_name_the_key(mem: Memory) -> None:
    with pytest.raises(InvalidInput, match="memroy"):
        mem.set_channel_policy(admin(), GENERAL, memroy=False)
    with pytest.raises(InvalidInput, match="inferred"):
        mem.set_channel_policy(admin(), GENERAL, inferred="sometimes")
    with pytest.raises(InvalidInput, match="recall_max_notes"):
        mem.set_channel_policy(admin(), GENERAL, recall_max_notes=0)
    with pytest.raises(InvalidInput):
        mem.set_channel_policy(admin(), GENERAL)
    assert mem.channel_policy(owner(), GENERAL) == {}


# -- channel vs participant -------------------------------------------------------------


def test_participant_consent_cannot_loosen_a_channel_that_turned_inference_off(
    mem: Memory,
) -> None:
    mem.set_channel_policy(admin(), DM_ALICE, inferred="off")
    change = mem.set_my_preferences(alice_dm(), inferred=True)
    assert change.stored == {"inferred": True}
    assert any("inferred" in n and "off" in n for n in change.notices), change.notices
    report = mem.effective_policy(alice_dm())
    assert report["values"]["inferred"] == {"value": "off", "layer": "channel"}
    assert report["values"]["my_inferred"] == {"value": True, "layer": "participant"}
    assert any(c.startswith("my_inferred=true") for c in report["clamped"]), report["clamped"]
    with pytest.raises(Rejected) as err:
        mem.remember(alice_dm(), "Likes jazz.", basis="inferred")
    assert err.value.reason == "policy_off"


def test_participant_opt_out_beats_a_permissive_channel(mem: Memory) -> None:
    mem.set_channel_policy(admin(), GENERAL, inferred="auto")
    assert mem.remember(member(BOB), "Likes jazz.", basis="inferred").status is Status.ACTIVE
    change = mem.set_my_preferences(member(), inferred=False)
    assert change.notices == []
    assert mem.effective_policy(member())["values"]["my_inferred"]["value"] is False
    with pytest.raises(Rejected) as err:
        mem.remember(member(), "Likes jazz.", basis="inferred")
    assert err.value.reason == "policy_off"
    # Explicit statements are still welcome; the opt-out is about inference.
    assert mem.remember(member(), "Likes jazz.").status is Status.ACTIVE


def _cross_channel_reason(mem: Memory, note_id: str) -> str | None:
    """Recall in Alice's *other* DM; the reason her first DM's note is excluded, if it is."""
    recall = mem.recall(alice_dm(DM_ALICE_2), "codename")
    if note_id in [n.id for n in recall.notes]:
        return None
    return dict(mem.explain(owner(), recall.run_id).excluded)[note_id]


@pytest.mark.parametrize("mode", [None, "opt_in"])
def test_cross_channel_opt_in_needs_the_persons_consent(
    data_dir: Path, clock: Any, mode: str | None
) -> None:
    write_policy(data_dir, {"cross_channel_user_recall": mode} if mode else {}, {})
    with Memory.open(data_dir, clock=clock) as mem:
        note = mem.remember(alice_dm(), "Prefers the codename Kestrel.")
        assert _cross_channel_reason(mem, note.id) == "cross_channel"
        change = mem.set_my_preferences(alice_dm(), cross_channel=True)
        assert change.notices == []
        assert _cross_channel_reason(mem, note.id) is None
        mem.set_my_preferences(alice_dm(), cross_channel=False)
        assert _cross_channel_reason(mem, note.id) == "cross_channel"


def test_cross_channel_off_by_admin_ignores_consent_and_says_so(data_dir: Path) -> None:
    write_policy(data_dir, {"cross_channel_user_recall": "off"}, {})
    with Memory.open(data_dir) as mem:
        note = mem.remember(alice_dm(), "Prefers the codename Kestrel.")
        change = mem.set_my_preferences(alice_dm(), cross_channel=True)
        assert any("cross-channel" in n and "off" in n for n in change.notices), change.notices
        assert _cross_channel_reason(mem, note.id) == "cross_channel"
        report = mem.effective_policy(alice_dm())
        assert any(c.startswith("my_cross_channel=true") for c in report["clamped"])


def test_cross_channel_on_by_admin_is_refused_by_the_person(data_dir: Path) -> None:
    write_policy(data_dir, {"cross_channel_user_recall": "on"}, {})
    with Memory.open(data_dir) as mem:
        note = mem.remember(alice_dm(), "Prefers the codename Kestrel.")
        assert _cross_channel_reason(mem, note.id) is None
        mem.set_my_preferences(alice_dm(), cross_channel=False)
        assert _cross_channel_reason(mem, note.id) == "cross_channel"
        # The same channel is never cross-channel.
        assert note.id in [n.id for n in mem.recall(alice_dm(), "codename").notes]


# -- effective_policy -------------------------------------------------------------------


def test_effective_policy_reports_each_layer(data_dir: Path) -> None:
    write_policy(data_dir, {"recall_max_chars": 4000}, {"recall_max_notes": 12})
    with Memory.open(data_dir) as mem:
        mem.set_channel_policy(admin(), GENERAL, retention_days=14, stewards=[STEWARD])
        mem.set_my_preferences(member(), cross_channel=True)
        report = mem.effective_policy(member())
        values = report["values"]
        assert values["recall_max_chars"] == {"value": 4000, "layer": "admin"}
        assert values["recall_max_notes"] == {"value": 12, "layer": "agent"}
        assert values["retention_days"] == {"value": 14, "layer": "channel"}
        assert values["max_note_chars"] == {"value": 500, "layer": "default"}
        assert values["my_cross_channel"] == {"value": True, "layer": "participant"}
        assert report["stewards"] == [STEWARD]
        assert report["clamped"] == []
        assert report["warnings"] == []
        with pytest.raises(Denied):
            mem.effective_policy(RunContext.group(AGENT, GENERAL, "x:1", role=Role.UNPAIRED))


# -- remem.toml: validation and live reload -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[memory\nrecall_max_notes = 5\n", "not valid TOML"),
        ("[memory]\nrecal_max_notes = 5\n", "recal_max_notes"),
        ("[agents.yuko.memory]\nretention = 5\n", "retention"),
        ("[memory]\nrecall_max_notes = 'five'\n", "recall_max_notes"),
        ("[memory]\ninferred = 'sometimes'\n", "inferred"),
        ("[memory]\nkinds = ['preference', 'gossip']\n", "kinds"),
        ("[memroy]\nenabled = true\n", "memroy"),
        ("[agents.yuko]\nenabled = true\n", "agents.yuko"),
    ],
)
def test_a_broken_policy_file_is_an_error_at_open(data_dir: Path, text: str, needle: str) -> None:
    write_text(data_dir / "remem.toml", text)
    with pytest.raises(ConfigError) as err:
        Memory.open(data_dir)
    assert needle in str(err.value)


def test_edits_apply_live_and_a_broken_edit_keeps_the_last_good_policy(data_dir: Path) -> None:
    path = data_dir / "remem.toml"
    write_text(path, "[memory]\nrecall_max_notes = 5\n")
    with Memory.open(data_dir) as mem:
        assert effective(mem, owner(), "recall_max_notes") == (5, "admin")
        write_text(path, "[memory]\nrecall_max_notes = 3\n")
        assert effective(mem, owner(), "recall_max_notes") == (3, "admin")

        write_text(path, "[memory]\nrecall_max_notes = 3\nbogus_key = 1\n")
        report = mem.effective_policy(owner())
        assert report["values"]["recall_max_notes"]["value"] == 3
        assert len(report["warnings"]) == 1
        assert "bogus_key" in report["warnings"][0]
        assert "last good policy" in report["warnings"][0]

        write_text(path, "[memory\n")
        assert effective(mem, owner(), "recall_max_notes") == (3, "admin")
        assert mem.effective_policy(owner())["warnings"]

        write_text(path, "[memory]\nrecall_max_notes = 7\n")
        report = mem.effective_policy(owner())
        assert report["values"]["recall_max_notes"]["value"] == 7
        assert report["warnings"] == []

        path.unlink()
        assert effective(mem, owner(), "recall_max_notes") == (20, "default")


def test_a_live_edit_changes_what_is_enforced(data_dir: Path, clock: Any) -> None:
    path = data_dir / "remem.toml"
    write_text(path, "[memory]\nenabled = true\n")
    with Memory.open(data_dir, clock=clock) as mem:
        assert mem.remember(alice_dm(), "Prefers tea.")
        write_text(path, "[memory]\nenabled = false\n")
        with pytest.raises(Rejected) as err:
            mem.remember(alice_dm(), "Prefers coffee.")
        assert err.value.reason == "memory_off"


def test_a_same_size_edit_within_one_mtime_tick_is_reloaded(data_dir: Path) -> None:
    path = data_dir / "remem.toml"
    write_text(path, "[memory]\nrecall_max_notes = 5\n")
    with Memory.open(data_dir) as mem:
        assert effective(mem, owner(), "recall_max_notes") == (5, "admin")
        before = path.stat()
        path.write_text("[memory]\nrecall_max_notes = 3\n", encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same tick
        assert effective(mem, owner(), "recall_max_notes") == (3, "admin")


# -- who may set what ---------------------------------------------------------------------


def test_members_cannot_set_channel_policy(mem: Memory) -> None:
    for channel in (GENERAL, RANDOM):
        with pytest.raises(Denied):
            mem.set_channel_policy(member(), channel, memory=False)
    assert mem.channel_policy(owner(), GENERAL) == {}
    assert mem.channel_policy(owner(), RANDOM) == {}


def test_a_steward_manages_only_their_channel_and_cannot_appoint(mem: Memory) -> None:
    mem.set_channel_policy(admin(), GENERAL, stewards=[STEWARD])
    steward = member(STEWARD)
    mem.set_channel_policy(steward, GENERAL, recall_max_notes=10)
    with pytest.raises(Denied):
        mem.set_channel_policy(steward, RANDOM, recall_max_notes=10)
    with pytest.raises(Denied):
        mem.set_channel_policy(steward, GENERAL, stewards=[STEWARD, BOB])
    with pytest.raises(Denied):
        mem.set_channel_policy(steward, GENERAL, memory=False, stewards=[BOB])
    stored = mem.channel_policy(owner(), GENERAL)
    assert stored == {"recall_max_notes": 10, "stewards": [STEWARD]}
    # Stewardship of #general gives nothing in #random.
    with pytest.raises(Denied):
        mem.set_channel_policy(member(STEWARD, RANDOM), RANDOM, memory=False)


def test_a_steward_cannot_exceed_admin_limits(data_dir: Path) -> None:
    write_policy(data_dir, {"recall_max_notes": 5, "inferred": "review", "retention_days": 30}, {})
    with Memory.open(data_dir) as mem:
        mem.set_channel_policy(admin(), GENERAL, stewards=[STEWARD])
        change = mem.set_channel_policy(
            member(STEWARD), GENERAL, recall_max_notes=50, inferred="auto", retention_days=365
        )
        assert len(change.notices) == 3, change.notices
        for key in ("recall_max_notes", "inferred", "retention_days"):
            assert any(n.startswith(f"{key}=") for n in change.notices), key
        assert effective(mem, member(), "recall_max_notes") == (5, "admin")
        assert effective(mem, member(), "inferred") == ("review", "admin")
        assert effective(mem, member(), "retention_days") == (30, "admin")
        # Tuning down is fine.
        change = mem.set_channel_policy(member(STEWARD), GENERAL, recall_max_notes=3)
        assert effective(mem, member(), "recall_max_notes") == (3, "channel")


def test_set_my_preferences_only_ever_affects_the_speaker(mem: Memory) -> None:
    params = set(inspect.signature(Memory.set_my_preferences).parameters)
    assert params == {"self", "ctx", "inferred", "cross_channel", "tool_writes"}, (
        "no way to name another user"
    )
    mem.set_my_preferences(member(), inferred=False, cross_channel=True)
    bob = member(BOB)
    assert "my_inferred" not in mem.effective_policy(bob)["values"]
    assert mem.remember(bob, "Likes jazz.", basis="inferred").status is Status.PENDING
    with pytest.raises(Rejected):
        mem.remember(member(), "Likes jazz.", basis="inferred")
    # An admin's choices are about the admin, too.
    mem.set_my_preferences(admin(), inferred=False)
    assert mem.remember(bob, "Likes blues.", basis="inferred").status is Status.PENDING


@pytest.mark.parametrize(
    "ctx",
    [
        RunContext.system(AGENT, Role.CRON, channel=GENERAL),
        RunContext.task(AGENT, GENERAL),
        RunContext.owner(AGENT),
        RunContext.group(AGENT, GENERAL, "x:1", role=Role.UNPAIRED),
    ],
    ids=["cron", "task", "owner", "unpaired"],
)
def test_only_people_have_choices_about_themselves(mem: Memory, ctx: RunContext) -> None:
    with pytest.raises(Denied):
        mem.set_my_preferences(ctx, inferred=False)


def test_preference_values_must_be_booleans(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.set_my_preferences(member(), inferred="no")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        mem.set_my_preferences(member())

"""Running memory tool calls: receipts and the turn's writes, refusals rendered as results
(the same errors as through ``Memory``), identity smuggling, forget by number or quote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from remem import (
    Denied,
    InvalidInput,
    Memory,
    Rejected,
    RememError,
    RunContext,
    Status,
    StoreError,
)
from remem.tools import ToolResult

AGENT = "yuko"
BOB, CAROL = "user:bob", "user:carol"


def dm(user: str = BOB, run_id: str | None = None) -> RunContext:
    return RunContext.dm(AGENT, f"dm:{user}", user, run_id=run_id)


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def test_every_tool_write_has_a_receipt_and_the_turn_lists_its_writes(mem: Memory) -> None:
    ctx = dm()
    first = mem.run_tool(ctx, "remember", {"fact": "Prefers replies in French."})
    second = mem.run_tool(
        ctx, "remember", {"fact": "This chat is about the move.", "about": "conversation"}
    )
    for result in (first, second):
        assert not result.is_error and result.code is None
        assert len(result.notices) == 1 and result.notices[0].startswith("Noted")
    assert [w.note.text for w in second.writes] == [
        "Prefers replies in French.",
        "This chat is about the move.",
    ]
    assert [(w.note.scope.value, w.note.scope_id) for w in second.writes] == [
        ("user", BOB),
        ("channel", f"dm:{BOB}"),
    ]
    chip = mem.writes(ctx, ctx.run_id)  # what the host's "see what I remember" chip lists
    assert [w.note.id for w in chip] == [w.note.id for w in second.writes]
    assert [w.receipt for w in chip] == [first.notices[0], second.notices[0]]
    for written in chip:
        note = written.note
        assert note.basis.value == "inferred" and note.source.via == "tool"
        assert note.status is Status.ACTIVE and note.source.run_id == ctx.run_id
    again = mem.run_tool(ctx, "remember", {"fact": "Prefers replies in French."})
    assert again.text.startswith("already remembered") and again.notices[0].startswith(
        "Noted again"
    )


def test_the_log_line_of_a_tool_write_names_the_tool_source(mem: Memory, data_dir: Path) -> None:
    mem.remember(dm(), "Prefers tea.", scope="user")
    mem.run_tool(dm(), "remember", {"fact": "Prefers oolong."})
    log = (data_dir / "agents" / AGENT / "memory.jsonl").read_text().splitlines()
    lines = [line for line in log if '"op":"remember"' in line]  # not the DM's kind
    assert '"via"' not in lines[0]  # a host's own write keeps the four keys it always had
    assert '"via":"tool"' in lines[1] and '"basis":"inferred"' in lines[1]
    with Memory.open(data_dir) as again:
        assert [n.source.via for n in again.list(owner())] == [None, "tool"]


def test_tool_writes_wait_for_review_when_policy_says_so(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "remem.toml").write_text('[memory]\ntool_writes = "review"\n')
    with Memory.open(data_dir, embedder=None) as mem:
        result = mem.run_tool(dm(), "remember", {"fact": "Prefers oolong."})
        assert not result.is_error and result.text.startswith("saved for review")
        (note,) = mem.pending(dm())
        assert note.status is Status.PENDING and result.writes[0].note.id == note.id


def test_a_participant_may_require_review_of_tool_writes_in_their_turns(mem: Memory) -> None:
    change = mem.set_my_preferences(dm(), tool_writes="review")
    assert change.stored == {"tool_writes": "review"}
    held = mem.run_tool(dm(), "remember", {"fact": "Prefers oolong."})
    assert held.text.startswith("saved for review") and held.notices[0].startswith("I'd like")
    assert [n.text for n in mem.pending(dm())] == ["Prefers oolong."]
    policy = mem.effective_policy(dm())["values"]
    assert policy["my_tool_writes"] == {"value": "review", "layer": "participant"}
    carols = mem.run_tool(dm(CAROL), "remember", {"fact": "Prefers mint."})  # only Bob chose
    assert carols.text.startswith("remembered")
    mem.set_my_preferences(dm(), tool_writes="announce")
    assert mem.run_tool(dm(), "remember", {"fact": "Prefers chai."}).text.startswith("remembered")
    with pytest.raises(InvalidInput, match="tool_writes must be"):
        mem.set_my_preferences(dm(), tool_writes="never")


def test_the_default_announces_tool_writes_though_inferred_memory_is_reviewed(
    mem: Memory,
) -> None:
    assert mem.limits(owner()).inferred == "review"  # passive inference waits...
    mem.run_tool(dm(), "remember", {"fact": "Prefers oolong."})
    assert mem.pending(dm()) == []  # ...an announced tool write does not


def test_a_person_who_refused_inference_is_not_written_about(mem: Memory) -> None:
    mem.set_my_preferences(dm(), inferred=False)
    result = mem.run_tool(dm(), "remember", {"fact": "Prefers oolong."})
    assert result.is_error and result.code == "rejected" and "policy_off" in result.text
    assert mem.list(owner(), status=None) == []


SMUGGLED = [
    {"user_id": CAROL},
    {"scope_id": CAROL},
    {"agent": "other"},
    {"channel": f"dm:{CAROL}"},
    {"channel_id": f"dm:{CAROL}"},
    {"actor": CAROL},
    {"scope": "agent"},
    {"userId": CAROL},
    {"member": CAROL},
    {"run_id": "run_x"},
]


@pytest.mark.parametrize("extra", SMUGGLED, ids=[next(iter(e)) for e in SMUGGLED])
@pytest.mark.parametrize(
    ("tool", "args"),
    [("remember", {"fact": "Prefers tea."}), ("forget", {"quote": "tea"}), ("recall", {})],
)
def test_an_argument_naming_an_identity_is_refused_and_nothing_runs(
    mem: Memory, tool: str, args: dict[str, Any], extra: dict[str, Any]
) -> None:
    carols = mem.remember(dm(CAROL), "Prefers tea with milk.", scope="user")
    ctx = dm()
    result = mem.run_tool(ctx, tool, {**args, **extra})
    assert result.is_error and result.code == "identity_argument", result
    assert "whose memory" in result.text
    assert mem.writes(ctx, ctx.run_id) == [] and mem.get(owner(), carols.id).status is Status.ACTIVE
    assert [n.id for n in mem.list(owner())] == [carols.id]


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("remember", {"fact": "x", "colour": "red"}, "invalid_arguments"),
        ("remember", {}, "invalid_arguments"),
        ("remember", {"fact": 3}, "invalid_arguments"),
        ("remember", {"fact": ""}, "invalid_arguments"),
        ("remember", {"fact": "x" * 501}, "invalid_arguments"),
        ("remember", {"fact": "Tea.", "about": "everyone"}, "invalid_arguments"),
        ("remember", ["Prefers tea."], "invalid_arguments"),
        ("forget", {"number": 0}, "invalid_arguments"),
        ("forget", {"number": True}, "invalid_arguments"),
        ("forget", {"number": 1, "quote": "tea"}, "invalid"),
        ("forget", {}, "invalid"),
        ("forget", {"number": 1}, "not_found"),
        ("forget", {"quote": "nothing like it"}, "not_found"),
        ("erase_everything", {}, "unknown_tool"),
        ("", {}, "unknown_tool"),
    ],
)
def test_bad_calls_are_refused_as_results(
    mem: Memory, tool: str, arguments: Any, code: str
) -> None:
    result = mem.run_tool(dm(), tool, arguments)
    assert isinstance(result, ToolResult)
    assert result.is_error and result.code == code, result
    assert result.text and not result.notices
    assert mem.list(owner(), status=None) == []


#: Texts the write policy refuses; a tool call must be refused with Memory's own message.
REFUSED = [
    "The staging key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD.",
    "Her recovery phrase is abandon ability able about above absent absorb abstract "
    "absurd abuse access accident.",
    "Logs in with password hunter2hunter2!",
    "Was diagnosed with depression last year.",
]


@pytest.mark.parametrize("text", REFUSED)
def test_the_guard_refuses_through_a_tool_exactly_as_through_memory(mem: Memory, text: str) -> None:
    ctx = dm()
    with pytest.raises(Rejected) as raised:
        mem.remember(ctx, text, scope="user", basis="inferred")
    result = mem.run_tool(ctx, "remember", {"fact": text})
    assert result.is_error and result.code == "rejected"
    assert raised.value.message in result.text and f"reason {raised.value.reason}" in result.text
    assert mem.list(owner(), status=None) == [] and result.writes == ()


def test_authorization_refuses_through_a_tool_exactly_as_through_memory(mem: Memory) -> None:
    rule = mem.remember(owner(), "Deploys need a green build.", scope="agent")
    ctx = dm()
    mem.compile(ctx, "When do deploys happen? green build")
    with pytest.raises(Denied) as raised:
        mem.forget(ctx, rule.id)
    result = mem.run_tool(ctx, "forget", {"number": 1})
    assert result.is_error and result.code == "denied"
    assert raised.value.message in result.text and raised.value.rule in result.text
    assert mem.get(owner(), rule.id).status is Status.ACTIVE


def test_forget_by_number_follows_the_last_block_shown(mem: Memory) -> None:
    tea = mem.remember(dm(), "Prefers green tea.", scope="user")
    walk = mem.remember(dm(), "Walks the dog at seven.", scope="user")
    ctx = dm()
    mem.compile(ctx, "green tea")
    shown = [i for i, _ in mem.explain(ctx, ctx.run_id).selected]
    recalled = mem.run_tool(ctx, "recall", {"query": "dog walks"})
    assert not recalled.is_error and "BEGIN REMEMBERED NOTES" in recalled.text
    latest = [i for i, _ in mem.explain(ctx, ctx.run_id).selected]
    assert set(shown) == set(latest) == {tea.id, walk.id}
    gone = mem.run_tool(ctx, "forget", {"number": 1})
    assert not gone.is_error and gone.notices[0].startswith("Forgot")
    assert mem.get(owner(), latest[0]).status is Status.FORGOTTEN
    assert mem.get(owner(), latest[1]).status is Status.ACTIVE
    out_of_range = mem.run_tool(ctx, "forget", {"number": 3})
    assert out_of_range.is_error and out_of_range.code == "not_found"


def test_forget_by_quote_among_the_notes_of_the_turn(mem: Memory) -> None:
    mem.remember(dm(), "Prefers green tea.", scope="user")
    mem.remember(dm(), "Prefers black tea in winter.", scope="user")
    carols = mem.remember(dm(CAROL), "Prefers GREEN tea with honey.", scope="user")
    ctx = dm()
    mem.compile(ctx, "tea")
    ambiguous = mem.run_tool(ctx, "forget", {"quote": "tea"})
    assert ambiguous.is_error and ambiguous.code == "ambiguous"
    written = mem.run_tool(ctx, "remember", {"fact": "Drinks rooibos at night."})
    gone = mem.run_tool(ctx, "forget", {"quote": "  GREEN   tea"})
    assert not gone.is_error and "Prefers green tea." in gone.text
    assert mem.get(owner(), carols.id).status is Status.ACTIVE  # never Carol's
    by_write = mem.run_tool(ctx, "forget", {"quote": "rooibos"})  # written this turn
    assert not by_write.is_error
    assert mem.get(owner(), written.writes[0].note.id).status is Status.FORGOTTEN


def test_a_store_failure_raises(mem: Memory, data_dir: Path) -> None:
    mem.run_tool(dm(), "remember", {"fact": "Prefers oolong."})
    mem.close()
    log = data_dir / "agents" / AGENT / "memory.jsonl"
    good = log.read_bytes()
    log.write_bytes(b'{"op":"remember","broken\n' + good)
    with Memory.open(data_dir, embedder=None) as broken, pytest.raises(StoreError):
        broken.run_tool(dm(), "recall", {"query": "tea"})


def test_an_envelope_the_host_may_not_assert_raises(mem: Memory) -> None:
    from remem import HostPrincipal

    view = mem.for_principal(HostPrincipal(("other",), ("*",), ("*",)))
    with pytest.raises(Denied):
        view.run_tool(dm(), "recall", {})
    with pytest.raises(RememError):
        mem.run_tool("not a context", "recall", {})  # type: ignore[arg-type]

"""Which memory tools each run offers its model, and what policy may do to the set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from remem import Memory, Role, RunContext
from remem.tools.arguments import names_identity

AGENT = "yuko"
BOB, CAROL = "user:bob", "user:carol"
DM = "dm:bob"

#: (run, the tools it offers by default): the table of issue 14 (owner: recall only,
#: see remem.tools.specs).
DEFAULTS: list[tuple[str, RunContext, list[str]]] = [
    ("dm member", RunContext.dm(AGENT, DM, BOB), ["remember", "forget", "recall"]),
    ("dm admin", RunContext.dm(AGENT, DM, BOB, role=Role.ADMIN), ["remember", "forget", "recall"]),
    ("group", RunContext.group(AGENT, "chan:general", BOB), ["recall"]),
    ("group admin", RunContext.group(AGENT, "chan:general", BOB, role=Role.ADMIN), ["recall"]),
    ("task", RunContext.task(AGENT, "chan:general"), ["recall"]),
    ("agent-only", RunContext.agent_only(AGENT), ["recall"]),
    ("system", RunContext.system(AGENT, Role.CRON, channel="chan:general"), ["recall"]),
    ("knowledge", RunContext.knowledge(AGENT), []),
    ("unpaired dm", RunContext.dm(AGENT, "dm:x", "user:x", role=Role.UNPAIRED), []),
    ("unpaired group", RunContext.group(AGENT, "chan:general", "user:x", role=Role.UNPAIRED), []),
    ("owner", RunContext.owner(AGENT), ["recall"]),
]


def names(specs: list[dict[str, Any]], style: str) -> list[str]:
    if style == "openai":
        return [s["function"]["name"] for s in specs]
    return [s["name"] for s in specs]


def schemas(specs: list[dict[str, Any]], style: str) -> list[dict[str, Any]]:
    key = {"openai": None, "anthropic": "input_schema", "mcp": "inputSchema"}[style]
    return [s["function"]["parameters"] if key is None else s[key] for s in specs]


@pytest.mark.parametrize("style", ["openai", "anthropic", "mcp"])
@pytest.mark.parametrize(("run", "ctx", "expected"), DEFAULTS, ids=[d[0] for d in DEFAULTS])
def test_each_run_kind_offers_its_default_tools(
    mem: Memory, run: str, ctx: RunContext, expected: list[str], style: str
) -> None:
    specs = mem.tool_specs(ctx, style=style)
    assert names(specs, style) == expected, run
    for schema in schemas(specs, style):
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        # No input schema has a field naming an identity: only the envelope says whose.
        assert not [p for p in schema["properties"] if names_identity(p)], schema
        for prop in schema["properties"].values():
            assert prop["type"] in ("string", "integer")


def test_identity_names_are_recognised() -> None:
    """The check above is not vacuous: the names a model would smuggle are caught."""
    for key in ("user_id", "userId", "scope_id", "agent", "channel", "actor", "member", "id"):
        assert names_identity(key), key
    for key in ("fact", "about", "number", "quote", "query"):
        assert not names_identity(key), key


def test_descriptions_carry_the_hygiene_rules(mem: Memory) -> None:
    specs = {s["name"]: s for s in mem.tool_specs(RunContext.dm(AGENT, DM, BOB), style="mcp")}
    remember = specs["remember"]["description"]
    for rule in ("credentials", "health", "finances", "private business", "third-person"):
        assert rule in remember, rule
    assert "one fact per call" in remember and "explicitly asks" in remember
    assert specs["forget"]["annotations"]["destructiveHint"] is True
    assert specs["recall"]["annotations"]["readOnlyHint"] is True


def test_unknown_style_is_invalid(mem: Memory) -> None:
    from remem import InvalidInput

    with pytest.raises(InvalidInput, match="style must be one of"):
        mem.tool_specs(RunContext.dm(AGENT, DM, BOB), style="gemini")


def write_policy(data_dir: Path, text: str) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "remem.toml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("policy", "channel_settings", "dm_tools", "group_tools"),
    [
        ('[memory]\ntools = ["recall"]\n', {}, ["recall"], ["recall"]),
        (
            f'[agents.{AGENT}.memory]\ntools = ["forget", "recall"]\n',
            {},
            ["forget", "recall"],
            ["recall"],
        ),
        ('[memory]\ninferred = "off"\n', {}, ["forget", "recall"], ["recall"]),
        ("", {"memory": False}, [], ["recall"]),
        ("", {"e2ee": True}, [], ["recall"]),  # its memory is the encrypted slot
        ("", {"tools": ["forget"]}, ["forget"], ["recall"]),
        (
            '[memory]\ntools = ["recall"]\n',
            {"tools": ["remember", "recall"]},
            ["recall"],
            ["recall"],
        ),
        ("[memory]\ntools = []\n", {}, [], []),
    ],
)
def test_policy_narrows_the_tools_never_widens_them(
    data_dir: Path,
    policy: str,
    channel_settings: dict[str, Any],
    dm_tools: list[str],
    group_tools: list[str],
) -> None:
    write_policy(data_dir, policy)
    with Memory.open(data_dir, embedder=None) as mem:
        owner = RunContext.owner(AGENT)
        if channel_settings:
            mem.set_channel_policy(owner, DM, **channel_settings)
        dm = RunContext.dm(AGENT, DM, BOB)
        group = RunContext.group(AGENT, "chan:general", BOB)
        assert names(mem.tool_specs(dm, style="mcp"), "mcp") == dm_tools
        assert names(mem.tool_specs(group, style="mcp"), "mcp") == group_tools
        # A tool the run does not offer is refused when called, whatever the model says.
        for tool in {"remember", "forget", "recall"} - set(dm_tools):
            result = mem.run_tool(dm, tool, {})
            assert result.is_error and result.code == "unknown_tool"


def test_a_looser_channel_setting_is_clamped_and_said(data_dir: Path) -> None:
    write_policy(data_dir, '[memory]\ntools = ["recall"]\ntool_writes = "review"\n')
    with Memory.open(data_dir, embedder=None) as mem:
        change = mem.set_channel_policy(
            RunContext.owner(AGENT), DM, tools=["remember", "recall"], tool_writes="announce"
        )
        said = " ".join(change.notices)
        assert "tools=[recall, remember]" in said and "tool_writes=announce" in said, said
        limits = mem.limits(RunContext.owner(AGENT), DM)
        assert limits.tools == frozenset({"recall"}) and limits.tool_writes == "review"

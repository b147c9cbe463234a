"""Layered policy, stricter wins (DESIGN §2).

Layers, widest first: built-in defaults → ``[memory]`` in ``remem.toml`` (admin
hard limits) → ``[agents.<name>.memory]`` (agent defaults) → channel policy
(events set by admins and stewards) → a participant's choices about
themselves. For every key the effective value is the strictest value set by
any layer; built-in defaults apply only where no layer sets the key. A value
a narrower layer sets that is looser than a wider layer's is *clamped*, and
the merge reports it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from remem.core.model import Kind
from remem.errors import ConfigError, InvalidInput, shown_keys
from remem.policy.config import ALL_KINDS, DEFAULT_LIMITS, TOOL_NAMES, Limits

_INFERRED_ORDER = {"auto": 0, "review": 2, "off": 3}
_REVIEW_ORDER = {"auto": 0, "review": 1}
_RULE_ORDER = {"auto": 0, "review": 1, "off": 2}
_CROSS_ORDER = {"on": 0, "opt_in": 1, "off": 2}
_TOOL_WRITES_ORDER = {"announce": 0, "review": 1}

FILE_KEYS = frozenset(
    {
        "enabled",
        "kinds",
        "inferred",
        "agent_writes",
        "cross_channel_user_recall",
        "group_user_recall",
        "max_note_chars",
        "max_notes_per_scope",
        "retention_days",
        "recall_max_notes",
        "recall_max_chars",
        "agent_write_access",
        "rule_learning",
        "max_rule_chars",
        "tools",
        "tool_writes",
        "e2ee",
    }
)
#: Channel policy keys (API name → limits field).
CHANNEL_KEYS = {
    "memory": "enabled",
    "inferred": "inferred",
    "kinds": "kinds",
    "retention_days": "retention_days",
    "recall_max_notes": "recall_max_notes",
    "recall_max_chars": "recall_max_chars",
    "tools": "tools",
    "tool_writes": "tool_writes",
    "e2ee": "e2ee",
}


#: Allowed range of each numeric key, checked when the value is read (``remem.toml`` at
#: load, channel settings when set), so a recall never meets a number it cannot use.
NUMBER_RANGES: dict[str, tuple[int, int]] = {
    "max_note_chars": (1, 100_000),
    "max_notes_per_scope": (1, 100_000_000),
    "retention_days": (1, 36_500),
    "recall_max_notes": (1, 1_000),
    "recall_max_chars": (1, 1_000_000),
    "max_rule_chars": (1, 1_000_000),
    "evidence": (1, 1_000),
}
#: Built-in defaults that are ceilings: only ``remem.toml`` (the admin and agent layers)
#: may raise them; a channel policy asking for more is clamped, and told so.
CEILING_KEYS = ("recall_max_notes", "recall_max_chars")
FILE_LAYERS = frozenset({"admin", "agent"})


def inferred_rank(value: str) -> tuple[int, int]:
    """Strictness of an ``inferred`` setting: auto < evidence:N (by N) < review < off."""
    if value.startswith("evidence:"):
        return (1, int(value.split(":", 1)[1]))
    return (_INFERRED_ORDER[value], 0)


def _min_optional(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


# key → function(wider, narrower) -> the stricter of the two.
_STRICTER: dict[str, Callable[[Any, Any], Any]] = {
    "enabled": lambda a, b: a and b,
    "kinds": lambda a, b: a & b,
    "inferred": lambda a, b: max(a, b, key=inferred_rank),
    "agent_writes": lambda a, b: max(a, b, key=_REVIEW_ORDER.__getitem__),
    "cross_channel_user_recall": lambda a, b: max(a, b, key=_CROSS_ORDER.__getitem__),
    "group_user_recall": lambda a, b: a and b,
    "max_note_chars": min,
    "max_notes_per_scope": min,
    "retention_days": _min_optional,
    "recall_max_notes": min,
    "recall_max_chars": min,
    "agent_write_access": lambda a, b: a & b,
    "rule_learning": lambda a, b: max(a, b, key=_RULE_ORDER.__getitem__),
    "max_rule_chars": min,
    "tools": lambda a, b: a & b,
    "tool_writes": lambda a, b: max(a, b, key=_TOOL_WRITES_ORDER.__getitem__),
    "e2ee": lambda a, b: a or b,
}


def _positive_int(key: str, value: Any) -> int:
    low, high = NUMBER_RANGES[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise ConfigError(f"{key} must be a whole number from {low} to {high:_}, not {shown}")
    return value


def _choice(key: str, value: Any, choices: Mapping[str, int]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{key} must be one of {', '.join(choices)}, not {value!r:.60}")
    return value


def parse_value(key: str, value: Any) -> Any:
    """Validate one policy value; raises :class:`ConfigError` naming the key."""
    if key in ("enabled", "group_user_recall", "e2ee"):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, not {value!r:.60}")
        return value
    if key == "cross_channel_user_recall":
        if isinstance(value, bool):
            return "on" if value else "off"
        return _choice(key, value, _CROSS_ORDER)
    if key == "kinds":
        if not isinstance(value, list | tuple | set | frozenset):
            raise ConfigError(
                f"kinds must be a list such as ['preference', 'fact'], not {value!r:.60}"
            )
        try:
            return frozenset(Kind(str(v)) for v in value)
        except ValueError:
            raise ConfigError(
                f"kinds holds an unknown kind in {value!r:.60}; "
                f"use {', '.join(k.value for k in Kind)}"
            ) from None
    if key == "inferred":
        if isinstance(value, str) and value.startswith("evidence:"):
            digits = value[9:]
            number = int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 8 else 0
            low, high = NUMBER_RANGES["evidence"]
            if not low <= number <= high:
                raise ConfigError(
                    f"inferred = evidence:N needs a whole number N from {low} to {high}, "
                    f"not {value[:40]!r}"
                )
            return value
        return _choice(key, value, _INFERRED_ORDER)
    if key == "agent_writes":
        return _choice(key, value, _REVIEW_ORDER)
    if key == "rule_learning":
        return _choice(key, value, _RULE_ORDER)
    if key == "tool_writes":
        return _choice(key, value, _TOOL_WRITES_ORDER)
    if key == "tools":
        return _tools(value)
    if key == "retention_days":
        return None if value is None else _positive_int(key, value)
    if key == "agent_write_access":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError("agent_write_access must be a list of user ids or 'role:<name>'")
        return frozenset(value)
    if key in FILE_KEYS:
        return _positive_int(key, value)
    raise ConfigError(f"unknown policy key {key!r}; known keys: {', '.join(sorted(FILE_KEYS))}")


def _tools(value: Any) -> frozenset[str]:
    """The ``tools`` setting: a list of memory tool names (``[]``: none)."""
    names = ", ".join(sorted(TOOL_NAMES))
    if not isinstance(value, list | tuple | set | frozenset) or not all(
        isinstance(v, str) and v in TOOL_NAMES for v in value
    ):
        raise ConfigError(f"tools must be a list of memory tool names ({names}), not {value!r:.60}")
    return frozenset(value)


def _parse_table(table: Any, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    out = {}
    for key, value in table.items():
        if key not in FILE_KEYS:
            raise ConfigError(
                f"unknown key {key!r} in {where}; known keys: {', '.join(sorted(FILE_KEYS))}"
            )
        try:
            out[key] = parse_value(key, value)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return out


@dataclass(frozen=True, slots=True)
class PolicyFile:
    """The parsed ``remem.toml``: admin limits and per-agent defaults."""

    admin: dict[str, Any] = field(default_factory=dict)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: str = ""


def parse_policy_file(text: str, version: str = "") -> PolicyFile:
    """Parse ``remem.toml``; a malformed file or unknown key raises :class:`ConfigError`."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"remem.toml is not valid TOML: {exc}") from None
    unknown = set(data) - {"memory", "agents"}
    if unknown:
        raise ConfigError(
            f"unknown section {sorted(unknown)[0]!r} in remem.toml; use [memory] and "
            "[agents.<name>.memory]"
        )
    admin = _parse_table(data.get("memory", {}), "[memory]")
    agents: dict[str, dict[str, Any]] = {}
    for name, section in dict(data.get("agents", {})).items():
        if not isinstance(section, dict) or set(section) - {"memory"}:
            raise ConfigError(f"[agents.{name}] may only hold a [agents.{name}.memory] table")
        agents[name] = _parse_table(section.get("memory", {}), f"[agents.{name}.memory]")
    return PolicyFile(admin=admin, agents=agents, version=version)


@dataclass(frozen=True, slots=True)
class Merged:
    """Effective limits, where each value came from, and what was clamped."""

    limits: Limits
    sources: dict[str, str]
    clamped: list[str]


def merge(layers: list[tuple[str, Mapping[str, Any]]]) -> Merged:
    """Merge layers (widest first); for each key the strictest value set by any layer wins."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    clamped: list[str] = []
    for layer, settings in layers:
        if layer not in FILE_LAYERS:
            for key in CEILING_KEYS:  # unless remem.toml raised it, the default is a ceiling
                if key not in values:
                    values[key], sources[key] = getattr(DEFAULT_LIMITS, key), "default"
        for key, value in settings.items():
            if key not in values:
                values[key], sources[key] = value, layer
                continue
            stricter = _STRICTER[key](values[key], value)
            if stricter == value and value != values[key]:
                values[key], sources[key] = value, layer
            elif value != values[key]:
                clamped.append(
                    f"{key}={_show(value)} from {layer} is looser than {_show(values[key])} "
                    f"from {sources[key]}; {_show(stricter)} applies"
                )
                if stricter != values[key]:
                    # Neither value contains the other (two sets that overlap): both
                    # restrictions hold, so the intersection applies.
                    values[key], sources[key] = stricter, layer
    limits = replace(DEFAULT_LIMITS, **values)
    for key in FILE_KEYS:
        sources.setdefault(key, "default")
    return Merged(limits, sources, clamped)


def _show(value: Any) -> str:
    if isinstance(value, frozenset):
        return "[" + ", ".join(sorted(str(v) for v in value)) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


def channel_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Validate API channel settings into limits fields; raises ``InvalidInput`` naming the key."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        field_name = CHANNEL_KEYS.get(key)
        if field_name is None:
            raise InvalidInput(
                f"unknown channel policy key {shown_keys([key])}; use "
                f"{', '.join([*CHANNEL_KEYS, 'stewards'])}"
            )
        try:
            out[field_name] = parse_value(field_name, value)
        except ConfigError as exc:
            raise InvalidInput(str(exc).replace("enabled", "memory")) from None
    return out


__all__ = [
    "ALL_KINDS",
    "CEILING_KEYS",
    "CHANNEL_KEYS",
    "FILE_KEYS",
    "NUMBER_RANGES",
    "Merged",
    "PolicyFile",
    "channel_settings",
    "inferred_rank",
    "merge",
    "parse_policy_file",
    "parse_value",
]

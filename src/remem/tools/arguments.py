"""Checking a tool call's arguments against its JSON Schema, by hand.

The tools' schemas use a small part of JSON Schema (an object of string and integer
properties with ``enum``, ``minLength``/``maxLength``, ``minimum``, ``required`` and
``additionalProperties: false``), so the core checks them itself rather than depend on
a validator. An argument the schema does not name is refused; one that looks like it
names an identity (a user, member, channel, agent, actor, scope, owner, run or any
``…id``) is refused as such: whose memory a call touches comes from the run envelope,
never from a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from remem.errors import shown_keys

#: A key that tries to name whose memory to touch (after lowercasing, separators removed).
_IDENTITY = re.compile(
    r"user|member|person|people|channel|agent|actor|scope|owner|group|tenant|account|"
    r"principal|speaker|author|role|run|session|thread|chat|guild|team|org|id$|ids$"
)


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """Why a call's arguments were refused: ``code`` and a message for the model."""

    code: str
    message: str


def names_identity(key: str) -> bool:
    """Whether an argument name tries to name an identity (``user_id``, ``channel``,
    ``agentId``, ``scope`` ...)."""
    return bool(_IDENTITY.search(re.sub(r"[^a-z]", "", key.lower())))


def _shown(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def check_arguments(
    tool: str, schema: Mapping[str, Any], arguments: object
) -> tuple[dict[str, Any], ArgumentProblem | None]:
    """The arguments as a dict if they satisfy ``schema``, else the problem."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return {}, ArgumentProblem(
            "invalid_arguments", f"{tool} takes a JSON object of arguments, not {_shown(arguments)}"
        )
    properties: Mapping[str, Any] = schema["properties"]
    keys = [k if isinstance(k, str) else repr(k) for k in arguments]
    smuggled = [k for k in keys if k not in properties and names_identity(k)]
    if smuggled:
        return {}, ArgumentProblem(
            "identity_argument",
            f"refused: {tool} takes no argument naming whose memory to use "
            f"({shown_keys(smuggled)}); it "
            "always acts for the person and conversation of this turn, which the host sets",
        )
    extra = [k for k in keys if k not in properties]
    if extra:
        return {}, ArgumentProblem(
            "invalid_arguments",
            f"{tool} takes no argument {shown_keys(extra)}; its arguments are {sorted(properties)}",
        )
    missing = [k for k in schema.get("required", ()) if k not in arguments]
    if missing:
        return {}, ArgumentProblem("invalid_arguments", f"{tool} needs the argument {missing[0]!r}")
    for key, value in arguments.items():
        problem = _check_value(tool, key, properties[key], value)
        if problem is not None:
            return {}, ArgumentProblem("invalid_arguments", problem)
    return dict(arguments), None


def _check_value(tool: str, key: str, spec: Mapping[str, Any], value: object) -> str | None:
    """What is wrong with one argument's value, or ``None``."""
    where = f"{tool}'s {key!r}"
    if spec["type"] == "integer":
        if type(value) is not int:
            return f"{where} must be a whole number, not {_shown(value)}"
        if "minimum" in spec and value < spec["minimum"]:
            return f"{where} must be at least {spec['minimum']}"
        return None
    if not isinstance(value, str):
        return f"{where} must be text, not {_shown(value)}"
    if "enum" in spec and value not in spec["enum"]:
        return f"{where} must be one of {spec['enum']}, not {_shown(value)}"
    if len(value) < spec.get("minLength", 0):
        return f"{where} must have at least {spec['minLength']} characters"
    if "maxLength" in spec and len(value) > spec["maxLength"]:
        return f"{where} must have at most {spec['maxLength']} characters"
    return None


__all__ = ["ArgumentProblem", "check_arguments", "names_identity"]

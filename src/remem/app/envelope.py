"""The run envelope's one JSON form, read back into a :class:`~remem.context.RunContext`.

The form is what :meth:`RunContext.to_json` writes: every key always present, ::

    {"agent": "yuko", "kind": "dm", "channel": "discord:456", "actor": "discord:123",
     "role": "member", "run_id": "run_01J…"}

(``channel`` and ``actor`` null where the run kind has none). It travels in the HTTP
``Remem-Run`` header and MCP's ``_meta["remem/run"]``. :func:`envelope_from_json`
validates every field and builds the context **only** through the named constructors,
so it yields exactly the envelopes they produce: a ``task`` run has role ``sop`` and
actor ``task``, a ``system`` run's actor is its principal, an ``owner`` run's actor is
``local:owner``. ``run_id`` may be null: a fresh one is made.

Reading an envelope authorizes nothing: adapters turn an authenticated principal and
an envelope into a context with :func:`remem.app.principal.run_context`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from remem.context import OWNER_ACTOR, Role, RunContext, RunKind
from remem.core.text import check_id
from remem.errors import InvalidInput, shown_keys

#: The keys of the form, in its order.
ENVELOPE_KEYS = ("agent", "kind", "channel", "actor", "role", "run_id")
#: The actor the task, agent-only and knowledge constructors set.
TASK_ACTOR = "task"
_PEOPLE = tuple(r.value for r in (Role.OWNER, Role.ADMIN, Role.MEMBER, Role.UNPAIRED))
_SYSTEM = tuple(r.value for r in (Role.CRON, Role.SOP, Role.WEBHOOK))
_ID = {"type": "string", "minLength": 1}
_OPT_ID = {"type": ["string", "null"], "minLength": 1}

#: JSON Schema (draft 2020-12) of the form; the per-kind combinations are checked by
#: :func:`envelope_from_json` (a schema alone would repeat the constructors).
ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agent": _ID,
        "kind": {"enum": [k.value for k in RunKind]},
        "channel": _OPT_ID,
        "actor": _OPT_ID,
        "role": {"enum": [r.value for r in Role]},
        "run_id": _OPT_ID,
    },
    "required": list(ENVELOPE_KEYS),
    "additionalProperties": False,
}


def _bad(key: str, problem: str) -> InvalidInput:
    return InvalidInput(f"run envelope field {key!r}: {problem}")


def _enum_field(data: Mapping[str, Any], key: str, enum: type[Role] | type[RunKind]) -> Any:
    value = data[key]
    names = ", ".join(repr(m.value) for m in enum)
    if not isinstance(value, str):
        raise _bad(key, f"must be one of {names}, not {type(value).__name__}")
    try:
        return enum(value)
    except ValueError:
        raise _bad(key, f"{value[:40]!r} is not one of {names}") from None


def _id_field(data: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = data[key]
    if value is None and not required:
        return None
    if not isinstance(value, str):
        needs = "a string id" if required else "a string id or null"
        raise _bad(key, f"must be {needs} such as 'discord:123', not {type(value).__name__}")
    return check_id(value, f"run envelope field {key!r}")


def _expect(key: str, value: object, wanted: object, kind: RunKind, fix: str) -> None:
    if value != wanted:
        shown = "null" if wanted is None else repr(wanted)
        raise _bad(key, f"a {kind.value!r} run has {key} {shown}, not {value!r:.60}; {fix}")


def envelope_from_json(data: object) -> RunContext:
    """The :class:`RunContext` of an envelope's JSON form (see the module docstring).

    Raises :class:`InvalidInput` naming the field and how to fix it for anything that is
    not the form: a missing or unknown key, a wrong type, an unknown kind or role, a bad
    id, or a combination no constructor makes (``kind`` ``task`` with role ``admin``)."""
    if not isinstance(data, Mapping):
        raise InvalidInput(
            f"a run envelope is a JSON object with keys {', '.join(ENVELOPE_KEYS)}, "
            f"not {type(data).__name__}"
        )
    missing = [k for k in ENVELOPE_KEYS if k not in data]
    unknown = [k for k in data if k not in ENVELOPE_KEYS]
    if missing or unknown:
        raise InvalidInput(
            f"a run envelope has exactly the keys {', '.join(ENVELOPE_KEYS)} "
            f"(null where a run has none); missing: {missing or 'none'}, "
            f"unknown: {shown_keys(unknown) if unknown else 'none'}"
        )
    kind = _enum_field(data, "kind", RunKind)
    role = _enum_field(data, "role", Role)
    agent = _id_field(data, "agent", required=True)
    assert agent is not None
    channel = _id_field(data, "channel", required=False)
    actor = _id_field(data, "actor", required=False)
    run_id = _id_field(data, "run_id", required=False)
    if kind in (RunKind.DM, RunKind.GROUP):
        return _conversation(kind, agent, channel, actor, role, run_id)
    if kind is RunKind.SYSTEM:
        return _system(agent, channel, actor, role, run_id)
    return _no_person(kind, agent, channel, actor, role, run_id)


def _conversation(
    kind: RunKind,
    agent: str,
    channel: str | None,
    actor: str | None,
    role: Role,
    run_id: str | None,
) -> RunContext:
    """A dm or group turn: a channel, a speaker and a person's role."""
    if channel is None:
        raise _bad("channel", f"a {kind.value!r} run happens in a channel: give its id")
    if actor is None:
        raise _bad("actor", f"a {kind.value!r} run has a speaker: give their user id")
    if role.value not in _PEOPLE:
        raise _bad(
            "role",
            f"a {kind.value!r} turn is spoken by a person ({', '.join(_PEOPLE)}), not "
            f"{role.value!r}; for a {role.value} run use kind 'system'",
        )
    if kind is RunKind.DM:
        return RunContext.dm(agent, channel, actor, role=role, run_id=run_id)
    return RunContext.group(agent, channel, actor, role=role, run_id=run_id)


def _system(
    agent: str, channel: str | None, actor: str | None, role: Role, run_id: str | None
) -> RunContext:
    """A cron, sop or webhook run: its actor is its principal."""
    if role.value not in _SYSTEM:
        raise _bad(
            "role",
            f"a 'system' run's role is its principal ({', '.join(_SYSTEM)}), not "
            f"{role.value!r}; for a person's turn use kind 'dm' or 'group'",
        )
    _expect("actor", actor, role.value, RunKind.SYSTEM, "a system run's actor is its role")
    return RunContext.system(agent, role, channel=channel, run_id=run_id)


def _no_person(
    kind: RunKind,
    agent: str,
    channel: str | None,
    actor: str | None,
    role: Role,
    run_id: str | None,
) -> RunContext:
    """A task, agent-only, knowledge or owner run: role and actor are the constructor's."""
    if kind is RunKind.OWNER:
        fix = "the owner's own tooling runs as the owner"
        _expect("role", role.value, Role.OWNER.value, kind, fix)
        _expect("actor", actor, OWNER_ACTOR, kind, fix)
        _expect("channel", channel, None, kind, "owner runs have no channel")
        return RunContext.owner(agent, run_id=run_id)
    fix = "no person speaks in it; for a person's turn use kind 'dm' or 'group'"
    _expect("role", role.value, Role.SOP.value, kind, fix)
    _expect("actor", actor, TASK_ACTOR, kind, fix)
    if kind is RunKind.TASK:
        if channel is None:
            raise _bad("channel", "a 'task' run happens in a channel: give its id")
        return RunContext.task(agent, channel, run_id=run_id)
    _expect("channel", channel, None, kind, "use kind 'task' for a task in a channel")
    if kind is RunKind.AGENT_ONLY:
        return RunContext.agent_only(agent, run_id=run_id)
    return RunContext.knowledge(agent, run_id=run_id)


__all__ = ["ENVELOPE_KEYS", "ENVELOPE_SCHEMA", "envelope_from_json"]

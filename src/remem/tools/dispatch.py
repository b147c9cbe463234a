"""Running one memory tool call for a model: :func:`tool_specs` and :func:`run_tool`.

Both run on a :class:`~remem.app.memory_impl.MemoryImpl` with the host's envelope, so a
tool call takes exactly the path the same action takes through :class:`remem.Memory`:
the same authorization, secret guard and write policy, the same errors. Those errors
come back to the model as refusals (``ToolResult.is_error``) it can explain, never
raised; only a store failure (and a broken policy file, or a credential the service
refuses) raises, since no model can do anything about those.

A ``remember`` call writes with basis ``inferred`` and ``Source.via`` ``"tool"`` (the
model chose to write; the member did not type a command); whether it waits for review
is policy's ``tool_writes`` (see :func:`remem.policy.review.initial_status`). ``forget``
resolves a number through the run's stored trace (:meth:`~remem.Memory.explain` of the
run: the most recent block shown in it), or a quote among the notes that block showed
and the notes the run wrote; the model never handles a note id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from remem.context import RunContext
from remem.core.model import VIA_TOOL, Note, Status
from remem.errors import (
    ConfigError,
    Denied,
    InvalidInput,
    NotFound,
    Rejected,
    RememError,
    StoreError,
    Unauthenticated,
)
from remem.recall.render import quote
from remem.runwrites import Written
from remem.tools.arguments import check_arguments
from remem.tools.result import ToolResult
from remem.tools.specs import STYLES, ToolDef, offered, render

if TYPE_CHECKING:
    from remem.app.memory_impl import MemoryImpl

#: Errors a model can do nothing about: raised to the host, never rendered.
_RAISED = (StoreError, ConfigError, Unauthenticated)
_SCOPES = {"member": "user", "conversation": "channel"}


def _offered(impl: MemoryImpl, ctx: RunContext) -> dict[str, ToolDef]:
    return offered(ctx, impl.limits(ctx, ctx.channel))


def tool_specs(impl: MemoryImpl, ctx: RunContext, style: str) -> list[dict[str, Any]]:
    """``Memory.tool_specs``: the definitions of the tools ``ctx``'s run offers."""
    if not isinstance(style, str) or style not in STYLES:
        raise InvalidInput(f"style must be one of {', '.join(STYLES)}, not {str(style)[:40]!r}")
    return [render(tool, style) for tool in _offered(impl, ctx).values()]


def run_tool(impl: MemoryImpl, ctx: RunContext, name: object, arguments: object) -> ToolResult:
    """``Memory.run_tool``: check the call against what the run offers and the tool's
    schema, execute it, and answer with a :class:`ToolResult` (see the module docstring)."""
    tools = _offered(impl, ctx)
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        return _refusal(impl, ctx, "unknown_tool", _unknown(name, tools))
    args, problem = check_arguments(tool.name, tool.parameters, arguments)
    if problem is not None:
        return _refusal(impl, ctx, problem.code, problem.message)
    try:
        if tool.name == "remember":
            text, notices = _remember(impl, ctx, args)
        elif tool.name == "forget":
            text, notices = _forget(impl, ctx, args)
        else:
            text, notices = impl.recall(ctx, args.get("query", "")).text, ()
    except _RAISED:
        raise
    except _Ambiguous as exc:
        return _refusal(impl, ctx, "ambiguous", str(exc))
    except RememError as exc:
        return _refusal(impl, ctx, exc.code, _refused(exc))
    return ToolResult(text, False, None, notices, _writes(impl, ctx))


class _Ambiguous(Exception):
    """A quote that matches more than one note."""


def _unknown(name: object, tools: Mapping[str, ToolDef]) -> str:
    shown = repr(name)[:60] if isinstance(name, str) else type(name).__name__
    available = ", ".join(tools) or "none"
    return f"no memory tool {shown} is available in this conversation (available: {available})"


def _refused(exc: RememError) -> str:
    """A refusal in words the model can pass on: the same message ``Memory`` raises."""
    detail = ""
    if isinstance(exc, Denied) and exc.rule:
        detail = f" (rule {exc.rule})"
    elif isinstance(exc, Rejected):
        detail = f" (reason {exc.reason})"
        if exc.reason == "sensitive":
            detail += "; if the member wants it kept, they can ask in their own words"
    return f"refused{detail}: {exc.message}"


def _refusal(impl: MemoryImpl, ctx: RunContext, code: str, text: str) -> ToolResult:
    return ToolResult(text, True, code, (), _writes(impl, ctx))


def _writes(impl: MemoryImpl, ctx: RunContext) -> tuple[Written, ...]:
    return tuple(impl.writes(ctx, ctx.run_id))


def _remember(
    impl: MemoryImpl, ctx: RunContext, args: dict[str, Any]
) -> tuple[str, tuple[str, ...]]:
    scope = _SCOPES[args.get("about", "member")]
    note = impl.remember(ctx, args["fact"], scope=scope, basis="inferred", source={"via": VIA_TOOL})
    if note.status is Status.PENDING:
        said = "saved for review; it is not used until someone approves it"
    elif note.evidence > 1:
        said = "already remembered; noted again"
    else:
        said = "remembered"
    return f"{said}: {quote(note.text)}", (note.receipt,)


def _forget(impl: MemoryImpl, ctx: RunContext, args: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    if ("number" in args) == ("quote" in args):
        raise InvalidInput("give forget exactly one of number or quote")
    if "number" in args:
        note = _by_number(impl, ctx, args["number"])
    else:
        note = _by_quote(impl, ctx, args["quote"])
    gone = impl.forget(ctx, note.id)
    return f"forgot: {quote(note.text)}", (gone.receipt,)


def _shown_ids(impl: MemoryImpl, ctx: RunContext) -> list[str]:
    """The notes of the most recent memory block this run was shown, in block order."""
    try:
        return [note_id for note_id, _ in impl.explain(ctx, ctx.run_id).selected]
    except NotFound:
        return []


def _by_number(impl: MemoryImpl, ctx: RunContext, number: int) -> Note:
    shown = _shown_ids(impl, ctx)
    if not shown:
        raise NotFound(
            "no memory block with numbered notes was shown in this turn: call recall first, "
            "or name the note by a quote"
        )
    if number > len(shown):
        raise NotFound(f"the last memory block of this turn has notes 1 to {len(shown)} only")
    return impl.get(ctx, shown[number - 1])


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _by_quote(impl: MemoryImpl, ctx: RunContext, text: str) -> Note:
    wanted = _fold(text)
    ids = _shown_ids(impl, ctx) + [w.note.id for w in impl.writes(ctx, ctx.run_id)]
    found: dict[str, Note] = {}
    for note_id in dict.fromkeys(ids):
        try:
            note = impl.get(ctx, note_id)
        except NotFound:
            continue
        if wanted and wanted in _fold(note.text):
            found[note.id] = note
    if not found:
        raise NotFound(
            "no note shown or written in this turn contains that quote: call recall to see "
            "the notes, then name one by its number"
        )
    if len(found) > 1:
        raise _Ambiguous(
            f"{len(found)} notes contain that quote: name the note by its number instead"
        )
    return next(iter(found.values()))


__all__ = ["run_tool", "tool_specs"]

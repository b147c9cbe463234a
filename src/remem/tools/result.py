"""What a memory tool call answers: :class:`ToolResult`."""

from __future__ import annotations

from dataclasses import dataclass

from remem.runwrites import Written


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to one tool call (:meth:`remem.Memory.run_tool`).

    ``text`` is for the model: what was done, or why it was refused, in words it can
    pass on. ``is_error`` marks a refusal (nothing was executed); ``code`` says which
    (``None`` on success; ``unknown_tool``, ``invalid_arguments``, ``identity_argument``,
    ``ambiguous``, or a refusal's :class:`~remem.errors.RememError` code: ``denied``,
    ``rejected``, ``not_found``, ``invalid``, ``conflict``). ``notices`` are for the host
    to show the person: the receipts of what this call wrote. ``writes`` are every note
    the run has written so far (:meth:`remem.Memory.writes` of the run), so a host
    attaches one "see what I remember" chip to the reply whatever call came last.
    """

    text: str
    is_error: bool
    code: str | None
    notices: tuple[str, ...] = ()
    writes: tuple[Written, ...] = ()


__all__ = ["ToolResult"]

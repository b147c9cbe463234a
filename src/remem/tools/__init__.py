"""Memory tools for models: definitions a host offers its model, and a safe dispatcher.

>>> specs = mem.tool_specs(ctx, style="openai")         # doctest: +SKIP
>>> result = mem.run_tool(ctx, "remember", {"fact": "Prefers tea."})  # doctest: +SKIP
>>> result.text, result.is_error, result.notices        # doctest: +SKIP

:meth:`remem.Memory.tool_specs` and :meth:`remem.Memory.run_tool` are the public
entry points; :mod:`remem.tools.specs` says which run offers which tool, and
:mod:`remem.tools.dispatch` how a call runs.
"""

from remem.tools.result import ToolResult
from remem.tools.specs import STYLES, default_tools

__all__ = ["STYLES", "ToolResult", "default_tools"]

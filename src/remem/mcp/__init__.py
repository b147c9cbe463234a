"""remem's MCP server (needs the ``mcp`` extra: ``pip install 'remem[mcp]'``).

The tools are :meth:`remem.Memory.tool_specs` (style ``"mcp"``) and every call is
:meth:`remem.Memory.run_tool`, so a model reaches memory through MCP exactly as through
a host's own tool loop. Whose memory a call touches is never the model's choice:

* over stdio (:mod:`remem.mcp.stdio`, ``remem mcp``), the envelope is fixed when the
  server is launched (``--agent --dm --user``, or ``--owner``);
* over streamable HTTP (:mod:`remem.mcp.http`, ``/mcp`` in ``remem serve``), the host
  token authenticates each request and the host program puts the per-turn envelope in
  ``_meta["remem/run"]`` of every request, checked against the token's grants by
  :func:`remem.run_context` like every HTTP call.

:mod:`remem.mcp.server` builds the server both share.
"""

from __future__ import annotations

import importlib.util

from remem.errors import InvalidInput

#: The ``_meta`` key holding the run envelope's JSON form (DESIGN §4.4).
META_KEY = "remem/run"


def sdk_installed() -> bool:
    """Whether the official MCP SDK (the ``mcp`` extra) is importable."""
    return importlib.util.find_spec("mcp") is not None


def require_sdk() -> None:
    """``InvalidInput`` saying how to install the ``mcp`` extra when it is missing."""
    if not sdk_installed():
        raise InvalidInput("the MCP server needs the mcp extra: pip install 'remem[mcp]'")


__all__ = ["META_KEY", "require_sdk", "sdk_installed"]

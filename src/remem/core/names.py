"""Agent names: the one validator every backend and every adapter uses.

An agent name is an id (the character set of :func:`remem.core.text.check_id`) of at
most 64 characters, without ``/`` or ``\\`` and not starting with ``.``: a JSONL data
directory makes it a directory name.

Names starting with ``#`` are the service's own. Some are fixed: the PostgreSQL
backend's reserved row-level-security scopes (``#config``, ``#directory``,
``#keyring``, whose transactions unlock the service's records or every agent's keys).
Others are minted for one use, such as the probe agent of ``remem doctor``
(``#doctor-<random>``). No input may name one (an envelope, an HTTP path, a CLI
option): :func:`check_agent` accepts a ``#`` name only when this process minted it
with :func:`mint_service_agent` (or took over a leftover with
:func:`adopt_service_agent`), and only until it is released.
"""

from __future__ import annotations

import re
import secrets
import threading

from remem.core.text import check_id
from remem.errors import InvalidInput

#: The first character of every name that belongs to the service.
SERVICE_PREFIX = "#"
MAX_AGENT_CHARS = 64

_minted: set[str] = set()
_minted_lock = threading.Lock()


def check_agent(value: object) -> str:
    """``value`` if it is an agent name an input may use; else :class:`InvalidInput`
    saying what is wrong (a ``#`` name: that it is reserved, and how to rename an agent
    stored under it before this check existed)."""
    name = check_id(value, "agent")
    if name.startswith(".") or "/" in name or "\\" in name or len(name) > MAX_AGENT_CHARS:
        raise InvalidInput(
            f"agent name {name!r} is not allowed: use up to {MAX_AGENT_CHARS} characters "
            "without '/' and not starting with '.'"
        )
    if name.startswith(SERVICE_PREFIX) and name not in _minted:
        raise InvalidInput(
            f"agent name {name!r} is reserved: names starting with '#' are the service's "
            "own; choose another name (an agent stored under this name by an older remem: "
            f"rename it with `remem agents rename '{name}' NEW-NAME`)"
        )
    return name


def is_reserved(name: str) -> bool:
    """True for a name of the service's own (it starts with ``#``)."""
    return name.startswith(SERVICE_PREFIX)


def mint_service_agent(purpose: str) -> str:
    """A fresh name ``#<purpose>-<16 hex digits>`` that :func:`check_agent` accepts in
    this process until :func:`release_service_agent`."""
    name = f"{SERVICE_PREFIX}{purpose}-{secrets.token_hex(8)}"
    with _minted_lock:
        _minted.add(name)
    return name


def minted_for(name: str, purpose: str) -> bool:
    """True when ``name`` has the form :func:`mint_service_agent` gives for ``purpose``."""
    return re.fullmatch(rf"{re.escape(SERVICE_PREFIX + purpose)}-[0-9a-f]{{16}}", name) is not None


def adopt_service_agent(name: str, purpose: str) -> str:
    """Accept ``name``, a leftover of :func:`mint_service_agent` for ``purpose`` (found
    in a store after a process died before releasing it), so that it can be removed;
    :class:`InvalidInput` for any other name."""
    if not minted_for(name, purpose):
        raise InvalidInput(f"{name!r} is not a name minted for {purpose}")
    with _minted_lock:
        _minted.add(name)
    return name


def release_service_agent(name: str) -> None:
    """Stop accepting ``name`` (its use is over)."""
    with _minted_lock:
        _minted.discard(name)

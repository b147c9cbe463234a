"""Rule names, the same for every backend (a JSONL backend makes them file names)."""

from __future__ import annotations

import re

from remem.errors import InvalidInput

_RULE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def check_rule_name(name: str) -> None:
    """Refuse a rule name that is not 1-64 letters, digits, ``_``, ``-`` or ``.``."""
    if not _RULE_NAME.fullmatch(name) or name.endswith(".md"):
        raise InvalidInput(
            f"rule name {name!r} is not allowed: use letters, digits, '_', '-' or '.', "
            "up to 64 characters, without the .md suffix"
        )

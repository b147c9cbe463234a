"""Reading an archived session for ``relearn``: JSONL of messages plus a trust line.

Each line is a JSON object. Message lines hold ``author``, ``role``, ``text``
and optionally ``message_id`` and ``ts``. One line ``{"trust": "verified"}``
(or ``"unverified"``) states whether the roles recorded in the archive can be
trusted; without a verified trust line every speaker is treated as a member,
so nothing in the archive can become operational knowledge without review.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from remem.context import Role
from remem.errors import InvalidInput, shown_keys
from remem.formation.extract import Message

_FIELDS = {"author", "role", "text", "message_id", "ts"}


def read_archive(archive: str | Path | Iterable[dict[str, Any]]) -> tuple[list[Message], bool]:
    """Messages of the archive, and whether its roles are verified."""
    rows = _rows(archive)
    verified = False
    messages = []
    for number, row in enumerate(rows, 1):
        if "trust" in row:
            if row["trust"] not in ("verified", "unverified"):
                raise InvalidInput(f"archive line {number}: trust must be verified or unverified")
            verified = row["trust"] == "verified"
            continue
        unknown = set(row) - _FIELDS
        if unknown or "text" not in row:
            raise InvalidInput(
                f"archive line {number}: expected author, role, text, message_id, ts"
                + (f" (unknown: {shown_keys(unknown)})" if unknown else "")
            )
        messages.append(
            Message(
                author=row.get("author"),
                role=row.get("role", "member"),
                text=row["text"],
                message_id=row.get("message_id"),
                ts=row.get("ts"),
            )
        )
    if not verified:
        messages = [_as_member(m) for m in messages]
    return messages, verified


def _as_member(msg: Message) -> Message:
    if isinstance(msg.role, str) and msg.role.lower() in ("owner", "admin"):
        return Message(msg.author, Role.MEMBER, msg.text, msg.message_id, msg.ts)
    if msg.role in (Role.OWNER, Role.ADMIN):
        return Message(msg.author, Role.MEMBER, msg.text, msg.message_id, msg.ts)
    return msg


def _rows(archive: str | Path | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(archive, str | Path):
        path = Path(archive)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeError, ValueError) as exc:  # ValueError: a NUL in the path
            raise InvalidInput(f"cannot read archive {str(path)[:200]!r}: {exc}") from None
        rows = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep
                raise InvalidInput(f"{path} line {number} is not JSON") from None
            if not isinstance(row, dict):
                raise InvalidInput(f"{path} line {number} is not a JSON object")
            rows.append(row)
        return rows
    if isinstance(archive, bytes | dict) or not isinstance(archive, Iterable):
        raise InvalidInput("an archive is a path to a JSONL file or a list of message dicts")
    rows = list(archive)
    if not all(isinstance(r, dict) for r in rows):
        raise InvalidInput("each archive row must be a dict (a message or a trust line)")
    return [dict(r) for r in rows]

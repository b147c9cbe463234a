"""Size and shape limits of what ``learn`` reads, checked before any work is done.

A slice holds at most ``MAX_SLICE`` messages (:mod:`remem.formation.actions`), each
of at most :data:`MAX_MESSAGE_CHARS` characters, together at most
:data:`MAX_SLICE_CHARS`; a summary is bounded like one message. Learning costs time in
proportion to the text read, so the bounds keep one call to about a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from remem.core.text import check_optional_id, check_str
from remem.errors import InvalidInput, shown_keys

#: The longest message ``learn`` reads (characters).
MAX_MESSAGE_CHARS = 8_000
#: The most text one ``learn`` call reads, all messages together (characters).
MAX_SLICE_CHARS = 200_000
_FIELDS = frozenset({"author", "role", "text", "message_id", "ts"})


def check_messages(messages: Sequence[Any], summary: str | None) -> None:
    """Raise :class:`InvalidInput` naming the first message that is malformed or too long
    (fields, types, ids by :func:`remem.core.text.check_id`), or when the slice is."""
    total = 0
    for number, msg in enumerate(messages, 1):
        if isinstance(msg, dict):
            unknown = set(msg) - _FIELDS
            if unknown:
                raise InvalidInput(
                    f"message {number} has unknown fields {shown_keys(unknown)}; "
                    "a message has author, role, text, message_id and ts"
                )
            text, author, mid = msg.get("text"), msg.get("author"), msg.get("message_id")
        else:
            text = getattr(msg, "text", None)
            author = getattr(msg, "author", None)
            mid = getattr(msg, "message_id", None)
        text = check_str(text, f"message {number} text")
        check_optional_id(author, f"message {number} author")
        check_optional_id(mid, f"message {number} message_id")
        if len(text) > MAX_MESSAGE_CHARS:
            raise InvalidInput(
                f"message {number} is {len(text)} characters long; learn() reads messages of "
                f"at most {MAX_MESSAGE_CHARS}: pass a shorter excerpt or a summary"
            )
        total += len(text)
        if total > MAX_SLICE_CHARS:
            raise InvalidInput(
                f"the slice holds more than {MAX_SLICE_CHARS} characters; learn in parts"
            )
    if summary is not None:
        check_str(summary, "summary")
        if len(summary) > MAX_MESSAGE_CHARS:
            raise InvalidInput(
                f"the summary is {len(summary)} characters long; the limit is {MAX_MESSAGE_CHARS}"
            )


__all__ = ["MAX_MESSAGE_CHARS", "MAX_SLICE_CHARS", "check_messages"]

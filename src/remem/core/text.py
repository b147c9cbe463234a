"""Text and ids at the boundary: one canonical form for stored text, one character set
for ids, and an inert form for human-facing output.

Stored text (note text, corrections, learned statements) is canonicalized by
:func:`canonical_text`: Unicode NFC; format characters (category ``Cf``: zero-width
spaces and joiners, bidirectional controls, soft hyphens, tag characters, BOM),
private-use characters (``Co``) and control characters (``Cc``) removed, with
whitespace (including line and paragraph separators) collapsed to single spaces and
trimmed. Recall renders exactly what is stored, so what the write-time guard checked
is what the model sees. A text that is only invisible characters is empty.

Ids (agent names, user and channel ids, run ids, message ids, scope ids, stewards) are
checked by :func:`check_id`: a string of 1 to :data:`MAX_ID_CHARS` printable
characters, with no whitespace, control, format, private-use, unassigned or surrogate
characters. Ids are never checked for card numbers or other content: a platform id is
whatever the platform says it is.

Lone surrogates (``"\\ud800"``, which no UTF-8 text can hold) are refused everywhere
with :class:`~remem.errors.InvalidInput`.

U+0000 (NUL) is removed from free text like every control character, and refused
(``InvalidInput`` naming the field) everywhere else, before any backend sees it: in ids
(:func:`check_id`), and in documents stored as they are written, such as rules
(:func:`check_document`). PostgreSQL can store no NUL in text, and a file that holds
one is read back differently by other tools: every backend refuses the same input.
"""

from __future__ import annotations

import re
import unicodedata

from remem.errors import InvalidInput

#: The longest id accepted (user, channel, run, message, scope ids; agent names are
#: shorter, see :mod:`remem.context`).
MAX_ID_CHARS = 200

_SURROGATE = re.compile("[\ud800-\udfff]")
#: Removed from stored text (whitespace among them becomes a space first).
_DROPPED = frozenset({"Cf", "Cc", "Co"})
#: ASCII control characters that are not whitespace (whitespace is collapsed by split()).
_ASCII_CONTROLS = {i: None for i in (*range(0x20), 0x7F)}


def check_str(value: object, what: str) -> str:
    """``value`` if it is a ``str`` without lone surrogates; else :class:`InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    if not value.isascii() and _SURROGATE.search(value):
        raise InvalidInput(
            f"{what} is not valid UTF-8 text (it holds a lone surrogate code point, "
            "U+D800..U+DFFF): pass text decoded from UTF-8"
        )
    return value


def check_document(value: object, what: str) -> str:
    """``value`` if it is a string that may be stored as written (a rule's markdown: line
    breaks and all), i.e. without a lone surrogate or a NUL; else :class:`InvalidInput`
    naming ``what``."""
    text = check_str(value, what)
    at = text.find("\x00")
    if at >= 0:
        raise InvalidInput(
            f"{what} holds U+0000 (NUL) at position {at + 1}: remove it (stored text may "
            "not contain NUL characters)"
        )
    return text


def canonical_text(value: object, what: str = "text") -> str:
    """The stored form of free text (see the module docstring); raises
    :class:`InvalidInput` for a non-string or a lone surrogate. May return ``""``."""
    text = check_str(value, what)
    if text.isascii():  # the usual case: nothing to normalize or drop but controls
        out = " ".join(text.split())
        if not out.isprintable():
            out = " ".join(out.translate(_ASCII_CONTROLS).split())
        return out
    if text.isprintable():  # no control, format, private-use or separator but the space
        return " ".join(unicodedata.normalize("NFC", text).split())
    category = unicodedata.category
    kept = "".join(ch for ch in text if ch.isspace() or category(ch) not in _DROPPED)
    return " ".join(unicodedata.normalize("NFC", kept).split())


def check_id(value: object, what: str, *, max_chars: int = MAX_ID_CHARS) -> str:
    """``value`` if it is a valid id (see the module docstring); else :class:`InvalidInput`
    naming ``what`` and the allowed character set."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} must be a non-empty string id such as 'discord:123'")
    if len(value) > max_chars:
        raise InvalidInput(f"{what} is {len(value)} characters long; ids hold at most {max_chars}")
    # isprintable() is False for every Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs character except
    # the ASCII space, which isspace() catches.
    if not value.isprintable() or " " in value:
        # Name the first offending character, not the value: an id may carry a secret.
        at, bad = next((i, c) for i, c in enumerate(value) if c == " " or not c.isprintable())
        raise InvalidInput(
            f"{what} is not a valid id: it holds U+{ord(bad):04X} at position {at + 1}; use "
            "printable characters without spaces, control or invisible characters"
        )
    return value


def check_optional_id(value: object, what: str) -> str | None:
    return None if value is None else check_id(value, what)


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def display(value: object, *, keep_newlines: bool = False) -> str:
    """An inert form of ``value`` for a terminal or a chat reply: every control, format,
    separator (other than the space), private-use, unassigned or surrogate character
    is shown as an escape (``\\x1b``, ``\\u202e``), so output cannot move the cursor,
    recolour the terminal, reorder text or hide characters. ``keep_newlines`` keeps
    ``\\n`` (multi-line documents such as rules)."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or (keep_newlines and ch == "\n"):
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        else:
            code = ord(ch)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
    return "".join(out)


__all__ = [
    "MAX_ID_CHARS",
    "canonical_text",
    "check_document",
    "check_id",
    "check_optional_id",
    "check_str",
    "display",
]

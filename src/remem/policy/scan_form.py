"""The strict form of a text that the content guard reads.

A note is checked for secrets in the form a reader will *see*, not in the bytes
it was given: ``ghp_`` + a zero-width space + the rest of a GitHub token is
rendered as the token, so it must be caught as the token. :func:`scan_form`
returns a stricter form than the one stored or rendered:

* NFKC normalization, so fullwidth ``ｇｈｐ＿``, mathematical ``𝐀𝐊𝐈𝐀``, ligatures
  and compatibility digits read as the ASCII they look like;
* format and other invisible characters removed (Unicode categories Cf, Cc,
  Co, Cs, Cn: zero-width spaces and joiners, bidi controls, the soft hyphen,
  tag characters ...), as are combining marks left over after composition
  (variation selectors, the combining grapheme joiner, decorations stacked on a
  letter) and the blank letters that render as nothing (Hangul fillers, the
  braille blank); line breaks and other control whitespace become spaces;
* every script's decimal digits read as ASCII digits; Cyrillic and Greek letters
  that look like Latin ones, and dash, slash, colon and quote look-alikes, folded
  to ASCII, so ``рassword`` (Cyrillic ``р``) or a token prefix typed with
  homoglyphs reads as the Latin word.

The form is only ever *read* by detectors; nothing stores or shows it. Pure
ASCII text is returned unchanged without any work (the guard is on the write
hot path and most notes are ASCII).
"""

from __future__ import annotations

import unicodedata

__all__ = ["scan_form"]

#: Categories dropped from the scan form (the renderer drops the C* and Z[lp] ones too).
_DROPPED = frozenset({"Cf", "Cc", "Co", "Cs", "Cn", "Mn", "Me"})
#: Control and separator characters that separate words: they become a space.
_SPACES = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x1f\x85\u2028\u2029")
#: Letters of category Lo/So that render as nothing.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u17b4\u17b5")

# Look-alikes that NFKC leaves alone, folded to the ASCII character they imitate
# (a cheap subset of Unicode's confusables.txt: the scripts and punctuation used to
# disguise Latin keywords and token prefixes).
_CONFUSABLES = {
    # Cyrillic
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i",
    "ј": "j", "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "г": "r",
    "ѕ": "s", "т": "t", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "ᴢ": "z",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Ё": "E", "Н": "H", "І": "I", "Ї": "I", "Ј": "J",
    "К": "K", "М": "M", "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y", "Ү": "Y",
    "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I", "Ь": "b", "ь": "b",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C", "Ϳ": "J",
    # Armenian and Latin small capitals / IPA that pass for ASCII letters
    "օ": "o", "ս": "u", "ց": "g", "հ": "h", "ո": "n", "ա": "w", "ɡ": "g", "ɑ": "a",
    "ı": "i", "ȷ": "j", "ʜ": "H", "ɪ": "I", "ᴋ": "K", "ᴏ": "o", "ᴘ": "P", "ꜱ": "s",
    # Punctuation
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "⁃": "-",
    "∕": "/", "⁄": "/", "⧸": "/", "∶": ":", "꞉": ":", "։": ":", "˸": ":", "ː": ":",
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"',
    "＿": "_", "ˍ": "_", "‗": "_", "․": ".", "ꓸ": ".",
}  # fmt: skip


def _fold(code: int) -> str | None:
    """What one code point of NFKC text becomes in the scan form (``None``: dropped)."""
    ch = chr(code)
    if ch in _SPACES:
        return " "
    category = unicodedata.category(ch)
    if ch in _BLANK_LETTERS or category in _DROPPED:
        return None
    if category == "Nd":  # any script's decimal digits read as ASCII digits
        return str(unicodedata.decimal(ch))
    return _CONFUSABLES.get(ch, ch)


class _FoldTable(dict[int, "str | None"]):
    """``str.translate`` table filled on first sight of each code point. It holds single
    characters, never text, and stops growing at a bound (then it computes)."""

    def __missing__(self, code: int) -> str | None:
        folded = _fold(code)
        if len(self) < _FOLD_TABLE_BOUND:
            self[code] = folded
        return folded


_FOLD_TABLE_BOUND = 8192
_TABLE = _FoldTable()


def scan_form(text: str) -> str:
    """``text`` as the secret scan reads it: NFKC, invisible characters removed,
    look-alike letters and punctuation folded to ASCII. Printable ASCII text is returned
    as is."""
    if text.isascii():
        return text if text.isprintable() else text.translate(_TABLE)
    return unicodedata.normalize("NFKC", text).translate(_TABLE)

"""A chat message reduced to what a command recognizer matches against.

Whitespace collapsed; leading @mentions, greetings and interjections ("hey bot,",
"ok,", "actually") and politeness ("could you please", trailing "thanks")
stripped; trailing punctuation, emoji and emoticons dropped. Curly apostrophes
are folded to ``'`` in :attr:`Utterance.folded` (for matching) only, at the same
indices, so a payload cut from it keeps the user's characters.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from remem.core.chat_words import (
    GREETINGS,
    INTERJECTIONS,
    PLEASE,
    QUOTE_FOLD,
    REQUEST_MODALS,
    YOU,
    alt,
    words,
)

#: Memory commands are short; a long message is a conversation that merely
#: mentions remembering, and treating it as a command risks storing junk.
MAX_CHARS = 600


# One-to-one replacements, so indices in the folded text match the original.
_FOLD = QUOTE_FOLD
_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCT = frozenset(" .!?,;:…~*")
# Emoji and their modifiers/joiners; not combining accents (category Mn),
# which belong to the last word.
_SYMBOL_CATEGORIES = frozenset({"So", "Sk", "Cf", "Me", "Co"})
_VARIATION_SELECTORS = frozenset("\ufe0e\ufe0f")
_EMOTICON_TAIL = re.compile(r"(?:[:;=]-?[()\[\]pPdDoO/\\|*]|<3|\^\^)$")
# Trailing courtesy turns a final "?" into a request ("forget that, ok?").
_TAIL_COURTESY = re.compile(
    rf"(?:[ ,.;:!-]*\b(?:{words(PLEASE)}|thanks|thank you|thanks a lot|thank you very much|thx)"
    r"|[ ]*[,.;!-]+ ?(?:ok|okay|alright|ty|cheers|if you can|if possible|if you don't mind"
    r"|would you|will you|could you|can you))$",
    re.I,
)
# Trailing address ("..., bot", "... <@U123>"): dropped, but not a courtesy.
_TAIL_VOCATIVE = re.compile(
    r"(?:[ ]*[,.;!-]+ ?(?:bot|remem|assistant|@[\w.\-]+)|[ ]*<[@#!][^>]*>)$", re.I
)
_HEAD_NOISE = re.compile(
    r"(?:(?:<[@#!][^>]*>|@[\w.\-]+)[,:]? ?"
    rf"|(?:{words(GREETINGS)}|dear|ok|okay) (?:bot|remem|assistant|there)\b[,:!.]* ?"
    rf"|(?:{words(GREETINGS)}|dear) [\w.\-]+[,:!]+ ?"
    rf"|(?:{words(GREETINGS, INTERJECTIONS)}|dear|ah|um+|uh+|hm+"
    r"|sorry|oops|wait|but|then|ugh|just|now)\b[,:!.]* ?"
    r"|(?:no|nope|nah)[,.!]+ ?"
    r"|(?:bot|remem|assistant)[,:!]+ ?"
    r"|[^\w@<]+)",
    re.I,
)
_POLITE_HEAD = re.compile(
    alt(
        words(PLEASE),
        f"{words(REQUEST_MODALS)} {words(YOU)}(?: please| kindly| maybe| just| also)?",
        "i'?d like you to", "i would like you to", "i want you to", "i need you to",
        "i'm asking you to", "go ahead and",
    )
    + r"\b,? ?",
    re.I,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Utterance:
    """A message reduced to its core. ``folded`` has the same length as ``text``."""

    text: str
    folded: str
    question: bool
    polite: bool


def _is_trailing_noise(char: str) -> bool:
    return (
        char in _TRAILING_PUNCT
        or char in _VARIATION_SELECTORS
        or unicodedata.category(char) in _SYMBOL_CATEGORIES
    )


def _strip_tail(text: str) -> tuple[str, bool, bool]:
    """Drop trailing punctuation, emoji, emoticons, courtesy tags and vocatives.

    Returns ``(text, question, polite)``: whether a ``?`` was dropped, and
    whether a politeness tag was (which makes a final ``?`` a request).
    """
    question = polite = False
    while True:
        before = text
        end = len(text)
        while end:
            emoticon = _EMOTICON_TAIL.search(text, 0, end)
            if emoticon is not None:
                end = emoticon.start()
                continue
            char = text[end - 1]
            if not _is_trailing_noise(char):
                break
            question = question or char == "?"
            end -= 1
        text = text[:end]
        courtesy = _TAIL_COURTESY.search(text.translate(_FOLD))
        if courtesy is not None and courtesy.start() > 0:
            text, polite = text[: courtesy.start()], True
        vocative = _TAIL_VOCATIVE.search(text.translate(_FOLD))
        if vocative is not None and vocative.start() > 0:
            text = text[: vocative.start()]
        if text == before:
            return text, question, polite


def _strip_head(text: str) -> tuple[str, bool]:
    """Drop leading mentions, greetings, interjections and politeness.

    Returns ``(text, polite)``.
    """
    polite = False
    while True:
        folded = text.translate(_FOLD)
        noise = _HEAD_NOISE.match(folded)
        if noise is not None and noise.end() > 0:
            text = text[noise.end() :]
            continue
        courtesy = _POLITE_HEAD.match(folded)
        if courtesy is not None and courtesy.end() > 0:
            text, polite = text[courtesy.end() :], True
            continue
        return text, polite


def prepare(text: str) -> Utterance | None:
    """Normalize ``text`` for matching; ``None`` if nothing command-like is left."""
    if len(text) > MAX_CHARS:
        return None
    core = _WHITESPACE.sub(" ", text).strip()
    core, question, polite_tail = _strip_tail(core)
    core, polite_head = _strip_head(core)
    core, question_again, polite_again = _strip_tail(core)
    if not any(char.isalpha() for char in core):
        return None
    return Utterance(
        text=core,
        folded=core.translate(_FOLD),
        question=question or question_again,
        polite=polite_head or polite_tail or polite_again,
    )

"""Preparing a message for the classifier's rules: quotes, spoofed authority, clauses.

Pure text handling in the order :mod:`remem.formation.classify` applies it:
:func:`normalise` quotes and apostrophes → :func:`drop_block_quotes` (``> ...``
lines) → :func:`mask_quotes` (quoted words are never the speaker's own claim or
directive) → :func:`split_clauses` (sentences, ``..., and I ...`` clauses) → per
clause :func:`clean_sentence` (fillers, authority-spoofing prefixes, request
openers). What is left goes to the ladder of :mod:`remem.formation.rules`.
"""

from __future__ import annotations

import re

from remem.core.chat_words import (
    GREETINGS,
    INTERJECTIONS,
    PLEASE,
    QUOTE_FOLD,
    REQUEST_MODALS,
    YOU,
    words,
)

#: Roles a message may claim ("As the admin, ..."); the ladder reuses it.
ROLE = (
    r"(?:admin|administrator|owner|manager|boss|lead|supervisor|director|head|ceo|cto|cfo|"
    r"coo|vp|president|founder|moderator|mod|steward|superuser|root|sysadmin|operator|"
    r"maintainer|chief)"
)
#: Words that make a statement a one-off, not a standing rule; the ladder reuses it.
_ONCE = (
    r"\b(?:just this once|this once|this time|for now|just for today|only today|for today|"
    r"one[- ]off|just once)\b"
)
ONE_OFF = re.compile(_ONCE, re.I)

_TRANSLATE = QUOTE_FOLD
_QUOTED = re.compile(r'"[^"\n]*"|(?<!\w)\'[^\'\n]+\'(?!\w)|`[^`\n]*`')
PLACEHOLDER = re.compile(r"⟦(\d+)⟧")
_SENTENCE_SPLIT = re.compile(
    r"(?<!\b[DM]r\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)"
    r"(?<=[.!?])\s+|\n+"
)
# "..., and I ..." starts a second statement; so does ", from now on ..." after a claim.
_CLAUSE_SPLIT = re.compile(
    r",?\s+(?:and|but)\s+(?=(?:i|i'm|i've|i'd|my)\b)"
    r"|,\s+(?:and\s+)?(?=(?:from now on|going forward|moving forward|always|never|please|use)\b)",
    re.I,
)
_SUBORDINATE = re.compile(
    r"^(?:when|whenever|if|once|after|before|for|every time|each time)\b", re.I
)

_AUTHORITY_PREFIX = re.compile(
    r"^(?:"
    r"[\[(<{]\s*(?:admin|administrator|owner|system|sys|root|moderator|mod|manager|operator|"
    r"superuser|sudo|boss)[^\])>}]{0,24}[\])>}]\s*[:,-]?\s*"
    r"|(?:admin|administrator|owner|system|root|moderator|sudo|operator|superuser|management)"
    r"(?:\s+(?:override|mode|message|note|command|notice|instruction|says))?\s*(?::|>|\s-)\s*"
    r"|(?:note|message|instruction|directive|order|notice)\s+from\s+(?:the\s+|your\s+)?"
    r"(?:admin|administrator|owner|manager|management|boss)\s*[:,-]\s*"
    r"|(?:speaking\s+|writing\s+)?as\s+(?:the|an?|your|this)\s+(?:\w+\s+){0,2}?"
    + ROLE
    + r"(?:\s+(?:here|of\s+(?:this|the)\s+\w+))?\s*[,:-]?\s*"
    r"(?:i\s+(?:hereby\s+)?(?:say|decree|declare|rule|insist|order|instruct|direct|tell you|"
    r"am telling you)|i'm\s+telling\s+you)?(?:\s+that)?\s*[,:-]?\s*"
    r")",
    re.I,
)
_LEAD_FILLER = re.compile(
    rf"^(?:{words(GREETINGS, INTERJECTIONS)}|by the way|fyi|just so you know|"
    r"for the record|for your info(?:rmation)?|heads up|please note(?: that)?|quick note|"
    r"note|yeah|yes|honestly|anyway|ps|one more thing|fwiw|tbh|"
    r"imo|for what it's worth|"
    r"as i (?:said|mentioned)(?: before| earlier)?|@\S+|<@\w+>)(?=[\s,:.!-]|$)[\s,:.!-]*",
    re.I,
)
_GREETING_NAME = re.compile(rf"^{words(GREETINGS)}\s+[a-z]\w*\s*[,:!-]\s*", re.I)
_REMEMBER = re.compile(
    r"^(?:can you |could you |please )?(?:remember|keep in mind|make a note|note down|"
    r"take note|don't forget|do not forget)(?:\s+(?:that|this))?\s*(?:[:,-]\s*|\s+(?!to\b))",
    re.I,
)
_REQUEST_OPENER = re.compile(
    rf"^(?:would you mind\s+|{words(REQUEST_MODALS)}\s+{words(YOU)}\s+"
    r"(?!rather\b|like\b|say\b|agree\b|prefer\b|know\b|be\b)(?:please\s+)?|"
    r"(?:i'd|i would|i)\s+(?:like|want|need)\s+you\s+to\s+|i'd love (?:it )?if you (?:could )?)",
    re.I,
)
_PLEASE = re.compile(rf",?\s*\b{words(PLEASE)}\b\s*,?", re.I)


def normalise(text: str) -> str:
    """Unify typographic quotes and apostrophes, so one set of patterns covers both."""
    return text.translate(_TRANSLATE)


def mask_quotes(text: str) -> tuple[str, list[str]]:
    """Replace quoted spans with ``⟦n⟧`` placeholders; returns the masked text and the spans.

    Quoted words are someone's words being mentioned, not the speaker's
    claim or directive, so the ladder never sees them.
    """
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"⟦{len(spans) - 1}⟧"

    return _QUOTED.sub(keep, text), spans


def restore_quotes(text: str, spans: list[str]) -> str:
    return PLACEHOLDER.sub(lambda m: spans[int(m.group(1))], text)


def drop_block_quotes(text: str) -> str:
    """Remove ``> quoted`` lines: pasted text is nobody's statement here."""
    kept = (line for line in text.splitlines() if not strip_authority(line).startswith(">"))
    return "\n".join(kept)


def strip_authority(text: str) -> str:
    """Remove leading authority-spoofing prefixes ("[admin]:", "As the owner, I say:")."""
    text = text.lstrip()
    previous = None
    while previous != text:
        previous = text
        text = _AUTHORITY_PREFIX.sub("", text, count=1).lstrip()
    return text


def split_clauses(text: str) -> list[str]:
    """Sentences, and ``..., and I ...`` / ``... and my ...`` clauses within them."""
    out: list[str] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        sentence = strip_authority(sentence)
        start = 0
        for match in _CLAUSE_SPLIT.finditer(sentence):
            left = sentence[start : match.start()]
            # "Dana and I agreed" is one subject; "When you write to me, use French" one order
            right = sentence[match.end() :]
            if (
                len(left.split()) >= 2
                and len(right.split()) >= 3  # ", never directly" qualifies; it is no clause
                and not (_SUBORDINATE.match(left) or ONE_OFF.search(left))
            ):
                out.append(left)
                start = match.end()
        out.append(sentence[start:])
    return [part.strip() for part in out if part.strip(" .!?;,")]


def clean_sentence(sentence: str) -> tuple[str, bool, bool]:
    """Strip fillers, spoofed authority, "please" and request openers.

    Returns ``(core, request, remember)``: ``request`` when the sentence asked
    the agent to do something ("can you ..."), ``remember`` when it asked the
    agent to remember it.
    """
    text = sentence.strip()
    request = remember = False
    previous = None
    while previous != text:
        previous = text
        text = strip_authority(text)
        text = _GREETING_NAME.sub("", text, count=1)
        text = _LEAD_FILLER.sub("", text, count=1)
        if _REMEMBER.match(text):
            text, remember = _REMEMBER.sub("", text, count=1), True
        if _REQUEST_OPENER.match(text):
            text, request = _REQUEST_OPENER.sub("", text, count=1), True
        text = _PLEASE.sub(" ", text).strip(" ,")
    return text.strip().rstrip(" .!;,"), request, remember

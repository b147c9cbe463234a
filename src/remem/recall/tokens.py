"""Tokenizing note and query text for lexical relevance (pure, deterministic)."""

from __future__ import annotations

import re

from remem.recall.memos import MEMO_LIMIT

_WORD = re.compile(r"[0-9a-z]+(?:'[a-z]+)?")

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
        "weren",
        "won",
        "wouldn",
        "shouldn",
        "couldn",
        "ve",
        "ll",
        "re",
        "d",
        "m",
        "o",
        "y",
        "also",
        "get",
        "got",
        "go",
        "going",
        "gonna",
        "just",
        "really",
        "yeah",
        "yes",
        "oh",
        "well",
        "like",
        "lot",
        "lots",
        "much",
        "many",
        "thing",
        "things",
    ]
)


def stem(word: str) -> str:
    """A light suffix stripper: enough to match plurals and common verb forms."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ied", "y")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)] + keep
    for suffix in ("ingly", "edly", "ing", "ed", "ly", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "s" and base.endswith(("s", "u", "i")):
                return word
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]
            return base
    return word


def tokens(text: str, stems: dict[str, str] | None = None) -> list[str]:
    """Content-word stems of ``text``, in order, stopwords removed. ``stems``: one agent's
    memo of stems (see :mod:`remem.recall.memos`), or None to memoize nothing."""
    out = []
    for match in _WORD.findall(text.casefold().replace("’", "'")):
        word = match.split("'", 1)[0]
        if word and word not in STOPWORDS:
            if stems is None:
                out.append(stem(word))
                continue
            found = stems.get(word)
            if found is None:
                if len(stems) >= MEMO_LIMIT:
                    stems.clear()
                found = stems[word] = stem(word)
            out.append(found)
    return out

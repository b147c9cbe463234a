"""What a command's payload must look like: a statement, not chatter.

The recognizer (:mod:`remem.commands.recognize`) cuts a payload from REMEMBER and
CORRECT commands; these checks decide whether it reads as something worth storing
("I prefer X", "my birthday is June 4") rather than a reminiscence ("that time we
...") or a to-do ("we need to rerun CI"). Texts are folded utterances (single spaces,
``'`` apostrophes). Internal to the recognizer.
"""

from __future__ import annotations

import re

_SUBJECT_START = re.compile(r"(?:i|i'm|im|i've|i'd|i'll|we|we're|we've|we'd|we'll) \S", re.I)
_POSSESSIVE_START = re.compile(r"(?:my|our) \S+ \S", re.I)
# A finite verb somewhere: tells "my birthday is June 4" from "my password".
_FINITE_VERB = re.compile(
    r"\b(?:is|are|was|were|am|has|have|had|will|can|should|must|does|do|did|starts|ends|leaves"
    r"|lives|works|runs|goes|changed|moved|needs|wants|likes|prefers|uses|falls|comes|'re)\b",
    re.I,
)
# "I/we" + obligation or a past-tense activity verb: a report or to-do.
_ACTION_REPORT = re.compile(
    r"(?:i|we) (?:need to|have to|had to|should|must|gotta|got to|ran|re-?ran|tried|checked|tested"
    r"|restarted|rebuilt|fixed|pushed|merged|deployed|did|meant|asked|said|told|sent|saw|looked)\b",
    re.I,
)
# After "remember that": words that make "that" a determiner ("that time we ...")
# or a pronoun ("that for next time") instead of introducing a statement.
_NOT_A_CLAUSE = re.compile(
    r"(?:time|times|day|days|night|morning|evening|afternoon|week|weekend|month|year|summer|winter"
    r"|trip|meeting|party|song|movie|film|show|game|match|place|restaurant|bar|hotel|guy|girl|man"
    r"|woman|person|people|one|ones|thing|things|moment|story|joke|episode|book|bug|incident"
    r"|conversation|talk|video|photo|picture|email|message|for|in|on|at|from|about|when|next"
    r"|later|too|as|because|please|forever|always|again|and|but|or|so|ok|okay|now|tomorrow"
    r"|today|tonight)\b",
    re.I,
)


def is_first_person_statement(payload: str) -> bool:
    """True for "I prefer X", "we ship on Thursdays", "my birthday is June 4"."""
    if _SUBJECT_START.match(payload):
        return True
    return bool(_POSSESSIVE_START.match(payload) and _FINITE_VERB.search(payload))


def is_correction(payload: str) -> bool:
    """A first-person statement that is not a to-do or an activity report.

    "That's wrong, I ran the tests" / "..., we need to rerun CI" argue with
    the bot's answer; they are not facts to store in place of a note.
    """
    return is_first_person_statement(payload) and not _ACTION_REPORT.match(payload)


def is_that_clause(payload: str) -> bool:
    """True when the text after "remember that" reads as a statement."""
    if is_first_person_statement(payload):
        return True
    return len(payload.split()) >= 2 and not _NOT_A_CLAUSE.match(payload)


def is_statement(payload: str) -> bool:
    """Weakest check, for explicit framings ("remember: X", "that note is wrong: X")."""
    return len(payload.split()) >= 2

"""The English chat words both text matchers strip: one lexicon, two readers.

The command recognizer (:mod:`remem.commands.utterance`) and the classifier's sentence
preparation (:mod:`remem.formation.sentences`) both fold typographic quotes and drop the
greetings, interjections and politeness that open a chat message ("hey Dana,", "ok so",
"could you please"). The words live here once; each matcher builds its own patterns
from them (the recognizer strips a whole message down to a command, the classifier one
sentence down to a statement). Internal: not part of the public API.
"""

from __future__ import annotations

#: Typographic apostrophes and double quotes, folded one to one (the folded text has
#: the same length, so indices found in it cut the original).
QUOTE_FOLD = str.maketrans(
    {"’": "'", "‘": "'", "ʼ": "'", "′": "'", "“": '"', "”": '"', "«": '"', "»": '"'}
)
#: Greetings that open a message ("hey bot", "hi Dana,").
GREETINGS = ("hey", "hi", "hello", "yo")
#: Interjections that open a message and say nothing ("ok,", "so", "actually").
INTERJECTIONS = (
    "ok", "okay", "oh", "so", "also", "and", "btw", "well", "alright", "right", "actually",
)  # fmt: skip
#: Words of politeness ("please", "kindly").
PLEASE = ("please", "pls", "plz", "kindly")
#: Modal verbs that open a request to the agent ("can you ...", "would u ...").
REQUEST_MODALS = ("can", "could", "would", "will")
#: How a request addresses the agent after its modal verb.
YOU = ("you", "u", "ya")


def alt(*choices: str) -> str:
    """A non-capturing alternation of regex fragments: ``(?:a|b|c)``."""
    return "(?:" + "|".join(choices) + ")"


def words(*groups: tuple[str, ...]) -> str:
    """The words of ``groups`` as one regex alternation (they are plain words)."""
    return alt(*(word for group in groups for word in group))

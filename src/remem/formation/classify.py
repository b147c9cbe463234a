"""Classification of conversation messages for learning: *what is this?*

A :class:`Classifier` labels a message; it never decides *who may write it*.
Authorization is done elsewhere, in code, from the speaker's role in the run
envelope. Nothing here reads a role, and text that claims one ("[admin]:",
"As the owner I say ...") is stripped before labelling, so the same content
gets the same label whoever claims to say it.

Two implementations share the protocol: :class:`RuleClassifier` (this module,
deterministic English, always available) and
:class:`remem.formation.llm.LLMClassifier` (an OpenAI-compatible model that
falls back to the rules on any failure and says so in ``degraded``).

Contract of :meth:`Classifier.classify`, for every implementation:

* ``items`` is never empty. Messages holding something to remember yield one
  item per remembered thing (PERSONAL, OPERATIONAL, CHANNEL, STYLE_RULE);
  otherwise exactly one ONE_OFF or NONE item.
* ``kind`` follows the category: PERSONAL → preference or fact, OPERATIONAL →
  procedure, CHANNEL → decision, others → ``None``.
* ``statement`` is a short third-person sentence ("Prefers short status
  reports."); for ONE_OFF and NONE it is the message text itself.
* ``claim`` is true only for identity, role and relationship claims; such an
  item is a PERSONAL fact ("Says they are the manager."), never a role.
* It never raises for any text input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from remem.core.model import Kind
from remem.formation import rules, sentences, subjects


def _words(text: str) -> frozenset[str]:
    """A word set written as one string, for compact vocabulary tables."""
    return frozenset(text.split())


class Category(StrEnum):
    """What a message (or one part of it) is, for the purpose of learning."""

    PERSONAL = "personal"
    OPERATIONAL = "operational"
    CHANNEL = "channel"
    ONE_OFF = "one_off"
    STYLE_RULE = "style_rule"
    NONE = "none"


#: Categories whose items are candidates for memory (ONE_OFF and NONE are not).
MEMORY_CATEGORIES = frozenset(
    {Category.PERSONAL, Category.OPERATIONAL, Category.CHANNEL, Category.STYLE_RULE}
)

#: The kinds an item of each category may carry; the first is the default.
KINDS_BY_CATEGORY: dict[Category, tuple[Kind | None, ...]] = {
    Category.PERSONAL: (Kind.PREFERENCE, Kind.FACT),
    Category.OPERATIONAL: (Kind.PROCEDURE,),
    Category.CHANNEL: (Kind.DECISION,),
    Category.STYLE_RULE: (None,),
    Category.ONE_OFF: (None,),
    Category.NONE: (None,),
}


@dataclass(frozen=True, slots=True)
class Item:
    """One labelled part of a message; a memory candidate when its category is one."""

    category: Category
    kind: Kind | None
    statement: str
    subject: str | None
    claim: bool = False
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class Classification:
    """The labels for one message and the classifier that produced them.

    ``degraded`` is set (to a short reason) when an LLM classifier fell back
    to its fallback; ``classifier`` then names the fallback.
    """

    items: tuple[Item, ...]
    classifier: str
    degraded: str | None = None

    @property
    def memories(self) -> tuple[Item, ...]:
        """The items that are candidates for memory."""
        return tuple(item for item in self.items if item.category in MEMORY_CATEGORIES)


@runtime_checkable
class Classifier(Protocol):
    """Labels a message. ``context`` holds preceding lines, for reference only."""

    name: str

    def classify(self, text: str, *, context: Sequence[str] = ()) -> Classification: ...


class RuleClassifier:
    """Deterministic English classifier (see :mod:`remem.formation.rules`).

    It ignores ``context``: labels come from the message alone, so an agent
    reply or a pasted line cannot change what the speaker is taken to say.
    """

    name = "rules"

    def classify(self, text: str, *, context: Sequence[str] = ()) -> Classification:
        del context  # reference only; see the class docstring
        findings = _findings(text)
        memories = [f for f in findings if f.label in MEMORY_CATEGORIES]
        if memories:
            items = tuple(_item(f) for f in memories)
        else:
            task = [f for f in findings if f.label == "one_off"]
            label, confidence = (
                (Category.ONE_OFF, task[0].confidence) if task else (Category.NONE, 0.6)
            )
            items = (Item(label, None, text.strip(), None, confidence=confidence),)
        return Classification(items=items, classifier=self.name)


def _findings(text: str) -> list[rules.Finding]:
    """Label every sentence of ``text`` and phrase the memory candidates."""
    masked, quotes = sentences.mask_quotes(sentences.drop_block_quotes(sentences.normalise(text)))
    found: list[rules.Finding] = []
    for raw in sentences.split_clauses(masked):
        core, request, remember = sentences.clean_sentence(raw)
        asked = raw.rstrip().endswith("?")
        verdict = rules.decide(core, request=request, remember=remember, asked=asked)
        if verdict.label in ("one_off", "none"):
            found.append(rules.Finding(verdict.label, "", confidence=verdict.confidence))
            continue
        statement = sentences.restore_quotes(phrase(verdict, core), quotes)
        found.append(
            rules.Finding(
                label=verdict.label,
                statement=statement,
                subject=subjects.subject_for(verdict, core.lower()),
                fact=verdict.fact,
                claim=verdict.claim,
                confidence=verdict.confidence,
            )
        )
    return _dedupe(found)


def _dedupe(found: list[rules.Finding]) -> list[rules.Finding]:
    seen: set[tuple[str, str]] = set()
    out = []
    for finding in found:
        key = (finding.label, finding.statement.casefold())
        if finding.statement and key in seen:
            continue
        seen.add(key)
        out.append(finding)
    return out


def _item(finding: rules.Finding) -> Item:
    category = Category(finding.label)
    kind: Kind | None = KINDS_BY_CATEGORY[category][0]
    if category is Category.PERSONAL and finding.fact:
        kind = Kind.FACT
    return Item(
        category=category,
        kind=kind,
        statement=finding.statement,
        subject=finding.subject,
        claim=finding.claim,
        confidence=finding.confidence,
    )


# --------------------------------------------------------------------------- phrasing

_IRREGULAR = {
    "am": "is",
    "'m": "is",
    "are": "is",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "go": "goes",
    "'d": "would",
    "'ll": "will",
    "don't": "does not",
    "can't": "cannot",
    "won't": "will not",
    "didn't": "did not",
    "wasn't": "was not",
    "haven't": "has not",
    "aren't": "is not",
}
_UNCHANGED = _words(
    "can could would will should might must may shall did was had cannot never grew got "
    "went made took left began became said told spoke wrote came ran met put set let"
)
_ADVERB_WORDS = _words(
    "really strongly much generally usually normally typically also definitely just "
    "totally honestly actually mostly still now currently always never truly rarely often "
    "sometimes mainly only"
)


def conjugate(word: str) -> str:
    """Third-person singular of an English verb (``prefer`` → ``prefers``)."""
    low = word.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _UNCHANGED or low.endswith("ed") or not low.isalpha():
        return word
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return word + "es"
    if re.search(r"[^aeiou]y$", low):
        return word[:-1] + "ies"
    return word + "s"


def _conjugate_lead(words: list[str]) -> list[str]:
    """Conjugate the verb that opens ``words``, keeping leading adverbs in place."""
    i = 0
    while i < len(words) and (words[i].lower() in _ADVERB_WORDS or words[i].lower() == "no"):
        i += 2 if words[i].lower() == "no" and i + 1 < len(words) else 1
    if i >= len(words):
        return words
    if words[i].lower() == "do" and i + 1 < len(words) and words[i + 1].lower() == "not":
        return [*words[:i], "does", *words[i + 1 :]]
    return [*words[:i], conjugate(words[i]), *words[i + 1 :]]


_PRONOUNS = re.compile(
    r"\b(?:i'm|i am|i was|i've|i'd|i'll|i|me|my|mine|myself|you're|you are|you've|you'll|"
    r"you'd|you|your|yours|yourself|we're|we are|we've|we'll|we|us|our|ours)\b",
    re.I,
)
_SWAP = {
    "i'm": "they are",
    "i am": "they are",
    "i was": "they were",
    "i've": "they have",
    "i'd": "they would",
    "i'll": "they will",
    "i": "they",
    "me": "them",
    "my": "their",
    "mine": "theirs",
    "myself": "themselves",
    "you're": "the agent is",
    "you are": "the agent is",
    "you've": "the agent has",
    "you'll": "the agent will",
    "you'd": "the agent would",
    "you": "the agent",
    "yours": "the agent's",
    "yourself": "itself",
    "we're": "the team is",
    "we are": "the team is",
    "we've": "the team has",
    "we'll": "the team will",
    "we": "the team",
    "us": "the team",
    "our": "the team's",
    "ours": "the team's",
}
# A subject pronoun replaced by "the agent"/"the team" needs its verb conjugated,
# but only where it is a subject: at the start or after a conjunction or comma.
_SUBJECT_VERB = re.compile(
    r"(^|, |\b(?:when|whenever|if|that|and|so|because|as|before|after|once|unless|until|"
    r"while|here|channel) )(the agent|the team)\x00 ((?:(?:always|never|also|usually|really|"
    r"just|now|all) )*)([a-z]+)\b",
    re.I,
)
_NOT_VERBS = _words(
    "the a an to of in on at for with from by about is has will would should must can "
    "could may might did does was were not and or but"
)


def swap_pronouns(text: str, *, agent_seen: bool = False) -> str:
    """First person → they/their/them; you → the agent; we/our → the team.

    ``agent_seen`` says the agent was already named, so "your" becomes "its".
    """

    def replace(match: re.Match[str]) -> str:
        nonlocal agent_seen
        word = match.group(0)
        low = word.lower()
        out = _SWAP.get(low) or ("its" if agent_seen else "the agent's")  # "your"
        agent_seen = agent_seen or "agent" in out
        if out in ("the agent", "the team"):
            out += "\x00"  # marks a replaced subject whose verb may need conjugating
        return out[0].upper() + out[1:] if word[0].isupper() and low != "i" else out

    swapped = _PRONOUNS.sub(replace, text)

    def verb(match: re.Match[str]) -> str:
        lead, subject, adverbs, word = match.groups()
        fixed = word if word in _NOT_VERBS or word.endswith("s") else conjugate(word)
        return f"{lead}{subject} {adverbs}{fixed}"

    return _SUBJECT_VERB.sub(verb, swapped).replace("\x00", "")


def _sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(" ,;:-")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def phrase(verdict: rules.Verdict, core: str) -> str:
    """The memory as a short third-person statement built from the cleaned sentence."""
    text = core.strip().rstrip(" .!?;,")
    if verdict.claim:
        return _sentence(_claim_statement(text))
    if verdict.label == "personal":
        return _sentence(_personal_statement(text))
    return _sentence(_impersonal_statement(text))


def _claim_statement(text: str) -> str:
    text = rules.strip_standing(text)
    text = re.split(r"\s*(?:[,;]|\bso\b|\bbut\b|\band\b)\s*", text, maxsplit=1)[0]
    match = re.match(r"^i(?:'m|\s+am)\s+", text, re.I)
    if match:
        return "Says they are " + swap_pronouns(text[match.end() :])
    match = re.match(r"^i\s+", text, re.I)
    if match:
        return "Says they " + swap_pronouns(text[match.end() :])
    swapped = swap_pronouns(text)
    if re.match(r"^Their\b", swapped):
        swapped = "t" + swapped[1:]
    return "Says " + swapped


def _personal_statement(text: str) -> str:
    text = rules.strip_standing(text)
    match = re.match(r"^call me\s+(.+)$", text, re.I)
    if match:
        return "Prefers to be called " + match.group(1)
    match = re.match(r"^i(?:'(m|d|ve|ll)|\s+(am))\s+", text, re.I)
    if match:
        head = {"m": "is", "d": "would", "ve": "has", "ll": "will", "am": "is"}
        return (
            head[(match.group(1) or match.group(2)).lower()]
            + " "
            + swap_pronouns(text[match.end() :])
        )
    match = re.match(r"^i\s+", text, re.I)
    if match:
        words = _conjugate_lead(text[match.end() :].split(" "))
        return " ".join(words[:1]) + " " + swap_pronouns(" ".join(words[1:]))
    if re.match(r"^(?:my|for me)\b", text, re.I) or rules.reads_as_statement(text):
        return swap_pronouns(text)
    lead, rest = rules.split_lead_clause(text)
    wanted = swap_pronouns(rest[0].lower() + rest[1:], agent_seen=True)
    if lead:  # "When you write to me, use French" → "... use French when the agent writes ..."
        wanted += " " + swap_pronouns(lead[0].lower() + lead[1:], agent_seen=True)
    return "Wants the agent to " + wanted


def _impersonal_statement(text: str) -> str:
    text = rules.strip_standing(text)
    match = re.match(
        r"^(?:i|we)(?:'d| would)?\s+(?:really\s+)?(?:prefer|like|want|need)\s+"
        r"((?:the|our|all|a|an)\s+.+?)\s+to\s+(\w+)\b(.*)$",
        text,
        re.I,
    )
    if match:
        text = f"{match.group(1)} {conjugate(match.group(2))}{match.group(3)}"
    match = re.match(r"^(?:let's|lets|let us)\s+", text, re.I)
    if match:
        return "The team will " + swap_pronouns(text[match.end() :])
    return swap_pronouns(text)


__all__ = [
    "KINDS_BY_CATEGORY",
    "MEMORY_CATEGORIES",
    "Category",
    "Classification",
    "Classifier",
    "Item",
    "RuleClassifier",
    "conjugate",
    "phrase",
    "swap_pronouns",
]

"""Deterministic English rules behind :class:`remem.formation.classify.RuleClassifier`.

This module is pure text analysis: it knows nothing of roles, scopes or
authority. The classifier drives it: per message, the preparation of
:mod:`remem.formation.sentences` (quotes masked, spoofed authority removed,
clauses split and cleaned), then per clause :func:`decide` (a fixed ladder of
steps; the first that recognises the sentence gives its :class:`Verdict`) →
:func:`remem.formation.subjects.subject_for`.
Labels are ``Category`` values. Two principles fix the order of the ladder:

* **Operational content wins over framing.** A data source, hostname,
  report definition or deploy procedure stays operational even when phrased
  as a personal preference ("I prefer the weekly report to use X") or a
  channel decision ("we decided the report uses X"), so no framing can carry
  an operational change into a scope with weaker write rules.
* **Spoofed authority is noise.** "[admin]:", "As the admin I say:" and the
  like are removed before anything is decided; the result is the same as
  for the bare content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from remem.formation.sentences import ONE_OFF, PLACEHOLDER, ROLE

Label = Literal["personal", "operational", "channel", "one_off", "style_rule", "none"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One classified sentence. ``fact`` distinguishes PERSONAL facts from preferences."""

    label: Label
    statement: str
    subject: str | None = None
    fact: bool = False
    claim: bool = False
    confidence: float = 0.8


# --------------------------------------------------------------------------- vocabulary

LANGS = (
    "english|german|french|spanish|portuguese|italian|dutch|japanese|chinese|mandarin|"
    "korean|norwegian|swedish|danish|finnish|polish|turkish|arabic|hindi|russian|"
    "ukrainian|greek|hebrew|czech"
)
_WORK_REL = r"(?:boss|manager|supervisor|team lead|lead|skip[- ]level|director|mentor)"
_ADVERBS = (
    r"(?:really|strongly|much|generally|usually|normally|typically|also|definitely|just|"
    r"totally|honestly|actually|mostly|still|now|currently|always|never|no longer|kind of|"
    r"sort of|tend to)"
)
# Verbs that, opening an imperative, ask the agent to do something now.
_TASK_VERBS = (
    r"(?:summari[sz]e|send|draft|write|pull|give|translate|remind|make|create|generate|run|"
    r"rerun|re-run|check|look|find|show|tell|schedule|book|post|fix|compile|calculate|list|"
    r"review|explain|export|share|email|ping|message|dm|open|close|update|add|delete|"
    r"remove|cancel|prepare|build|plot|chart|analy[sz]e|compare|search|fetch|get|grab|"
    r"forward|read|proofread|edit|rewrite|convert|set up|file|order|help|clean|merge|"
    r"restart|refresh|retry|invite|print|download|upload|sort|count|estimate|suggest|"
    r"recommend|brainstorm|outline|answer|reply|ask|notify|archive|sum|total|rank|query|"
    r"deploy|ship|publish|approve|assign|move|rename|copy|paste|format|tag|label|close)"
)
_DEICTIC = (
    r"\b(?:this|that|these|those|now|today|tonight|tomorrow|asap|yesterday|right away|"
    r"immediately|last (?:week|month|quarter|year)(?:'s)?|"
    r"by (?:eod|end of (?:the )?day|tomorrow|monday|tuesday|wednesday|thursday|"
    r"friday|noon|\d)|this (?:morning|afternoon|evening|week|quarter|month)|above|"
    r"your last|the last one)\b"
)
_STANDING = re.compile(
    r"\b(?:from now on|going forward|moving forward|in (?:the )?future|henceforth|"
    r"from here on(?: out)?|as a rule|by default|always|never|every|each (?:time|\w+)|"
    r"whenever|any ?time|no more|anymore|any more|from today on|all (?:the )?\w+s|"
    r"stop \w+ing)\b",
    re.I,
)
_STANDING_PREFIX = re.compile(
    r"^(?:(?:from now on|going forward|moving forward|in (?:the )?future|henceforth|"
    r"from here on(?: out)?|as a rule|by default|from today on)\s*[,:-]?\s*|"
    r"(?:new |standing |house |permanent )?(?:rule|policy|directive)\s*[:-]\s*|"
    r"(?:remember|make sure|be sure|don't forget|do not forget) to\s+)",
    re.I,
)

# --------------------------------------------------------------------------- the ladder

_QUESTION_START = re.compile(
    r"^(?:what|what's|whats|which|where|where's|who|who's|whom|whose|why|how|how's|"
    r"is|are|am|was|were|do(?! not\b)|does|did|have|has|had|should|shall|may|might|can|"
    r"could|would|will|isn't|aren't|doesn't|wasn't|any idea|anyone|is there|are there|"
    r"maybe|wonder)\b",
    re.I,
)
_HYPOTHETICAL = re.compile(
    r"^(?:what if|suppose|supposing|imagine|hypothetically|in theory|theoretically|"
    r"let's say|say we)\b"
    r"|\bif\s+(?:[\w']+\s+){1,3}?(?:were|was|had|did|used|could|would|went|switched|"
    r"changed|moved)\b"
    r"|\b(?:i|we)(?:'d| would)\s+(?:change|do|switch|make|use|pick|choose|move|go)\b"
    r"|\bwould (?:it|that) (?:be|make)\b"
    r"|^(?:i (?:think|guess|suppose|feel like|wonder|believe|reckon)|maybe|perhaps|probably)\b",
    re.I,
)
# Attempts to re-instruct the agent are neither memories nor tasks.
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
    r"(?:previous|prior|above|earlier|system|original)?\s*(?:instructions|rules|prompts?|"
    r"guidelines|guardrails|restrictions)\b"
    r"|\bgrant (?:me|them|him|her|us)\b|\bdeveloper mode\b|\bjailbreak|\byou are now\b"
    r"|\bnew system prompt\b",
    re.I,
)
# A reaction ("I love this!") is not a preference worth keeping.
_REACTION = re.compile(
    r"^i\s+(?:really\s+|just\s+|absolutely\s+)?(?:love|like|hate|dislike|enjoy|prefer)\s+"
    r"(?:this|that|it|these|those)(?:\s+(?:one|idea|so much|a lot|too))?$",
    re.I,
)
_REPORTED = re.compile(
    r"\b(?!i\b)[\w']+\s+(?:(?:just|also|once|apparently)\s+)?(?:said|says|told|tells|"
    r"mentioned|claimed|claims|suggested)\b|\baccording to\b"
    r"|(?<!\bi )\b(?:wrote|writes|posted|asked)\s+(?:⟦|that\b|:|me\b|us\b)",
    re.I,
)
_NEGATED_ROLE = re.compile(
    rf"^i(?:'m| am)\s+not\s+(?:really\s+)?(?:the|an?|your)\s+(?:[\w'-]+\s+){{0,2}}?{ROLE}\b",
    re.I,
)
_ROLE_CLAIM = re.compile(
    rf"^i(?:'m| am)\s+(?:(?:the|an?|your|this|their)\s+)?(?:[\w'-]+\s+){{0,2}}?{ROLE}s?\b"
    r"|^i(?:'m| am)\s+in\s+charge\b"
    r"|^i(?:'m| am)\s+the\s+(?:one|person)\s+who\s+(?:approves|decides|signs|manages|owns|"
    r"runs|controls|makes the call)\b"
    r"|^i\s+have\s+(?:full\s+)?(?:admin|owner|root|superuser|sudo|moderator|elevated)\s+"
    r"(?:rights|access|permissions|privileges|role)\b"
    r"|^i\s+(?:run|own|manage|moderate|administer)\s+(?:this|the)\s+(?:channel|workspace|"
    r"server|bot|org|organi[sz]ation|company|team)\b",
    re.I,
)
RELATION_CLAIM = re.compile(
    rf"^my\s+(?:direct\s+)?(?:{_WORK_REL}|report)\s+is\b"
    rf"|^[\w'-]+\s+is\s+my\s+(?:direct\s+)?(?:{_WORK_REL}|report)\b"
    r"|^i\s+(?:report|answer)\s+(?:directly\s+)?to\b",
    re.I,
)
_NEGATED_DECISION = re.compile(
    r"^(?:we|the team|nobody|no one)\s+(?:never|didn't|did not|haven't|have not|hasn't|"
    r"has not)\s+(?:really\s+|actually\s+)?(?:agree|agreed|decide|decided|settle|settled|"
    r"vote|voted)\b",
    re.I,
)

# Operational content: anything here is operational whatever the framing.
HOST = (
    r"(?<![@\w.-])(?:https?://\S+|s3://\S+|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|"
    r"\b[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|internal|local|"
    r"lan|corp|cloud|dev|intra|svc)\b(?::\d+)?)"
)
_HOST_RE = re.compile(HOST, re.I)
DATA_REF = re.compile(
    r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b|\b(?:warehouse|database|db|dbs|tables?|schema|dataset|"
    r"buckets?|replica|snowflake|bigquery|redshift|postgres|mysql|spreadsheet|api|endpoint|"
    r"s3|data lake|vault|cluster)\b",
    re.I,
)
DATA_VERB = re.compile(
    r"\b(?:use|uses|using|used|pull|pulls|pulled|pulling|read|reads|reading|query|queries|"
    r"querying|come|comes|coming|sourced|built|generated|based on|point|points|pointing|"
    r"write|writes|writing|feed|feeds|fed|load|loads|loaded|draws?|stored|kept|lives?|"
    r"from)\b|\b(?:is|are) in\b",
    re.I,
)
DATA_SOURCE = re.compile(r"\bsource of truth\b|\bdata ?source\b", re.I)
_REPORT_DEF = re.compile(
    r"\b(?:report|dashboard|deck|kpi|metric)s?\b.*\b(?:include|includes|including|exclude|"
    r"excludes|cover|covers|defined as|means|counts|lists|shows|goes to|go to|sent to|"
    r"recipients|due|must|should|needs? to)\b"
    r"|\b(?:is|are) defined as\b|^(?!(?:that|it|this|which)\b)[\w\s-]{2,40}\bmeans\b",
    re.I,
)
_PROCEDURE = re.compile(
    r"\bdeploy(?:s|ed|ing|ment|ments)?\b.*\b(?:from|via|through|using|branch|process|"
    r"procedure|steps?|only|must|should|always|never|fails?|failed|roll|happen\w*|pipeline|"
    r"checklist|freeze|window)\b|\b(?:to|after|before|every|each) deploy|"
    r"\b(?:release|main|master|develop|hotfix|prod|"
    r"production)\s+branch\b|\bfrom (?:main|master)\b|\broll ?backs?\b|\brunbook\b|"
    r"\bplaybook\b|\bchecklist\b|\b(?:procedure|process)\s+(?:is|for|to)\b|"
    r"^to \w+, (?:run|use|open|go|ssh)\b",
    re.I,
)
_DEFINITION = re.compile(
    r"\b(?:is|are) defined as\b"
    r"|\bcounts? (?:[\w-]+ ){1,3}as (?!of\b|well\b|soon\b|much\b|many\b|far\b)\w+",
    re.I,
)
_OPS_NOUN = re.compile(
    r"\b(?:slas?|etl|pipelines?|cron|backups?|migrations?|on-?call|escalat\w*|incidents?|"
    r"invoices?|credentials?|vpn|access)\b",
    re.I,
)
_OPS_RULE = re.compile(
    r"\b(?:should|must|needs? to|get|gets|go|goes|run|runs|require|requires|within|"
    r"after \d+|before|nightly|daily|weekly)\b|\b(?:is|are) \d",
    re.I,
)

_CHANNEL = re.compile(
    r"^(?:we|we all|the team|the channel|everyone|all of us|y'all)\s+(?:have\s+|'ve\s+|"
    r"has\s+)?(?:all\s+)?(?:agreed|decided|settled|voted|chose|committed|concluded|resolved)\b"
    r"|^we've\s+(?:all\s+)?(?:agreed|decided|settled|voted)\b"
    r"|^(?:team|channel|group)\s+(?:decision|agreement|convention|rule|norm|policy)\b"
    r"|^(?:decision|decided|agreed|convention|norm|team norm)\s*[:\-–—]"
    r"|^we(?:'re| are)\s+(?:standardi[sz]ing|sticking with|going with)\b"
    r"|\bconvention here\b|\b(?:in|for) (?:this|the) channel\b|\bin here\b|^this channel\b"
    r"|^our (?:convention|norm|agreement|practice|team rule)\b|^we(?:'re| are) going with\b",
    re.I,
)
_LETS = re.compile(r"^(?:let's|lets|let us)\s+(?!say\b)", re.I)
_LETS_STANDING = re.compile(
    r"\b(?:keep|stick (?:with|to)|standardi[sz]e|adopt|switch to|default to|always|never|"
    r"every|each|from now on|going forward|moving forward|here|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days|mornings|afternoons|evenings)\b",
    re.I,
)
_WE = re.compile(r"^(?:we|we all|the team)\b", re.I)
_RECURRING = re.compile(
    r"\b(?:every|each|always|never|usually|on (?:mon|tues|wednes|thurs|fri|satur|sun)days)\b",
    re.I,
)

_PREF = re.compile(
    rf"^i\s+(?:{_ADVERBS}\s+)*(?:(?:do not|don't|never|do)\s+)?(?:prefer|like|love|hate|"
    r"dislike|enjoy|want|appreciate|adore|loathe|detest|favou?r|go by)\b"
    r"|^i\s+(?:can't|cannot)\s+stand\b"
    r"|^i(?:'d| would)\s+(?:much\s+|really\s+)?(?:rather|prefer|like|love|appreciate)\b"
    r"|^i(?:'m| am)\s+(?:not\s+)?(?:really\s+)?(?:a\s+|more of a\s+|no\s+)?(?:big\s+|huge\s+)?fan\b"
    r"|^i(?:'m| am) (?:more of )?an? \w+ person\b|^my (?:favou?rite|preferred)\b"
    r"|^call me (?!when|if|at|tomorrow|later|back|asap|on|after|before|about|now|today|tonight|"
    r"in|once|whenever)|^for me\b|^(?:don't|do not|never) call me\b|^prefer\b",
    re.I,
)
_FACT_STATE = (
    r"(?:(?:a|an)\s+(?!bit\b|little\b|fan\b|lot\b)\w+|based|located|from\b|"
    r"in the [\w-]+ office|in [\w-]+ office|on the [\w-]+(?: [\w-]+)? team|on \w+ time|"
    r"on (?:the )?\w+ shift|in (?:the )?(?:[\w-]+ )?(?:team|department|timezone|time zone)|"
    r"vegetarian|vegan|pescatarian|allergic|lactose|gluten|colou?r ?blind|left-handed|"
    r"right-handed|deaf|dyslexic|diabetic|celiac|coeliac|fluent|native|married|part-time|"
    r"full-time|remote|working (?:remotely|from|part-time|at|for|in)|responsible for|"
    r"new to|learning|[a-z]+(?:ian|ese|ish)\b|german|american|dutch|french|swiss|greek|thai|"
    r"korean|mexican|canadian)"
)
_FACT = re.compile(
    rf"^i\s+(?:{_ADVERBS}\s+)*(?:(?:do not|don't|never)\s+)?(?:live|reside|work|grew up|"
    r"was born|speak|use|have|own|joined|started|start|eat|drink|study|studied|commute|"
    r"sit|moved|come from|belong)\b"
    r"|^i've\s+(?:got|been|lived|worked)\b"
    rf"|^i(?:'m| am)\s+(?:{_ADVERBS}\s+)*{_FACT_STATE}"
    r"|^my\s+(?:name|timezone|time zone|pronouns|birthday|email|e-mail|phone|team|role|"
    r"title|job|location|office|working hours|hours|desk|handle|username|partner|wife|"
    r"husband|kids?|children|son|daughter|dog|cat|native language|first language|"
    r"mother tongue)\s+(?:is|are)\b",
    re.I,
)
_EPHEMERAL = re.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening|week)|right now|at the moment|"
    r"for now)\b|^i\s+(?:\w+\s+)?have\s+(?:a|an|one|some|another)\s+(?:quick\s+)?"
    r"(?:question|meeting|call|minute|sec|second|moment|doubt|problem|issue|idea|"
    r"suggestion|thought|request|favou?r|concern)\b",
    re.I,
)
_WANT_NOW = re.compile(r"^i\s+(?:really\s+|just\s+)?(?:need|want|'d like|would like)\b", re.I)

_STYLE = re.compile(
    rf"\b(?:repl(?:y|ies)|answer(?:s|ing)?|respon(?:d|ds|se|ses)|messages?|writ(?:e|ing) to|"
    r"tone|emojis?|bullet(?:s| points?)?|markdown|headers?|headings?|formatting|"
    r"code blocks?|tl;?dr|exclamation(?: marks?| points?)?|jargon|pleasantries|"
    r"sign(?:-| )?off|spelling|punctuation|concise|verbose|wordy|formal|informal|casual|"
    rf"apologi[sz]e|apologies|greetings?|numbered lists?|bulleted|(?:in|use) (?:{LANGS})|"
    r"language|say(?:ing)? ⟦\d+|(?:words?|phrases?|terms?) ⟦\d+|"
    r"start(?:ing)? (?:every|each|your|replies|answers|messages|with)|"
    r"begin(?:ning)? with|end(?:ing)? (?:every|each|your|messages|replies|answers|with)|"
    r"\d+ words|sentences|paragraphs|dates as|explain things|be (?:more|less)|"
    r"(?:straight|get) to the point|format code)\b",
    re.I,
)
_STYLE_GENERAL = re.compile(
    r"\b(?:your|all|every|each|any)\s+(?:\w+\s+)?(?:repl|answer|respons|message)", re.I
)
_MANNER = re.compile(
    rf"\b(?:in (?:{LANGS})|use (?:{LANGS})|bullet|short|brief|concise|formal|informal|"
    r"casual|detailed|emojis?|markdown|tables?|language)\b",
    re.I,
)
_ME = re.compile(r"\b(?:me|my|mine)\b", re.I)
_REPORT_NOUN = re.compile(r"\b(?:reports?|dashboards?|decks?)\b", re.I)
_REPLY_NOUN = re.compile(r"\b(?:repl|answer|respon|message)", re.I)
_NON_IMPERATIVE = re.compile(
    r"^(?:i|i'm|i'd|i've|you|you're|we|we're|they|he|she|it|it's|this|that|these|those|the|"
    r"a|an|my|our|your|their|there|here|what|who|which|thanks|thank|lol|haha|nice|great|"
    r"good|cool|ok|okay|sure|yes|hmm|wow|sorry|oops|happy|glad|ready|fine|welcome|busy|excited|"
    r"proud|lucky|mind|every|each|any|some|all|most|[\w-]+s)\b",
    re.I,
)
_MODAL_RULE = re.compile(r"\b(?:should|must|needs? to|has to|have to|is to|are to)\b", re.I)
_LEAD_CLAUSE = re.compile(
    r"^(?:when|whenever|if|once|after|before|for|every time|each time|any ?time)\b[^,]{1,80},\s*",
    re.I,
)
_TASK_START = re.compile(rf"^(?:{_ADVERBS}\s+)?{_TASK_VERBS}\b", re.I)
_DEICTIC_RE = re.compile(_DEICTIC, re.I)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The ladder's answer for one sentence (before statement and subject)."""

    label: Label
    confidence: float
    fact: bool = False
    claim: bool = False


@dataclass(frozen=True, slots=True)
class _Ctx:
    low: str  # lower-cased sentence, standing prefix removed
    request: bool  # "can you ..." / "I'd like you to ..."
    standing: bool  # a standing marker anywhere ("from now on", "always", "every ...")
    rule_prefix: bool  # "rule:", "from now on", "make sure to" opened the sentence
    imperative: bool  # reads as an order to the agent
    task: bool  # opens with a verb asking for work now ("summarize", "send", ...)


_NONE = Verdict("none", 0.6)


def decide(
    core: str, *, request: bool = False, remember: bool = False, asked: bool = False
) -> Verdict:
    """Label one cleaned sentence (see :func:`clean_sentence`).

    ``asked`` is true when the sentence ended with a question mark. The
    steps run in a fixed order; the first that recognises the sentence wins.
    """
    body = _STANDING_PREFIX.sub("", core, count=1)
    rule_prefix = body != core
    low = body.lower().strip()
    if not re.search(r"[a-z]", PLACEHOLDER.sub("", low)):
        return _NONE  # only quoted text or punctuation: nothing of the speaker's own
    if not (request or remember) and (asked or _QUESTION_START.match(low)):
        return Verdict("none", 0.7)
    if _HYPOTHETICAL.search(low) or _REPORTED.search(low) or _INJECTION.search(low):
        return Verdict("none", 0.7)
    ctx = _context(low, request=request, rule_prefix=rule_prefix)
    for step in _STEPS:
        verdict = step(ctx)
        if verdict is not None:
            return verdict
    return _NONE


def _head(low: str) -> str:
    """The sentence from its main verb on: no leading clause, adverb or negation."""
    head = _LEAD_CLAUSE.sub("", low, count=1)
    return re.sub(r"^(?:(?:always|never|also|just|only|don't|do not|then)\s+)+", "", head)


def _context(low: str, *, request: bool, rule_prefix: bool) -> _Ctx:
    head = _head(low)
    imperative = bool(head) and not _NON_IMPERATIVE.match(head)
    return _Ctx(
        low=low,
        request=request,
        standing=rule_prefix or bool(_STANDING.search(low)),
        rule_prefix=rule_prefix,
        imperative=imperative,
        task=bool(_TASK_START.match(head)),
    )


def _step_claim(c: _Ctx) -> Verdict | None:
    if _NEGATED_ROLE.match(c.low) or _NEGATED_DECISION.match(c.low):
        return Verdict("none", 0.7)  # a denial records nothing
    if _ROLE_CLAIM.match(c.low) or RELATION_CLAIM.match(c.low):
        return Verdict("personal", 0.9, fact=True, claim=True)
    return None


def _step_once(c: _Ctx) -> Verdict | None:
    if ONE_OFF.search(c.low) and not re.match(r"(?:i|i'm|my|we)\b", c.low):
        return Verdict("one_off", 0.8)
    return None


def is_operational_content(low: str) -> bool:
    """Data sources, hosts, report definitions, procedures, operational rules."""
    return bool(
        _HOST_RE.search(low)
        or (DATA_REF.search(low) and DATA_VERB.search(low))
        or DATA_SOURCE.search(low)
        or _REPORT_DEF.search(low)
        or _PROCEDURE.search(low)
        or (_OPS_NOUN.search(low) and _OPS_RULE.search(low))
    )


def _step_operational(c: _Ctx) -> Verdict | None:
    if _DEFINITION.search(c.low):
        return Verdict("operational", 0.8)  # "count X as Y" defines, even as an imperative
    if not is_operational_content(c.low):
        return None
    if (c.task or c.request) and not c.standing:
        return Verdict("one_off", 0.75)  # a request that *uses* operational knowledge
    return Verdict("operational", 0.85)


def _step_channel(c: _Ctx) -> Verdict | None:
    if _CHANNEL.search(c.low):
        return Verdict("channel", 0.85)
    if _LETS.match(c.low):
        return Verdict("channel", 0.75) if _LETS_STANDING.search(c.low) else _NONE
    if _WE.match(c.low) and (c.rule_prefix or _RECURRING.search(c.low)):
        return Verdict("channel", 0.75)
    return None


def _step_personal(c: _Ctx) -> Verdict | None:
    if _REACTION.match(c.low):
        return _NONE
    if _PREF.match(c.low):
        if _WANT_NOW.match(c.low) and _DEICTIC_RE.search(c.low):
            return Verdict("one_off", 0.75)  # "I want the report now" is a request
        return Verdict("personal", 0.85)
    if _FACT.match(c.low):
        return _NONE if _EPHEMERAL.search(c.low) else Verdict("personal", 0.85, fact=True)
    if (
        _ME.search(c.low)
        and _STYLE.search(c.low)
        and _MANNER.search(c.low)
        and not _DEICTIC_RE.search(c.low)
    ):
        return Verdict("personal", 0.75)  # style addressed to the speaker only
    return None


def _step_style(c: _Ctx) -> Verdict | None:
    if not _STYLE.search(c.low):
        return None
    if _REPORT_NOUN.search(c.low) and not _REPLY_NOUN.search(c.low):
        return None  # about a report's content, not the agent's replies
    if _DEICTIC_RE.search(c.low) and not c.standing:
        # "use bullet points for this summary" is about one reply
        return Verdict("one_off", 0.7) if c.imperative and not c.task else None
    if c.task and not (c.standing or _STYLE_GENERAL.search(c.low) or _MANNER.search(c.low)):
        return None
    if c.imperative or c.standing or c.request or _MODAL_RULE.search(c.low):
        return Verdict("style_rule", 0.8)
    return None


def _step_standing(c: _Ctx) -> Verdict | None:
    if c.rule_prefix or (c.standing and (c.imperative or _MODAL_RULE.search(c.low))):
        return Verdict("operational", 0.7)
    return None


def _step_task(c: _Ctx) -> Verdict | None:
    if c.request or c.task or (_WANT_NOW.match(c.low) and _DEICTIC_RE.search(c.low)):
        return Verdict("one_off", 0.8)
    return None


_STEPS = (
    _step_claim,
    _step_once,
    _step_operational,
    _step_channel,
    _step_personal,
    _step_style,
    _step_standing,
    _step_task,
)


def strip_standing(text: str) -> str:
    """Remove a leading standing marker ("from now on", "rule:"), keeping always/never."""
    return _STANDING_PREFIX.sub("", text, count=1)


def reads_as_statement(text: str) -> bool:
    """True when ``text`` does not open like an order to the agent."""
    return bool(_NON_IMPERATIVE.match(_head(text.lower())))


def split_lead_clause(text: str) -> tuple[str, str]:
    """Split "When you write to me, use French" into ("When you write to me", "use French")."""
    match = _LEAD_CLAUSE.match(text)
    if match is None:
        return "", text
    return text[: match.end()].rstrip(" ,"), text[match.end() :]

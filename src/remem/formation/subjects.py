"""Subjects: a stable dotted key for what a classified sentence is about.

:func:`subject_for` is the last step of :mod:`remem.formation.rules`' per-clause work:
given the ladder's :class:`~remem.formation.rules.Verdict` and the sentence, it names
the subject ("user.language", "report.weekly.source", "deploy.branch") that the
subject rule (:mod:`remem.formation.revise`) uses to let a newer statement retire an
older one. ``None`` when the sentence is about nothing nameable. Internal to the
classifier.
"""

from __future__ import annotations

import re

from remem.formation.rules import (
    DATA_REF,
    DATA_SOURCE,
    DATA_VERB,
    HOST,
    LANGS,
    RELATION_CLAIM,
    Verdict,
    strip_standing,
)


def _words(text: str) -> frozenset[str]:
    """A word set written as one string, for compact vocabulary tables."""
    return frozenset(text.split())


_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_PERSONAL_SUBJECTS = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        ("user.name", r"\bcall me\b|\bmy name\b|\bgo by\b|\bbe called\b"),
        ("user.pronouns", r"\bpronouns?\b"),
        ("user.language", rf"\b(?:in|into|use|speak to me in) (?:{LANGS})\b|\blanguage\b"),
        (
            "user.timezone",
            r"\btime ?zone\b|\b(?:pacific|eastern|central|mountain|\w+ european) time\b|"
            r"\b(?:utc|gmt|cet|cest|pst|pdt|est|edt|ist|jst|aest|bst)\b",
        ),
        ("user.location", r"\blive in\b|\bbased in\b|\blocated in\b|\boffice\b|\bmoved to\b"),
        ("user.team", r"\bteam\b"),
        ("user.diet", r"vegetarian|vegan|pescatarian|allerg|gluten|lactose|halal|kosher|\bmeat\b"),
        ("user.birthday", r"\bbirthday\b"),
        (
            "user.working_hours",
            r"\bstart work\b|\bwork(?:ing)? hours\b|\bstart at\b|\bonline from\b|\bfinish at\b",
        ),
        ("user.meeting_time", r"\bmeetings?\b"),
        ("user.emoji", r"\bemojis?\b"),
        ("user.format", r"\bbullet|\btables?\b|\bmarkdown\b|\bpdfs?\b|\bnumbered\b|\bprose\b"),
        (
            "user.reply_length",
            r"\b(?:short|shorter|brief|briefer|concise|long|longer|detailed|terse|verbose|"
            r"lengthy)\b",
        ),
        ("user.tone", r"\b(?:tone|formal|informal|casual)\b"),
        ("user.contact", r"\b(?:slack|e-?mails?|dms?|ping(?:ed)?|texts?)\b"),
        ("user.units", r"\b(?:metric|imperial)\b|\bunits\b"),
        ("user.job", r"^i(?:'m| am) (?:a|an) \w+"),
    )
)
_STYLE_SUBJECTS = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        ("style.opening", r"\bstart(?:ing)?\b|\bbegin(?:ning)?\b|\bopen(?:ing)? with\b"),
        ("style.closing", r"\bsign(?:-| )?off\b|\bend(?:ing)?\b|\bclosing\b"),
        ("style.emoji", r"\bemojis?\b"),
        ("style.language", rf"\b(?:{LANGS})\b|\blanguage\b"),
        (
            "style.format",
            r"\bbullet|\bmarkdown\b|\bheaders?\b|\bheadings?\b|\btables?\b|\bcode blocks?\b|"
            r"\bnumbered\b|\blists?\b|\btl;?dr\b|\bformat",
        ),
        (
            "style.length",
            r"\b(?:concise|short|brief|long|verbose|wordy|length|words|sentences|paragraphs)\b",
        ),
        (
            "style.tone",
            r"\b(?:tone|formal|informal|casual|friendly|apologi[sz]e|apologies|pleasantries|"
            r"polite|point)\b",
        ),
        ("style.punctuation", r"\bexclamation\b|\bpunctuation\b"),
    )
)
_CHANNEL_SUBJECTS = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        ("channel.purpose", r"\bthis channel is\b|\bchannel for\b|\bthis channel (?:only )?for\b"),
        ("channel.release_day", rf"\b(?:ship|release)\w*\b.*\b{_DAYS}\b"),
        ("channel.standup", r"\bstand-?ups?\b"),
        ("channel.retro", r"\bretros?\b|\bretrospectives?\b"),
        ("channel.code_review", r"\breviews?\b|\bapprovals?\b|\bprs?\b|\bpull requests?\b"),
        ("channel.language", rf"\b(?:{LANGS})\b|\blanguage\b"),
        ("channel.meetings", r"\bmeet\b|\bmeetings?\b|\bsync\b|\bdemos?\b"),
        ("channel.threads", r"\bthreads?\b"),
    )
)


def subject_for(verdict: Verdict, low: str) -> str | None:
    """A stable dotted key for what the sentence is about, or ``None`` when unclear."""
    low = strip_standing(low)
    if verdict.claim:
        if RELATION_CLAIM.match(low):
            return (
                "user.manager"
                if re.search(r"boss|manager|supervisor|lead|report(?:s)? to", low)
                else "user.relationship"
            )
        return "user.role_claim"
    if verdict.label == "personal":
        return _first(_PERSONAL_SUBJECTS, low)
    if verdict.label == "style_rule":
        return _first(_STYLE_SUBJECTS, low)
    if verdict.label == "channel":
        return _first(_CHANNEL_SUBJECTS, low)
    if verdict.label == "operational":
        return _operational_subject(low)
    return None


def _first(table: tuple[tuple[str, re.Pattern[str]], ...], low: str) -> str | None:
    return next((name for name, pattern in table if pattern.search(low)), None)


def _slug(words: str) -> str:
    words = re.sub(r"'s\b", "", words.lower())
    words = re.sub(r"\b(?:the|our|a|an|this|that|my|your|its)\b", " ", words)
    return "_".join(re.findall(r"[a-z0-9]+", words))[:40]


def _operational_subject(low: str) -> str | None:
    if re.search(r"\bcc\b", low):
        return "email.cc"
    if re.search(r"\bcredentials?\b|\bpasswords?\b|\bsecrets?\b|\btokens?\b", low):
        return "access.credentials"
    if re.search(
        r"\bdeploy\w*\b|\b(?:release|main|master)\s+branch\b|\bfrom (?:main|master)\b", low
    ):
        return _deploy_subject(low)
    report = _report_name(low)
    if report is not None:
        return ".".join(part for part in ("report", report, _report_aspect(low)) if part)
    for pattern, template in _OPERATIONAL_KEYS:
        match = pattern.search(low)
        if match:
            return template.format(_slug(match.group(1)) if match.groups() else "")
    if (DATA_REF.search(low) and DATA_VERB.search(low)) or DATA_SOURCE.search(low):
        return "report.source"  # an unqualified data source is the default reporting source
    return None


_OPERATIONAL_KEYS = tuple(
    (re.compile(pattern, re.I), template)
    for pattern, template in (
        (
            rf"^(?:the\s+|our\s+)?([a-z][\w\s'-]{{1,40}}?)\s+(?:is at|lives at|runs on|run on|"
            rf"is hosted (?:at|on)|is reachable at|is|are)\s+(?:at\s+)?{HOST}",
            "host.{}",
        ),
        (r"\bon-?call\b|\bescalat\w*|\bpag(?:e|ing)\b", "incident.escalation"),
        (r"^([\w\s-]{2,40}?)\s+(?:means|is defined as|are defined as)\b", "metric.{}"),
        (r"\bsource of truth for ([\w\s]+?) is\b", "data.{}.source"),
        (
            r"^([\w\s]+?)\s+(?:numbers|data|figures|metrics)\s+(?:\w+\s+){0,2}?(?:from)\b",
            "data.{}.source",
        ),
        (r"\bbackups?\b()", "backup.schedule"),
    )
)


def _deploy_subject(low: str) -> str:
    if re.search(r"\bbranch\b|\bfrom (?:main|master)\b", low):
        return "deploy.branch"
    if re.search(rf"\b{_DAYS}\b|\bfreeze\b|\bwindow\b|\bat \d", low):
        return "deploy.schedule"
    return "deploy.procedure"


_REPORT_MENTION = re.compile(r"\b(reports?|dashboards?|decks?)\b", re.I)
_REPORT_STOP = _words(
    "the our a an this that my your for to of in and use uses from with on by all every "
    "each should must is are"
)


def _report_name(low: str) -> str | None:
    """``None`` without a report; ``""`` for an unnamed one; else e.g. ``"weekly"``."""
    match = _REPORT_MENTION.search(low)
    if match is None:
        return None
    if match.group(1).endswith("s"):
        return ""
    before = re.findall(r"[a-z0-9_]+", low[: match.start()])[-2:]
    while before and before[0] in _REPORT_STOP:
        before = before[1:]
    if any(word in _REPORT_STOP for word in before):
        before = before[before.index(next(w for w in before if w in _REPORT_STOP)) + 1 :]
    return "_".join(before)


def _report_aspect(low: str) -> str:
    if (DATA_REF.search(low) and DATA_VERB.search(low)) or re.search(
        r"\b(?:pulls?|comes?|built|generated|sourced|reads?) from\b|\bbased on\b", low
    ):
        return "source"
    if re.search(rf"\bevery\b|\bon {_DAYS}\b|\bat \d|\bdue\b|\bruns?\b", low):
        return "schedule"
    if re.search(r"\bgo(?:es)? to\b|\bsent to\b|\bsend\b.*\bto\b|\brecipients?\b|\bdeliver", low):
        return "recipients"
    return "definition"

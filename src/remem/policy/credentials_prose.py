"""Passwords, PINs and login credentials stated in prose.

:func:`has_password` finds a password, PIN, passcode or door code stated with
its value ("the wifi password is sunshine", "door code 4729#");
:func:`has_login_pair` finds a user name stated together with its password
("login is bob and the password is hunter2", "user: x / pass: y",
"creds admin/Tr0ub4dor"). Both are confirm functions of rules in
:mod:`remem.policy.secrets`, which runs them only after their trigger matched.
"""

from __future__ import annotations

import re

from remem.policy.token_shape import strong, wordset

__all__ = ["CONNECTOR_WORDS", "PASSWORD_TRIGGER", "has_password"]

# Passwords, PINs and codes stated in prose. A keyword ("password", "PIN",
# "door code" ...), an optional "for the staging db" filler, an optional
# connector ("is", ":", "=") and a value. The regex finds candidates; the value
# checks below decide, because "the password is required" has the same shape as
# "the password is sunshine".
_PW_WORDS = (
    r"pass(?:word|wd|phrase|key)s?|pwd|pw|p/w|cred(?:ential)?s"
    r"|(?:wi-?fi|network|wpa2?|guest)[ -](?:key|pass)|pass(?=\s*[:=])"
)
_PIN_WORDS = (
    r"pass ?codes?|pins?(?:[ -](?:code|number|no\.?))?|combination|combo"
    r"|(?:door|gate|garage|alarm|safe|lock|locker|entry|entrance|building|keypad|access"
    r"|security|verification|2fa|mfa|otp|one[- ]time|backup|recovery|unlock|lockbox"
    r"|padlock|bike[ -]lock)[ -](?:code|combo|combination|pin)s?"
    r"|codes?(?=\s+(?:for|to)\s+(?:(?:the|my|his|her|their|our|a)\s+)?(?:[\w-]+\s+)?"
    r"(?:door|gate|garage|alarm|safe|lock|locker|building|office|house|flat|apartment"
    r"|entrance|lockbox|keypad|vault|storage|shed)\b)"
)
CONNECTOR_WORDS = r"is|was|are|were"
_PASSWORD = re.compile(
    rf"(?i)(?<![A-Za-z0-9])(?:(?P<pw>{_PW_WORDS})|(?P<pin>{_PIN_WORDS}))(?![A-Za-z0-9])"
    r"(?P<filler>\s+(?:for|to|on|of|at|in)\s+(?:(?:the|my|his|her|their|our|a|an|this|that)\s+)?"
    rf"[\w.'@-]+(?:\s+(?!(?:{CONNECTOR_WORDS})\b)[\w.'@-]+){{0,2}})?"
    rf"(?:\s*(?P<conn>[:=]|=>|->|(?:\b(?:{CONNECTOR_WORDS}|has\s+been)\s+)?"
    rf"\b(?:changed|set|reset|updated)\s+to\b|\b(?:{CONNECTOR_WORDS})\b"
    r"(?:\s+(?:now|still|currently|actually|just|always))?)\s*|\s+)"
    r"(?P<quote>[\"'`“‘])?(?P<val>[^\s\"'`“”‘’,;]+)(?P<rest>.{0,24})"
)
PASSWORD_TRIGGER = rf"(?i:(?<![A-Za-z0-9])(?:{_PW_WORDS}|{_PIN_WORDS})(?![A-Za-z0-9]))"

# Words that follow "password is" / "password:" in ordinary talk about passwords.
_NOT_A_VALUE = wordset(
    """
    a an the this that these those it its my his her their our your same different
    in on at of for to from by with without into via under inside behind somewhere
    not never no none null nil n/a na tbd todo unknown unset empty blank missing
    is was are be been being has have had will would should must can could may
    required mandatory optional needed necessary enforced expired expiring expires
    wrong incorrect invalid correct right fine ok okay good bad weak strong long short
    secure insecure safe unsafe old new default temporary temp shared stored saved
    managed hidden visible encrypted hashed rotated reset changed set known case
    sensitive too very really still also now always usually probably just only
    simple complex hard easy random unique easy-to-guess obvious same-as see check
    ask managed-by kept there here something anything nothing whatever what which
    please and or but so if when then than because since
    """
)
_PLACEHOLDER_VALUE = re.compile(
    r"^(?:\*+|•+|x{3,}|\.{2,}|<[^>]*>?|\$\{?\w*\}?|\{\{?[^}]*\}?\}?|\[[^\]]*\]?|%s"
    r"|redacted|hidden|secret|password|pin)$",
    re.I,
)
_UNIT_NEXT = re.compile(
    r"^\+?\s*(?:chars?|characters?|digits?|letters?|symbols?|numbers?|words?|long|min(?:imum)?"
    r"|max(?:imum)?|or (?:more|longer)|attempts?|tries|times|days?|months?|weeks?)\b",
    re.I,
)
_LOGIN_CONTEXT = re.compile(r"(?i)\b(?:user(?:name)?|login|account|e-?mail|user ?id)\b")
_PIN_VALUE = re.compile(r"[#*]?\d[\d #*.-]*")
_YEAR = re.compile(r"(?:19|20)\d\d")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+$", re.I)
_DULL_SUFFIXES = ("ed", "ing", "ly", "able", "ible", "ful", "less", "ous", "ive", "tion")


def _plain_word_value(value: str) -> bool:
    """A lone dictionary-looking word after "is" counts ("is sunshine") unless it reads
    like a description ("is required", "is shared")."""
    return value.isalpha() and len(value) >= 4 and not value.lower().endswith(_DULL_SUFFIXES)


def _password_value_ok(m: re.Match[str], text: str) -> bool:
    val: str = m["val"].rstrip(".!?:)]}>")
    if not val or _PLACEHOLDER_VALUE.match(val) or _UNIT_NEXT.match(m["rest"]):
        return False
    if m["pin"] is not None:
        if m["conn"] is None and _YEAR.fullmatch(val):
            return False  # "the PIN 2024 rollout": a bare year is not a stated PIN
        return _PIN_VALUE.fullmatch(val) is not None and sum(c.isdigit() for c in val) >= 3
    if m["pw"].lower() == "pass" and not _LOGIN_CONTEXT.search(text):
        return False  # "boarding pass: gate 12" is not a credential
    if m["quote"] is not None:
        return True
    if val.lower() in _NOT_A_VALUE or "://" in val or val.lower().startswith("www."):
        return False
    conn = (m["conn"] or "").strip()
    if not conn:
        return len(val) >= 4 and strong(val) and not _VERSION.match(val)
    if conn in {":", "=", "=>", "->"}:
        return True
    return strong(val) or val.isdigit() or _plain_word_value(val)


# "uses hunter2 as her password", "Hunter2 is my password" (but not "... password manager").
_PASSWORD_BEFORE = re.compile(
    r"(?i)(?<!\S)[\"'`]?(?P<val>[^\s\"'`]{4,}?)[\"'`]?\s+(?:is|was|as)\s+"
    r"(?:my|his|her|their|our|the)\s+(?:[\w-]+\s+)?(?:pass(?:word|phrase|code)|pin)\b"
    r"(?![\s-]*(?:manager|vault|policy|reset|rules?|field|app|generator|store|hint|page|form))"
)


# "set her wifi password to 'blue-otter-cookie'"
_PASSWORD_SET = re.compile(
    r"(?i)\b(?:set|sets|changed|changes|reset|resets|updated)\s+(?:[\w']+\s+){0,3}?"
    r"(?:pass(?:word|phrase|code)|pin)\s+to\s+(?P<quote>[\"'`])?(?P<val>[^\s\"'`,;]+)"
)


def _set_value_ok(m: re.Match[str]) -> bool:
    val: str = m["val"].rstrip(".!?:)")
    if not val or _PLACEHOLDER_VALUE.match(val):
        return False
    return m["quote"] is not None or strong(val) or (val.isdigit() and len(val) >= 4)


def has_password(text: str) -> bool:
    """A password, PIN, passcode or door/alarm code stated with its value."""
    if any(_password_value_ok(m, text) for m in _PASSWORD.finditer(text)):
        return True
    if any(_set_value_ok(m) for m in _PASSWORD_SET.finditer(text)):
        return True
    return any(strong(m["val"]) for m in _PASSWORD_BEFORE.finditer(text))

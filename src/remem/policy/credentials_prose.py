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

__all__ = [
    "CONNECTOR_WORDS",
    "LOGIN_PAIR_NEEDLES",
    "LOGIN_PAIR_TRIGGER",
    "PASSWORD_TRIGGER",
    "has_login_pair",
    "has_password",
]

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
    like a description ("is required", "is shared"); so does a passphrase of three or more
    hyphenated words ("is blue-otter-cookie", but not "is up-to-date")."""
    parts = value.split("-")
    if len(parts) >= 3:
        return all(p.isalpha() and len(p) >= 3 for p in parts)
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


# A user name stated together with its password. Three shapes, each a regex for
# candidates and a value check, because "user name and password are required" and
# "login page / password field" have the same shape as a real pair.
_LOGIN_WORDS = (
    r"user(?:[ _-]?name)?s?|login|log-?in|user[ _-]?id|account|acct|e-?mail|sign[ -]?in|usr"
    r"|uid|u/n|handle"
)
_PAIR_PW_WORDS = r"pass(?:word|wd|phrase|code)?|pwd|pw|p/w"
_FILLER = (
    r"(?:\s+(?:for|to|on|of|at|in|into)\s+(?:(?:the|my|his|her|their|our|a|an)\s+)?"
    r"[\w.'-]+(?:\s+[\w.'-]+)?)?"
)
_VALUE_CONN = r"\s*(?:[:=]|\b(?:is|was|are|were)\b)?\s*"
_QUOTED_VALUE = r"[\"'`“‘]?(?P<val>[^\s\"'`“”‘’,;]+)"
# "username alice password tulips", "the account is ops@acme.io with password rainbow"
_PAIR_SPELLED = re.compile(
    rf"(?i)(?<![A-Za-z0-9])(?:{_LOGIN_WORDS})(?![A-Za-z0-9]){_FILLER}"
    r"\s*(?:[:=]|\b(?:is|was|as)\b)?\s*[\"'`“‘]?(?P<user>[^\s,;/\"'`“”‘’]+)[\"'`”’]?"
    r"[\s,;/|&+]*(?:(?:and|with|plus|pass)\s+)?(?:(?:the|a|its|her|his|their|my)\s+)?"
    rf"(?<![A-Za-z0-9])(?:{_PAIR_PW_WORDS})(?![A-Za-z0-9]){_VALUE_CONN}{_QUOTED_VALUE}"
)
# "the router login is admin/admin", "creds: qa / Tr0ub4dor", "login for the wiki: guest:guest"
_PAIR_JOINED = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:user[ _-]?name|login|log-?in|log ?on|sign[ -]?in|cred(?:ential)?s)"
    rf"(?![A-Za-z0-9]){_FILLER}\s*(?:[:=]|\b(?:is|are|was|were)\b)\s*"
    r"(?P<user>[\w.@+-]{2,64})\s?[/:]\s?(?P<val>[^\s/:,;]{3,64})(?![/\w])"
)
# "use admin:changeme to log into grafana": user:password written as one token.
_PAIR_TOKEN = re.compile(
    r"(?<![\w/:.@-])(?P<user>[a-z0-9][\w.@+-]{1,63}):(?P<val>[^\s/:@,;]{3,64})"
)
_LOGIN_NEAR = re.compile(
    r"(?i)\b(?:log(?:s|ged|ging)?[ -]?(?:in(?:to)?|on)|sign(?:s|ed|ing)?[ -]?in(?:to)?"
    r"|credentials?|creds|user ?name)\b"
)
# "log in as jdoe with Winter2024!", "signs in to the NAS as admin with password swordfish"
_PAIR_AS_WITH = re.compile(
    r"(?i)\b(?:log(?:s|ged|ging)?[ -]?in(?:to)?|sign(?:s|ed|ing)?[ -]?in(?:to)?)"
    r"(?:\s+(?!as\b)[\w.'-]+){0,4}?\s+as\s+[\"'`]?(?P<user>[^\s,;\"'`]+)[\"'`]?"
    rf"\s+(?:with|using|and|pw|pass)\s+(?:(?:the\s+)?(?P<pw>{_PAIR_PW_WORDS})\s*(?:[:=]|is)?\s*)?"
    rf"{_QUOTED_VALUE}"
)
# Words that can stand where a user name or password would, in talk about logins.
_NOT_A_CREDENTIAL = _NOT_A_VALUE | wordset(
    """
    field fields form page pages prompt screen box dialog flow flows reset resets manager
    managers policy policies rules rule hint hints change changes expiry rotation vault
    vaults login logins user users username usernames account accounts email emails
    password passwords pass passwd pwd pw credentials creds sso saml oauth ldap okta google
    github microsoft apple passkey passkeys yubikey 2fa mfa totp otp kerberos biometrics
    details info information combination combo setup settings access auth protected
    based only-login name names id ids address addresses handle handles portal
    """
)


def _credential_word(value: str) -> bool:
    """A word that talks about logins rather than being a user name or password."""
    return value.lower().strip(".!?:)]}>") in _NOT_A_CREDENTIAL


def _pair_value_ok(user: str, val: str) -> bool:
    val = val.rstrip(".!?:)]}>")
    if not (any(c.isalnum() for c in user) and any(c.isalnum() for c in val)):
        return False  # "<user>:<password>" templates, punctuation
    if _PLACEHOLDER_VALUE.match(val) or _PLACEHOLDER_VALUE.match(user):
        return False
    return not (_credential_word(user) or _credential_word(val) or "://" in val)


def _joined_ok(user: str, val: str) -> bool:
    """``user/password`` written as one: a chosen-looking password, or a user name as
    the password (``admin/admin``); "Google/GitHub" and "frontend/backend" are not."""
    if not _pair_value_ok(user, val) or (val.isdigit() and user.isdigit()):
        return False
    if user.lower() == val.lower():
        return True
    username_like = user[0].islower() or user[0].isdigit()
    return username_like and (strong(val) or not val.isalpha())


def has_login_pair(text: str) -> bool:
    """A user name stated with its password ("login is bob and the password is hunter2").

    Each shape is tried only when the characters it needs occur (a password word, a
    ``/`` or ``:``, " as "): most notes that mention a login hold none of them."""
    lower = text.lower()
    spelled = "pass" in lower or "pw" in lower or "p/w" in lower
    pairs = _PAIR_SPELLED.finditer(text) if spelled else ()
    if any(_pair_value_ok(m["user"], m["val"]) for m in pairs):
        return True
    if "/" in text or ":" in text:
        if any(_joined_ok(m["user"], m["val"]) for m in _PAIR_JOINED.finditer(text)):
            return True
        if ":" in text and _LOGIN_NEAR.search(text):
            pairs = _PAIR_TOKEN.finditer(text)
            if any(_pair_value_ok(m["user"], m["val"]) and not m["val"].isdigit() for m in pairs):
                return True
    if " as " in lower:
        for m in _PAIR_AS_WITH.finditer(text):
            val = m["val"].rstrip(".!?:)]}>")
            if m["pw"] is None and not (strong(val) and len(val) >= 6):
                continue
            if _pair_value_ok(m["user"], val):
                return True
    return False


#: Needles of the login-pair rule: a password word, or a phrase that names a login
#: (a bare "user", "account" or "email" needs a password word to make a pair).
LOGIN_PAIR_NEEDLES = (
    "pass|pw|p/w|login|log in|log-in|logs in|logged in|logging in|log into|logon|signin"
    "|sign in|sign-in|signs in|signed in|signing in|sign into|cred|username|user name"
)
LOGIN_PAIR_TRIGGER = (
    r"(?i:pass|pw|p/w|log(?:s|ged|ging)?[ -]?(?:in|on)|sign(?:s|ed|ing)?[ -]?in|cred"
    r"|user ?name)"
)

"""Secret detectors for note text.

:func:`scan_secret` answers one question: does this short note carry a
credential that must never be stored? It returns ``(detector, what)`` for the
first detector that fires, where ``detector`` is a stable code (``"openai_key"``,
``"card_number"`` ...) and ``what`` names the kind of secret in words ("an
OpenAI API key"). It never returns the secret itself, so callers cannot leak it
into messages or logs by accident.

Design constraints, because this runs on every write:

* Each rule names cheap prefilters (lowercase substrings, "has a 16+ character
  token"); its regex trigger only runs when they pass. Python's ``re`` handles a
  combined alternation of all triggers slower than these checks.
* detect-secrets plugins are imported lazily (the package costs ~100 ms to
  import) and only consulted once their cheap trigger matched.
* The entropy plugins of detect-secrets are deliberately not used: on prose
  they flag ids, hashes and hostnames. Entropy here only counts next to a
  secret-ish keyword (:func:`_has_keyed_token`).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol, cast

from remem.policy.credentials_numbers import (
    BANK_ACCOUNT_TRIGGER,
    CARD_TRIGGER,
    IBAN_TRIGGER,
    NATIONAL_ID_TRIGGER,
    has_bank_account,
    has_card_number,
    has_iban,
    has_national_id,
)
from remem.policy.credentials_prose import (
    CONNECTOR_WORDS,
    LOGIN_PAIR_NEEDLES,
    LOGIN_PAIR_TRIGGER,
    PASSWORD_TRIGGER,
    has_login_pair,
    has_password,
)
from remem.policy.credentials_seed import has_seed_phrase, may_hold_seed_phrase
from remem.policy.token_shape import has_digit, looks_random, mixed, word_like, wordset

Confirm = Callable[[str], bool]

_NB = r"(?<![A-Za-z0-9])"  # token start: not glued to a preceding alphanumeric
_NA = r"(?![A-Za-z0-9])"  # token end


class _Analyzer(Protocol):
    def analyze_string(self, string: str) -> Iterator[str]: ...


_PLUGINS: dict[str, tuple[str, str]] = {
    "aws": ("aws", "AWSKeyDetector"),
    "private_key": ("private_key", "PrivateKeyDetector"),
    "jwt": ("jwt", "JwtTokenDetector"),
    "openai": ("openai", "OpenAIDetector"),
    "github": ("github_token", "GitHubTokenDetector"),
    "gitlab": ("gitlab_token", "GitLabTokenDetector"),
    "slack": ("slack", "SlackDetector"),
    "stripe": ("stripe", "StripeDetector"),
    "npm": ("npm", "NpmDetector"),
    "sendgrid": ("sendgrid", "SendGridDetector"),
    "twilio": ("twilio", "TwilioKeyDetector"),
    "discord": ("discord", "DiscordBotTokenDetector"),
    "telegram": ("telegram_token", "TelegramBotTokenDetector"),
    "mailchimp": ("mailchimp", "MailchimpDetector"),
    "pypi": ("pypi_token", "PypiTokenDetector"),
    "square": ("square_oauth", "SquareOAuthDetector"),
    "azure": ("azure_storage_key", "AzureStorageKeyDetector"),
    "basic_auth": ("basic_auth", "BasicAuthDetector"),
}


@cache
def _plugin(name: str) -> _Analyzer:
    """Instantiate a detect-secrets plugin on first use (the import is slow)."""
    module_name, class_name = _PLUGINS[name]
    module = importlib.import_module(f"detect_secrets.plugins.{module_name}")
    return cast(_Analyzer, getattr(module, class_name)())


def _always(_: str) -> bool:
    return True


def _plugin_confirm(name: str, accept: Confirm = _always) -> Confirm:
    def confirm(text: str) -> bool:
        return any(accept(match) for match in _plugin(name).analyze_string(text))

    return confirm


def _regex_confirm(pattern: str, accept: Confirm = _always) -> Confirm:
    regex = re.compile(pattern)

    def confirm(text: str) -> bool:
        return any(accept(m.group(0)) for m in regex.finditer(text))

    return confirm


def _either(*confirms: Confirm) -> Confirm:
    def confirm(text: str) -> bool:
        return any(c(text) for c in confirms)

    return confirm


def _jwt_has_alg(token: str) -> bool:
    """A JWT's first part is base64url JSON naming its algorithm."""
    head = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        header = json.loads(decoded)
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict) and "alg" in header


def _hf_token_ok(token: str) -> bool:
    """Hugging Face tokens are ``hf_`` and 34 random letters (older ones mix in digits):
    mixed case or digits, and not a camelCase name."""
    body = token.partition("_")[2] if token.startswith("hf_") else token[8:]
    cased = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return (cased or has_digit(body)) and not word_like(body)


_AWS_ID_PREFIXES = ("A3T", "ABIA", "ACCA", "AKIA", "ASIA")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_CONTEXT = re.compile(r"(?i:aws|secret)")


def _aws_secret_near_context(text: str) -> bool:
    """A 40-char base64 token within 80 characters of "aws"/"secret"."""
    anchors = [m.start() for m in _AWS_CONTEXT.finditer(text)]
    for m in _AWS_SECRET.finditer(text):
        token = m.group(0)
        if not (mixed(token) and token.lower() != token and token.upper() != token):
            continue
        if any(abs(a - m.start()) <= 80 for a in anchors):
            return True
    return False


def _basic_header_ok(text: str) -> bool:
    """``Authorization: Basic <b64>`` whose payload decodes to ``user:password``."""
    for m in _BASIC_HEADER.finditer(text):
        try:
            raw = base64.b64decode(m.group(1), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        user, sep, password = raw.partition(":")
        if sep and user and password and raw.isprintable():
            return True
    return False


_BASIC_HEADER = re.compile(r"(?i:\bbasic)\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")

_URL_CREDS = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]*:([^\s@/]+)@[\w\[]")
_PLACEHOLDER_PASSWORD = re.compile(
    r"^(?:\*+|x{3,}|<[^>]*>|\$\{?\w*\}?|\{\{?[^}]*\}?\}|%s|\.\.\.)$", re.I
)


def _url_has_password(text: str) -> bool:
    return any(not _PLACEHOLDER_PASSWORD.match(m.group(1)) for m in _URL_CREDS.finditer(text))


# Unlabelled high-entropy tokens count only right next to a secret-ish keyword:
# "the staging API key is <token>", "Bearer <token>", "<token> is my bot token".
_QUALIFIERS = (
    r"api|access|secret|private|signing|encryption|master|deploy|license|licence|client|app"
    r"|service|account|auth|refresh|session|bearer|personal|bot|webhook|admin|root|integration"
    r"|sdk|dev|developer|ingest|ingestion|write|read|x-api"
)
_KW_CORE = r"api[_-]?key|apikey|keys?|tokens?|secrets?|credentials?|creds"
_KEYWORD_TRIGGER = rf"(?i:(?<![A-Za-z0-9])(?:{_KW_CORE}|bearer|auth(?:orization)?)(?![A-Za-z0-9]))"
_TOKEN = r"[A-Za-z0-9_\-+/=.~]{16,}"
_KEYED_AFTER = re.compile(
    rf"(?i)(?<![A-Za-z0-9])(?P<kw>(?:(?:{_QUALIFIERS})[\s_-]?)?(?:{_KW_CORE})|bearer"
    r"|auth(?:orization)?(?=\s*[:=]))(?![A-Za-z0-9])"
    rf"(?P<filler>(?:\s+(?!(?:{CONNECTOR_WORDS})\b)[\w'.-]+){{0,4}}?)"
    rf"\s*(?P<conn>[:=]|=>|->|\b(?:{CONNECTOR_WORDS})\b)?"
    rf"\s*[\"'`(<\[]?(?P<val>{_TOKEN})"
)
_KEYED_BEFORE = re.compile(
    rf"(?i)(?<![A-Za-z0-9_\-+/=.~])(?P<val>{_TOKEN})[\"'`]?\s+(?:is|was|as)\s+"
    r"(?:(?:my|the|his|her|their|our|an?|this|that)\s+)?(?:[\w'-]+\s+){0,3}?"
    rf"(?P<kw>{_KW_CORE})(?![A-Za-z0-9])"
)
# Keys that are not secrets: database keys, public halves, ids of keys.
_PUBLIC_KEY_WORDS = wordset(
    """primary foreign public publishable sort partition idempotency cache object composite
    unique hash dict map row lookup shard routing gpg pgp ssh host license-plate"""
)


def _keyed_after_ok(m: re.Match[str], text: str) -> bool:
    kw = m["kw"].lower()
    if kw in ("key", "keys"):
        filler = m["filler"].split()
        if filler and filler[0].lower() not in ("for", "of", "to", "on"):
            return False
        before = text[: m.start()].split()
        if before and before[-1].lower().strip("'\"(") in _PUBLIC_KEY_WORDS:
            return False
    if "ssh-" in text[max(0, m.start("val") - 24) : m.start("val")]:
        return False  # an SSH public key's base64 body
    return looks_random(m["val"])


def _has_keyed_token(text: str) -> bool:
    """A random-looking token adjacent to key/token/secret/credential/bearer/auth."""
    if any(_keyed_after_ok(m, text) for m in _KEYED_AFTER.finditer(text)):
        return True
    return any(looks_random(m["val"]) for m in _KEYED_BEFORE.finditer(text))


@dataclass(frozen=True, slots=True)
class _Rule:
    """One detector: cheap prefilters first, then ``trigger``, then ``confirm``.

    ``needles`` are lowercase substrings of which one must occur (empty: no
    such filter); ``long_run`` requires a 16+ character token somewhere.
    ``trigger`` is a regex that must match, or a cheap test (a function of the
    text) where a regex would cost more than the test.
    """

    detector: str
    what: str
    needles: tuple[str, ...]
    long_run: bool
    trigger: str | Confirm
    confirm: Confirm


def _rule(
    detector: str, what: str, needles: str, trigger: str | Confirm, confirm: Confirm
) -> _Rule:
    """``needles`` is ``|``-separated; the word ``LONG`` stands for the long-run filter."""
    words = needles.split("|") if needles else []
    return _Rule(
        detector, what, tuple(w for w in words if w != "LONG"), "LONG" in words, trigger, confirm
    )


def _own(detector: str, what: str, needles: str, pattern: str, accept: Confirm = mixed) -> _Rule:
    """A rule whose trigger is also its full pattern (no detect-secrets plugin covers it)."""
    return _rule(detector, what, needles, pattern, _regex_confirm(pattern, accept))


_PROVIDER_RULES: tuple[_Rule, ...] = (
    _rule(
        "private_key",
        "a private key block",
        "private key|putty-user-key",
        r"PRIVATE KEY|PuTTY-User-Key-File",
        _either(
            _plugin_confirm("private_key"),
            _regex_confirm(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
        ),
    ),
    _rule(
        "jwt",
        "a JSON Web Token",
        "eyj",
        r"eyJ[\w-]{6,}\.[\w-]{6,}",
        _plugin_confirm("jwt", _jwt_has_alg),
    ),
    _own("anthropic_key", "an Anthropic API key", "sk-ant-", _NB + r"sk-ant-[A-Za-z0-9_-]{20,}"),
    _rule(
        "openai_key",
        "an OpenAI API key",
        "sk-",
        _NB + r"sk-(?!ant-)[A-Za-z0-9_-]{20,}",
        _either(
            _plugin_confirm("openai"),
            _regex_confirm(_NB + r"sk-(?!ant-)(?:[a-z]+-)?[A-Za-z0-9_-]{20,}", mixed),
        ),
    ),
    _rule(
        "aws_access_key",
        "an AWS access key id",
        "akia|asia|abia|acca|a3t",
        r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}",
        _plugin_confirm("aws", lambda m: m.startswith(_AWS_ID_PREFIXES) and has_digit(m)),
    ),
    _rule(
        "aws_secret_key",
        "an AWS secret access key",
        "aws|secret|LONG",
        r"(?i:aws|secret)",
        _either(
            _plugin_confirm("aws", lambda m: len(m) == 40),
            _aws_secret_near_context,
        ),
    ),
    _rule(
        "github_token",
        "a GitHub token",
        "ghp_|gho_|ghu_|ghs_|ghr_|github_pat_",
        r"gh[pousr]_[A-Za-z0-9_]{30}|github_pat_[A-Za-z0-9_]{22}",
        _either(
            _plugin_confirm("github"),
            _regex_confirm(r"github_pat_[A-Za-z0-9_]{22,}|gh[pousr]_[A-Za-z0-9]{30,}", mixed),
        ),
    ),
    _rule(
        "gitlab_token",
        "a GitLab token",
        "glpat-|gldt-|glft-|glsoat-|glrt-|glcbt-|glimt-|glptt-|glagent-|gloas-|gr1348941",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941",
        _plugin_confirm("gitlab"),
    ),
    _rule(
        "slack_token",
        "a Slack token or webhook",
        "xox|xapp-|hooks.slack.com",
        r"(?i:xox[a-z.]{1,8}-|xapp-\d|hooks\.slack\.com/services/)",
        _either(
            _plugin_confirm("slack"),
            _regex_confirm(r"xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]{16,}", _always),
            _regex_confirm(r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{30,}", _always),
        ),
    ),
    _own("google_api_key", "a Google API key", "aiza", r"AIza[0-9A-Za-z_-]{35}", _always),
    _own(
        "google_oauth",
        "a Google OAuth secret",
        "gocspx-|ya29.",
        r"GOCSPX-[\w-]{24,}|ya29\.[\w-]{30,}",
    ),
    _own(
        "huggingface_token",
        "a Hugging Face token",
        "hf_|api_org_",
        _NB + r"(?:hf|api_org)_[A-Za-z0-9]{30,40}" + _NA,
        _hf_token_ok,
    ),
    _rule(
        "stripe_key",
        "a Stripe secret key",
        "k_live_|k_test_|whsec_",
        r"[rs]k_(?:live|test)_|whsec_",
        _either(
            _plugin_confirm("stripe"),
            _regex_confirm(r"[rs]k_(?:live|test)_[0-9a-zA-Z]{20,}|whsec_[A-Za-z0-9]{24,}", mixed),
        ),
    ),
    _rule(
        "npm_token",
        "an npm token",
        "npm_|_authtoken=",
        r"npm_[A-Za-z0-9]{36}|_authToken=",
        _either(_plugin_confirm("npm"), _regex_confirm(_NB + r"npm_[A-Za-z0-9]{36}" + _NA)),
    ),
    _rule(
        "sendgrid_key", "a SendGrid API key", "sg.", r"SG\.[\w-]{22}\.", _plugin_confirm("sendgrid")
    ),
    _rule(
        "twilio_key",
        "a Twilio key",
        "LONG",
        _NB + r"(?:AC|SK)[a-z0-9]{32}" + _NA,
        _plugin_confirm("twilio", has_digit),
    ),
    _rule(
        "discord_token",
        "a Discord bot token",
        "LONG",
        r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27}",
        _plugin_confirm("discord", mixed),
    ),
    _own(
        "discord_webhook",
        "a Discord webhook URL",
        "discord",
        r"discord(?:app)?\.com/api/webhooks/\d+/[\w-]{40,}",
    ),
    _rule(
        "telegram_token",
        "a Telegram bot token",
        "LONG",
        r"(?<!\d)\d{8,10}:[\w-]{35}",
        _plugin_confirm("telegram", mixed),
    ),
    _rule(
        "mailchimp_key",
        "a Mailchimp API key",
        "-us",
        r"[0-9a-z]{32}-us\d",
        _plugin_confirm("mailchimp", mixed),
    ),
    _rule("pypi_token", "a PyPI token", "pypi-", r"pypi-AgE", _plugin_confirm("pypi")),
    _rule(
        "square_token",
        "a Square token",
        "sq0",
        r"sq0(?:csp|atp)-",
        _either(_plugin_confirm("square"), _regex_confirm(r"sq0atp-[\w-]{22,}")),
    ),
    _rule(
        "azure_storage_key",
        "an Azure storage account key",
        "accountkey=",
        r"AccountKey=",
        _plugin_confirm("azure"),
    ),
    _own(
        "api_key",
        "a service API token",
        "LONG",
        _NB
        + r"(?:shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[por]_v1_[a-f0-9]{64}|lin_api_[A-Za-z0-9]{40}"
        r"|ATATT3[\w=-]{50,}|dapi[a-f0-9]{32}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{50,}"
        r"|r8_[A-Za-z0-9]{30,}|dp\.(?:pt|st|ct|sa)\.[A-Za-z0-9]{40,}|key-[0-9a-f]{32}"
        r"|(?:secret|ntn)_[A-Za-z0-9]{40,}|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|NRAK-[A-Z0-9]{27}"
        r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|hv[sb]\.[\w-]{24,}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}"
        r"|AGE-SECRET-KEY-1[0-9A-Z]{58}|pplx-[A-Za-z0-9]{40,}|sntrys_[\w=]{50,})" + _NA,
    ),
)

_GENERIC_RULES: tuple[_Rule, ...] = (
    _rule(
        "url_credentials",
        "a URL or connection string with an embedded password",
        "://",
        r"://[^\s/@]*:[^\s/@]+@",
        _either(
            _url_has_password,
            _plugin_confirm("basic_auth", lambda m: not _PLACEHOLDER_PASSWORD.match(m)),
        ),
    ),
    _rule(
        "basic_auth",
        "an HTTP Basic authorization header",
        "basic",
        r"(?i:\bbasic)\s+[A-Za-z0-9+/]{8}",
        _basic_header_ok,
    ),
    _rule(
        "password_in_prose",
        "a password, PIN or passcode",
        "pass|pw|p/w|pin|code|combo|combination|cred|key",
        PASSWORD_TRIGGER,
        has_password,
    ),
    _rule(
        "login_pair",
        "a user name with its password",
        LOGIN_PAIR_NEEDLES,
        LOGIN_PAIR_TRIGGER,
        has_login_pair,
    ),
    _rule("card_number", "a payment card number", "", CARD_TRIGGER, has_card_number),
    _rule("iban", "a bank account number (IBAN)", "", IBAN_TRIGGER, has_iban),
    _rule(
        "bank_account",
        "a bank account number",
        "account|acct|a/c",
        BANK_ACCOUNT_TRIGGER,
        has_bank_account,
    ),
    _rule("seed_phrase", "a wallet recovery phrase", "", may_hold_seed_phrase, has_seed_phrase),
    _rule(
        "national_id",
        "a government identity number",
        "ssn|social security|passport",
        NATIONAL_ID_TRIGGER,
        has_national_id,
    ),
    _rule(
        "high_entropy_token",
        "a token-like secret next to a word such as key, token or secret",
        "key|token|secret|cred|bearer|auth|LONG",
        _KEYWORD_TRIGGER,
        _has_keyed_token,
    ),
)

_RULES = _PROVIDER_RULES + _GENERIC_RULES
#: Each rule's trigger as a function: truthy when the rule may apply.
_TRIGGERS: tuple[Callable[[str], object], ...] = tuple(
    re.compile(rule.trigger).search if isinstance(rule.trigger, str) else rule.trigger
    for rule in _RULES
)
# A rule's needles as one pattern: one search instead of a substring test per needle.
_NEEDLES = tuple(
    re.compile("|".join(re.escape(n) for n in rule.needles)) if rule.needles else None
    for rule in _RULES
)
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~]{16}")
# Every note written is scanned: the rules in order as (rule, needle search, trigger
# search), with and without those that need a long token run, so the loop does no more
# than it must.
_CHECKS = tuple(
    (rule, needles.search if needles is not None else None, trigger)
    for rule, trigger, needles in zip(_RULES, _TRIGGERS, _NEEDLES, strict=True)
)
_CHECKS_SHORT = tuple(check for check in _CHECKS if not check[0].long_run)


def _trie_pattern(words: Iterable[str]) -> str:
    """One regex matching any of ``words``, factored by common prefixes (``ab|ac`` is
    ``a(?:b|c)``): the regex engine then tries one branch per position instead of every
    word, several times faster than a flat alternation."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + build(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


#: Whether any rule's needle occurs at all: most notes carry none, and then only the rules
#: without needles can fire.
_ANY_NEEDLE = re.compile(_trie_pattern({n for rule in _RULES for n in rule.needles}))
_UNNEEDLED = tuple(check for check in _CHECKS if check[1] is None)
_UNNEEDLED_SHORT = tuple(check for check in _CHECKS_SHORT if check[1] is None)


#: What an id field (a message id) is scanned for: credentials recognisable by their own
#: format. Number checksums and prose rules stay off: numeric platform ids pass Luhn one
#: time in ten, and ids are random by nature.
_ID_CHECKS = tuple(
    check
    for check in _CHECKS
    if check[0] in _PROVIDER_RULES or check[0].detector == "url_credentials"
)


def scan_id(value: str) -> tuple[str, str] | None:
    """Like :func:`scan_secret`, for an id (a message id given as a note's source)."""
    lower = value.lower()
    long_run = _LONG_RUN.search(value) is not None
    if not long_run and _ANY_NEEDLE.search(lower) is None:
        return None
    for rule, needle, trigger in _ID_CHECKS:
        if (rule.long_run and not long_run) or (needle is not None and needle(lower) is None):
            continue
        if trigger(value) and rule.confirm(value):
            return rule.detector, rule.what
    return None


def scan_secret(text: str) -> tuple[str, str] | None:
    """Return ``(detector, what)`` for the first secret found in ``text``, else ``None``.

    ``what`` is a short noun phrase ("a GitHub token") suitable for a message;
    neither element contains any part of the secret.
    """
    lower = text.lower()
    long_run = _LONG_RUN.search(text) is not None
    if _ANY_NEEDLE.search(lower) is None:
        checks = _UNNEEDLED if long_run else _UNNEEDLED_SHORT
    else:
        checks = _CHECKS if long_run else _CHECKS_SHORT
    for rule, needle, trigger in checks:
        if needle is not None and needle(lower) is None:
            continue
        if trigger(text) and rule.confirm(text):
            return rule.detector, rule.what
    return None

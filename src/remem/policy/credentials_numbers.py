"""Numbers that identify a person's money or identity: payment cards, bank
accounts (IBAN, labelled account and routing numbers) and government ids.

Each detector pairs a cheap trigger pattern with a confirm function that checks
what a stray number cannot pass by chance: the Luhn digit and an issuer prefix
for cards, the country's length and the ISO 13616 mod-97 checksum for IBANs, a
bank label for other account numbers, a label for government ids. They run on
note text, never on ids (a platform's numeric ids pass Luhn one time in ten).
"""

from __future__ import annotations

import re

from remem.policy.token_shape import wordset

__all__ = [
    "BANK_ACCOUNT_TRIGGER",
    "CARD_TRIGGER",
    "IBAN_TRIGGER",
    "NATIONAL_ID_TRIGGER",
    "has_bank_account",
    "has_card_number",
    "has_iban",
    "has_national_id",
]

# Payment cards: 13-19 digits, optional uniform separators in card-like groups,
# a plausible issuer prefix and a valid Luhn checksum.
CARD_TRIGGER = r"\d(?:[ -]?\d){12}"
_CARD = re.compile(r"(?<![\w.+/-])\d(?:[ -]?\d){12,18}(?![\w/]|[.-]\d)")
_CARD_GROUPS = ((4, 6, 5), (4, 6, 4))
# Published sandbox numbers (Stripe, Adyen, Braintree docs) are not cardholder data.
_TEST_CARDS = wordset(
    """4242424242424242 4111111111111111 4000056655665556 5555555555554444 5105105105105100
    2223003122003222 378282246310005 371449635398431 6011111111111117 6011000990139424
    3056930009020004 36227206271667 3566002020360505 6200000000000005 4012888888881881"""
)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _issuer_ok(digits: str) -> bool:
    """Major-network prefixes only; order numbers and timestamps start elsewhere."""
    n, two = len(digits), int(digits[:2])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if two in (34, 37):
        return n == 15
    if 51 <= two <= 55 or 2221 <= int(digits[:4]) <= 2720:
        return n == 16
    return (digits[0] == "6" or two in (30, 35, 36, 38, 39) or two in (50, 56, 57, 58)) and n >= 14


def _card_ok(raw: str) -> bool:
    digits = "".join(c for c in raw if c.isdigit())
    if not 13 <= len(digits) <= 19 or digits in _TEST_CARDS:
        return False
    separators = {c for c in raw if not c.isdigit()}
    if len(separators) > 1:
        return False
    if separators:
        groups = tuple(len(g) for g in re.split(r"[ -]", raw))
        all_fours = all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4
        if not (all_fours and len(groups) >= 4) and groups not in _CARD_GROUPS:
            return False
    return _issuer_ok(digits) and _luhn_ok(digits)


def has_card_number(text: str) -> bool:
    """A payment card number (Luhn-valid, issuer-shaped, card-like grouping)."""
    return any(_card_ok(m.group(0)) for m in _CARD.finditer(text))


NATIONAL_ID_TRIGGER = r"(?i:\bssn\b|social security|passport (?:number|no|#))"
_NATIONAL_ID = re.compile(
    r"(?i)\b(?:ssn|social security(?: number| no\.?| #)?)\b\D{0,24}?(?<!\d)"
    r"\d{3}[- ]?\d{2}[- ]?\d{4}(?!\d)"
    r"|\bpassport (?:number|no\.?|#)\D{0,16}?\b[A-Z]{0,2}\d{6,9}\b"
)


def has_national_id(text: str) -> bool:
    """A social security or passport number stated with its label."""
    return _NATIONAL_ID.search(text) is not None


# IBAN (ISO 13616): country code, two check digits, the national account number
# (BBAN); the whole passes mod 97 == 1 with letters as 10..35 and the first four
# characters moved to the end. Lengths per country from the SWIFT IBAN registry.
_IBAN_LENGTHS = {
    **dict.fromkeys(("NO",), 15),
    **dict.fromkeys(("BE",), 16),
    **dict.fromkeys(("DK", "FI", "FK", "FO", "GL", "NL", "SD"), 18),
    **dict.fromkeys(("MK", "SI"), 19),
    **dict.fromkeys(("AT", "BA", "EE", "KZ", "LT", "LU", "MN", "XK"), 20),
    **dict.fromkeys(("CH", "HR", "LI", "LV"), 21),
    **dict.fromkeys(("BG", "BH", "CR", "DE", "GB", "GE", "IE", "ME", "RS", "VA"), 22),
    **dict.fromkeys(("AE", "GI", "IL", "IQ", "OM", "SO", "TL"), 23),
    **dict.fromkeys(("AD", "CZ", "ES", "MD", "PK", "RO", "SA", "SE", "SK", "TN", "VG"), 24),
    **dict.fromkeys(("LY", "PT", "ST"), 25),
    **dict.fromkeys(("IS", "TR"), 26),
    **dict.fromkeys(("BI", "DJ", "FR", "GR", "IT", "MC", "MR", "SM"), 27),
    **dict.fromkeys(("AL", "AZ", "BY", "CY", "DO", "GT", "HU", "LB", "NI", "PL", "SV"), 28),
    **dict.fromkeys(("BR", "EG", "PS", "QA", "UA"), 29),
    **dict.fromkeys(("JO", "KW", "MU", "YE"), 30),
    **dict.fromkeys(("MT", "SC"), 31),
    **dict.fromkeys(("LC",), 32),
    **dict.fromkeys(("RU",), 33),
}
#: Where an IBAN may start: a country code and two check digits, not inside a word
#: (written digits first: a pattern that starts with a digit class scans fastest).
IBAN_TRIGGER = r"\d\d(?<=[A-Za-z]{2}\d\d)(?<![A-Za-z0-9][A-Za-z]{2}\d\d)[ -]?[A-Za-z0-9]{2}"
_IBAN_START = re.compile(IBAN_TRIGGER)


def _iban_at(text: str, start: int) -> bool:
    """Whether a valid IBAN begins at ``start``: the country's length of letters and
    digits, single spaces or hyphens between them allowed, then the end of a token."""
    country = text[start : start + 2].upper()
    length = _IBAN_LENGTHS.get(country)
    if length is None:
        return False
    chars: list[str] = []
    i = start
    while i < len(text) and len(chars) < length:
        ch = text[i]
        if ch.isascii() and ch.isalnum():
            chars.append(ch.upper())
        elif not (ch in " -" and chars and i + 1 < len(text) and text[i + 1].isalnum()):
            return False
        i += 1
    if len(chars) < length or (i < len(text) and text[i].isalnum()):
        return False
    iban = "".join(chars)
    if not iban[2:4].isdigit():
        return False
    return int("".join(str(int(c, 36)) for c in iban[4:] + iban[:4])) % 97 == 1


def has_iban(text: str) -> bool:
    """An IBAN that passes its country's length and the mod-97 checksum."""
    return any(_iban_at(text, m.start() - 2) for m in _IBAN_START.finditer(text))


# Other bank account numbers: a labelled account number next to a bank routing
# label (sort code, routing/ABA number, BSB, transit, SWIFT/BIC) or named a bank,
# checking or savings account. "AWS account 123456789012" has no such label.
BANK_ACCOUNT_TRIGGER = r"(?i:\b(?:account|acct|a/c)\b)"
_BANK_ACCOUNT = re.compile(
    r"(?i)\b(?:account|acct|a/c)\.?(?:\s+(?:number|no\.?|num|#))?\s*(?:is|:|=|-)?\s*#?"
    r"(?<![\d-])(?P<num>\d(?:[ -]?\d){5,16})(?![\d-])"
)
_BANK_LABEL = re.compile(
    r"(?i)\b(?:sort[ -]?code|routing|aba|rtn|bsb|transit|swift|bic|iban|bank|banking"
    r"|checking|chequing|savings|current account|wire|direct deposit|payee)\b"
)


def has_bank_account(text: str) -> bool:
    """An account number stated with a bank label somewhere in the note."""
    return _BANK_LABEL.search(text) is not None and _BANK_ACCOUNT.search(text) is not None

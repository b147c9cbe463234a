"""Numbers that identify a person's money or identity: payment cards, bank
accounts (IBAN, labelled account and routing numbers) and government ids.

Each detector pairs a cheap trigger pattern with a confirm function that checks
what a stray number cannot pass by chance: the Luhn digit and an issuer prefix
for cards, the ISO 13616 mod-97 checksum and the country's length for IBANs, the
ABA checksum for US routing numbers, a label for everything else. They run on
note text, never on ids (a platform's numeric ids pass Luhn one time in ten).
"""

from __future__ import annotations

import re

from remem.policy.token_shape import wordset

__all__ = [
    "CARD_TRIGGER",
    "NATIONAL_ID_TRIGGER",
    "has_card_number",
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

"""The secret scan's shortcut: one prefix-factored regex tells whether any rule's needle
occurs; when none does, only the rules without needles are tried. Both must agree with
the plain reading of the rules."""

from __future__ import annotations

import random

from remem.policy import secrets


def _needles() -> list[str]:
    return sorted({n for rule in secrets._RULES for n in rule.needles})


def test_the_any_needle_pattern_matches_exactly_when_a_needle_occurs() -> None:
    rng = random.Random(11)
    needles = _needles()
    pieces = [*needles, *(n[: len(n) // 2] for n in needles), *(n[1:] for n in needles)]
    pieces += ["a", "b", " ", "-", "_", ".", "x", "1", "key", "monkey", "spinach", "laws"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        expected = any(n in text for n in needles)
        assert (secrets._ANY_NEEDLE.search(text) is not None) is expected, text


def _reference_scan(text: str) -> tuple[str, str] | None:
    """The rules read literally: needle filter, long-run filter, trigger, confirm."""
    lower = text.lower()
    long_run = secrets._LONG_RUN.search(text) is not None
    for rule, trigger in zip(secrets._RULES, secrets._TRIGGERS, strict=True):
        if rule.long_run and not long_run:
            continue
        if rule.needles and not any(n in lower for n in rule.needles):
            continue
        if trigger(text) and rule.confirm(text):
            return rule.detector, rule.what
    return None


def test_the_scan_finds_what_the_rules_read_literally_find() -> None:
    rng = random.Random(12)
    needles = _needles()
    # Words with no needle in them (checked below), secrets among them, and needle words.
    plain = ["Alice", "prefers", "tea", "the", "is", "in", "vault", "hunter2", "1234567890"]
    plain += ["4539 1488 0343 6467", "xK9mP2vL8qR4tY7wZ3", "AC" + "a1b2" * 8, "Bob's"]
    assert not any(n in w.lower() for w in plain for n in needles)
    loaded = ["sk-proj-" + "Ab3" * 8, "AKIA" + "Q" * 15 + "7", "ghp_" + "a1B2" * 8]
    loaded += ["password:", "token", "key", *needles]
    for _ in range(4000):
        text = " ".join(rng.choice(plain) for _ in range(rng.randint(1, 8)))
        if rng.random() < 0.5:
            text += " " + rng.choice(loaded) + " " + rng.choice(plain)
        assert secrets.scan_secret(text) == _reference_scan(text), text

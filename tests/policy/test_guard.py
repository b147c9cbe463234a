"""Tests for the write-time content guard (remem.policy.guard)."""

from __future__ import annotations

import dataclasses
import re
import time

import pytest

from remem.errors import Rejected
from remem.policy.guard import Finding, check_note_text, find_secret, find_sensitive

from .guard_corpus import BENIGN_NOTES as FIRST_BENIGN_NOTES
from .guard_corpus import (
    NON_SENSITIVE_NOTES,
    SENSITIVE_NOTES,
)
from .guard_corpus import SECRET_NOTES as FIRST_SECRET_NOTES
from .guard_corpus_more import MORE_BENIGN_NOTES, MORE_SECRET_NOTES
from .guard_held_out import HELD_OUT_BENIGN_NOTES, HELD_OUT_SECRET_NOTES

SECRET_NOTES = FIRST_SECRET_NOTES + MORE_SECRET_NOTES
BENIGN_NOTES = FIRST_BENIGN_NOTES + MORE_BENIGN_NOTES

# Fake credentials with the exact secret substring that must never be echoed.
FAKE_OPENAI = "sk-proj-Qm3vT8xLw2ZrN6pYk1HsA9dFj4GcE7bU0oRiVtMy5XaWnPe"
FAKE_GITHUB = "ghp_R8nq2LkV5xTz1MwY7cHb3JfA9dGs6PeU0iQo"
SECRET_EXAMPLES: list[tuple[str, str]] = [
    ("my password is hunter2", "hunter2"),
    ("Her PIN is 4412.", "4412"),
    (f"Priya's OpenAI key is {FAKE_OPENAI}", FAKE_OPENAI),
    (f"CI uses {FAKE_GITHUB} to push tags.", FAKE_GITHUB),
    ("Olga's Visa is 4556 7375 8689 9855.", "4556 7375 8689 9855"),
    ("DB is postgres://app:Wq8rT2zLp@db.internal/app", "Wq8rT2zLp"),
]


def _reject(text: str, **kwargs: int) -> Rejected:
    with pytest.raises(Rejected) as info:
        check_note_text(text, **kwargs)
    return info.value


@pytest.mark.parametrize("text", ["", " ", "\n\t  ", "\u00a0"])
def test_blank_text_is_rejected_as_empty(text: str) -> None:
    err = _reject(text)
    assert err.reason == "empty"
    assert err.code == "rejected"


def test_too_long_uses_custom_limit_and_says_length_and_limit() -> None:
    check_note_text("x" * 20, max_chars=20)
    err = _reject("Prefers short replies.", max_chars=20)
    assert err.reason == "too_long"
    assert "22" in err.message and "20" in err.message
    assert "split" in err.message.lower()


def test_default_limit_is_500_characters() -> None:
    check_note_text("a" * 500)
    assert _reject("a" * 501).reason == "too_long"


def test_benign_note_passes() -> None:
    check_note_text("Prefers short replies with a code example first.")


@pytest.mark.parametrize(("text", "secret"), SECRET_EXAMPLES)
def test_secret_is_rejected_without_echoing_it(text: str, secret: str) -> None:
    err = _reject(text)
    assert err.reason == "secret"
    for rendered in (err.message, str(err), repr(err), repr(err.args)):
        assert secret not in rendered
    finding = find_secret(text)
    assert finding is not None and secret not in repr(finding)


def _risky_tokens(text: str) -> list[str]:
    """Parts of a note that could be (part of) a secret: anything with a digit or long."""
    words = re.split(r"[\s\"'`,;()]+", text)
    return [w for w in words if len(w) >= 4 and (any(c.isdigit() for c in w) or len(w) >= 16)]


def test_no_corpus_secret_leaks_into_messages() -> None:
    leaks = []
    for text, _ in SECRET_NOTES:
        err = _reject(text, max_chars=10_000)
        leaks += [(text, tok) for tok in _risky_tokens(text) if tok in err.message]
    assert not leaks, f"messages echo note content: {leaks}"


def test_finding_is_a_frozen_value() -> None:
    finding = find_secret("The door code is 4729#.")
    assert finding is not None
    assert finding == Finding(finding.reason, finding.detector, finding.message)
    assert (finding.reason, finding.detector) == ("secret", "password_in_prose")
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.reason = "other"  # type: ignore[misc]


def test_secret_corpus_recall_and_false_positive_rate() -> None:
    misses = [(text, label) for text, label in SECRET_NOTES if find_secret(text) is None]
    false_positives = [(text, find_secret(text)) for text in BENIGN_NOTES if find_secret(text)]
    recall = 1 - len(misses) / len(SECRET_NOTES)
    fpr = len(false_positives) / len(BENIGN_NOTES)
    print(
        f"guard corpus: secret recall={recall:.3f} ({len(SECRET_NOTES)}) "
        f"false-positive rate={fpr:.3f} ({len(BENIGN_NOTES)})"
    )
    assert len(SECRET_NOTES) >= 280 and len(BENIGN_NOTES) >= 400
    assert recall >= 0.97, f"missed secrets: {misses}"
    assert fpr <= 0.01, f"benign notes flagged: {false_positives}"


def test_held_out_batch_recall_and_false_positive_rate() -> None:
    """A batch written after the detectors were tuned, and not tuned on afterwards."""
    misses = [text for text, _ in HELD_OUT_SECRET_NOTES if find_secret(text) is None]
    flagged = [(t, find_secret(t)) for t in HELD_OUT_BENIGN_NOTES if find_secret(t)]
    recall = 1 - len(misses) / len(HELD_OUT_SECRET_NOTES)
    fpr = len(flagged) / len(HELD_OUT_BENIGN_NOTES)
    print(
        f"guard held-out: secret recall={recall:.3f} ({len(HELD_OUT_SECRET_NOTES)}) "
        f"false-positive rate={fpr:.3f} ({len(HELD_OUT_BENIGN_NOTES)})"
    )
    assert len(HELD_OUT_SECRET_NOTES) >= 100 and len(HELD_OUT_BENIGN_NOTES) >= 100
    assert recall >= 0.95, f"missed secrets: {misses}"
    assert fpr <= 0.02, f"benign notes flagged: {flagged}"


def test_secret_corpus_detector_labels() -> None:
    wrong = []
    for text, label in SECRET_NOTES:
        finding = find_secret(text)
        if finding is not None and finding.detector != label:
            wrong.append((text, label, finding.detector))
    agreement = 1 - len(wrong) / len(SECRET_NOTES)
    print(f"guard corpus: detector agreement={agreement:.3f} ({len(SECRET_NOTES)})")
    assert agreement >= 0.95, f"wrong detector (note, expected, got): {wrong}"


def test_sensitive_corpus_precision_and_recall() -> None:
    flagged = {text: find_sensitive(text) for text, _ in SENSITIVE_NOTES}
    misses = [(text, label) for text, label in SENSITIVE_NOTES if flagged[text] is None]
    false_positives = [(t, find_sensitive(t)) for t in NON_SENSITIVE_NOTES if find_sensitive(t)]
    true_positives = len(SENSITIVE_NOTES) - len(misses)
    recall = true_positives / len(SENSITIVE_NOTES)
    precision = true_positives / max(1, true_positives + len(false_positives))
    print(
        f"guard corpus: sensitive precision={precision:.3f} recall={recall:.3f} "
        f"({len(SENSITIVE_NOTES)} sensitive, {len(NON_SENSITIVE_NOTES)} ordinary)"
    )
    assert len(SENSITIVE_NOTES) >= 40 and len(NON_SENSITIVE_NOTES) >= 60
    assert recall >= 0.95, f"missed sensitive notes: {misses}"
    assert precision >= 0.95, f"ordinary notes flagged: {false_positives}"


def test_sensitive_corpus_categories() -> None:
    wrong = []
    for text, label in SENSITIVE_NOTES:
        finding = find_sensitive(text)
        if finding is not None and finding.detector != label:
            wrong.append((text, label, finding.detector))
    agreement = 1 - len(wrong) / len(SENSITIVE_NOTES)
    print(f"guard corpus: sensitive category agreement={agreement:.3f}")
    assert agreement >= 0.9, f"wrong category (note, expected, got): {wrong}"


def test_sensitive_finding_shape() -> None:
    finding = find_sensitive("Her husband is cheating on her.")
    assert finding is not None
    assert (finding.reason, finding.detector) == ("sensitive", "others_private")
    assert "cheating" not in finding.message
    assert find_sensitive("Works on the finance team's dashboard.") is None


def test_check_note_text_is_fast_on_benign_text() -> None:
    notes = [
        "Prefers short replies with a code example first, and asks for links to the docs.",
        "Alice works in the Berlin office and is usually online from 9 to 17 CET on weekdays.",
        "Wants PR summaries as bullet lists, not paragraphs; dislikes emoji in review comments.",
        "Bob maintains the billing service and reviews its migrations before each release.",
    ]
    for note in notes:
        check_note_text(note)
    rounds = 2_000
    start = time.perf_counter()
    for _ in range(rounds):
        for note in notes:
            check_note_text(note)
    per_call_us = (time.perf_counter() - start) / (rounds * len(notes)) * 1e6
    print(f"guard: check_note_text {per_call_us:.1f} us per ~90-char benign note")
    assert per_call_us < 100, f"check_note_text too slow: {per_call_us:.1f} us"

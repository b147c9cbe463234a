"""Tests for the English memory-command recognizer."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from remem.commands.recognize import (
    CommandRecognizer,
    Intent,
    IntentKind,
    RuleRecognizer,
    recognize,
)

from .command_corpus import COMMANDS, CORPUS, NEAR_MISSES, Case

K = IntentKind

MIN_PRECISION = 0.97
MIN_RECALL = 0.90


def _kind(text: str) -> IntentKind | None:
    intent = recognize(text)
    return None if intent is None else intent.kind


# --------------------------------------------------------------------------
# The corpus itself
# --------------------------------------------------------------------------


def test_corpus_is_large_and_covers_every_kind() -> None:
    assert len(CORPUS) >= 180
    assert len(NEAR_MISSES) >= 60
    per_kind = Counter(case.kind for case in COMMANDS)
    thin = {kind.value: per_kind[kind] for kind in IntentKind if per_kind[kind] < 6}
    assert not thin, f"kinds with fewer than 6 paraphrases: {thin}"


def test_corpus_is_consistent() -> None:
    texts = [case.text for case in CORPUS]
    duplicates = [text for text, count in Counter(texts).items() if count > 1]
    assert not duplicates, f"duplicate utterances: {duplicates}"
    for case in CORPUS:
        has_payload = case.kind in (K.REMEMBER, K.CORRECT)
        assert (case.payload is not None) == has_payload, case


# --------------------------------------------------------------------------
# Precision / recall
# --------------------------------------------------------------------------


def test_precision_and_recall_on_corpus() -> None:
    predicted = [(case, _kind(case.text)) for case in CORPUS]
    fired = [(case, kind) for case, kind in predicted if kind is not None]
    correct = sum(1 for case, kind in fired if kind == case.kind)
    n_true = sum(1 for case in CORPUS if case.kind is not None)
    precision = correct / len(fired) if fired else 1.0
    recall = correct / n_true
    print(
        f"command recognizer: precision={precision:.3f} recall={recall:.3f} "
        f"on {len(CORPUS)} utterances"
    )
    wrong = "\n".join(
        f"  {case.text!r}: expected {case.kind}, got {kind}"
        for case, kind in predicted
        if kind != case.kind
    )
    assert precision >= MIN_PRECISION, f"precision {precision:.3f}; misclassified:\n{wrong}"
    assert recall >= MIN_RECALL, f"recall {recall:.3f}; misclassified:\n{wrong}"


PAYLOAD_CASES = [case for case in CORPUS if case.kind in (K.REMEMBER, K.CORRECT)]


@pytest.mark.parametrize("case", PAYLOAD_CASES, ids=[case.text for case in PAYLOAD_CASES])
def test_payload_extraction(case: Case) -> None:
    intent = recognize(case.text)
    assert intent is not None, case.text
    assert intent.kind == case.kind
    assert intent.payload == case.payload


def test_payload_is_empty_for_kinds_without_one() -> None:
    for case in COMMANDS:
        intent = recognize(case.text)
        if intent is not None and intent.kind not in (K.REMEMBER, K.CORRECT):
            assert intent.payload == "", case.text


# --------------------------------------------------------------------------
# Near-misses named in the design brief
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "I forgot my keys",
        "remember when we went hiking?",
        # A question about the past, not an instruction to store anything.
        "do you remember the meeting time?",
        # Addressed to a person ("don't forget to ..." is a to-do).
        "don't forget to buy milk",
        # "forget it" is an idiom for "never mind", and the message goes on
        # with unrelated chatter; forgetting a note here would lose data.
        "forget it, let's move on",
        # Reacts to an event; "the deploy failed again" is not a corrected note.
        "that's wrong, the deploy failed again",
        # About a plan, not about the speaker.
        "what do you remember about the Q3 plan?",
        "the memory leak is fixed",
        "I'll remember that for next time",
        # A reminder request, not memory.
        "can you remind me tomorrow at 9",
        "remember to call mom",
        "forget about the report, it's cancelled",
    ],
)
def test_brief_near_misses_are_not_commands(text: str) -> None:
    assert recognize(text) is None


def test_bare_wrongness_disables_but_a_statement_corrects() -> None:
    assert recognize("That's wrong.") == Intent(K.DISABLE)
    assert recognize("That's wrong, I prefer weekly updates.") == Intent(
        K.CORRECT, "I prefer weekly updates"
    )
    # Naming the memory makes any statement a correction.
    assert recognize("That memory is wrong, the standup is at 9:15") == Intent(
        K.CORRECT, "the standup is at 9:15"
    )


def test_forget_that_alone_is_a_command_but_not_with_chatter() -> None:
    assert _kind("Forget that.") is K.FORGET_LAST
    assert _kind("forget that, it doesn't matter") is None
    assert _kind("forget that guy, he's always late") is None


# --------------------------------------------------------------------------
# Scope hints and normalization
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "payload"),
    [
        ("remember for this channel that we ship on Thursdays", "we ship on Thursdays"),
        ("In this channel, remember that we write in Spanish", "we write in Spanish"),
        ("Remember that I prefer bullet points, just for this channel.", "I prefer bullet points"),
        ("remember that standups are at 10 in this channel only", "standups are at 10"),
    ],
)
def test_channel_scope_hint(text: str, payload: str) -> None:
    assert recognize(text) == Intent(K.REMEMBER, payload, "channel")


def test_no_scope_hint_without_channel_phrase() -> None:
    intent = recognize("Remember that I prefer short status reports.")
    assert intent == Intent(K.REMEMBER, "I prefer short status reports", None)


def test_scoping_the_last_note_is_not_a_new_memory() -> None:
    assert _kind("Remember that for this channel only") is K.SCOPE_TO_CHANNEL


@pytest.mark.parametrize(
    "text",
    [
        "forget that",
        "FORGET THAT!!!",
        "<@U024BE7LH> forget that",
        "@yuko: forget that",
        "hey bot, forget that please",
        "Could you please forget that?",
        "forget that, ok?",
        "ok so, forget that 😅",
        "forget that <@U024BE7LH>",
        "  forget\n that . ",
    ],
)
def test_normalization_variants(text: str) -> None:
    assert _kind(text) is K.FORGET_LAST


def test_curly_apostrophes_match_and_are_kept_in_payload() -> None:
    assert _kind("That’s not right") is K.DISABLE
    intent = recognize("Please remember I don’t like being pinged after 6pm 🙏")
    assert intent == Intent(K.REMEMBER, "I don’t like being pinged after 6pm")


def test_question_is_not_a_command_unless_polite() -> None:
    assert _kind("Do you remember that I prefer tea?") is None
    assert _kind("Can you remember that I prefer tea?") is K.REMEMBER
    assert _kind("forget that?") is None


# --------------------------------------------------------------------------
# Contract
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", " ", "?", "🙏🙏", "remember", "remember:", "<@U1>", "a" * 5000, "remember that " * 100],
)
def test_degenerate_input_is_not_a_command(text: str) -> None:
    assert recognize(text) is None


def test_rule_recognizer_satisfies_the_protocol() -> None:
    recognizer: CommandRecognizer = RuleRecognizer()
    assert recognizer.recognize("What do you remember about me?") == Intent(K.LIST_ABOUT_ME)


def test_intent_is_immutable() -> None:
    intent = Intent(K.FORGET_LAST)
    with pytest.raises(dataclasses.FrozenInstanceError):
        intent.payload = "x"  # type: ignore[misc]

"""The write-time content guard: what a note may not contain.

Every note passes :func:`check_note_text` before it is written. It refuses
blank text, text longer than the configured limit, and text that carries a
credential (API keys, private keys, JWTs, passwords and PINs in prose, user
names with their passwords, card numbers, bank account numbers and IBANs,
wallet recovery phrases, URLs with passwords, random tokens next to
"key"/"token"/"secret"). :func:`check_note_fields` applies the same detectors to
a note's other stored free text (subject and tags) and the token detectors to
its source message id. Inferred notes are additionally screened with
:func:`find_sensitive`; that decision belongs to the caller, because what a
person states about themselves may be remembered.

Every check reads the text in its strict form (:func:`~remem.policy.scan_form.scan_form`:
NFKC, invisible characters removed, look-alike letters folded), so what was
checked is what a reader sees: a zero-width space inside a token, fullwidth
digits or a Cyrillic ``р`` in "password" hide nothing.

No message produced here ever contains the offending secret: messages name the
*kind* of secret and say how to fix the note.

The detectors live in :mod:`remem.policy.secrets` and
:mod:`remem.policy.sensitive`; this module is the stable facade.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from remem.errors import Rejected
from remem.policy.scan_form import scan_form
from remem.policy.secrets import scan_id, scan_secret
from remem.policy.sensitive import scan_sensitive
from remem.policy.split_tokens import rejoined

__all__ = [
    "Finding",
    "check_note_fields",
    "check_note_text",
    "check_rule_text",
    "find_secret",
    "find_sensitive",
]


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason a note's text is not acceptable.

    ``reason`` is ``"secret"`` or ``"sensitive"``; ``detector`` names the rule
    that fired (``"openai_key"``, ``"card_number"``, ``"health"`` ...);
    ``message`` is a sentence for humans that never quotes the offending text.
    """

    reason: str
    detector: str
    message: str


def _secret_finding(hit: tuple[str, str] | None, where: str = "note") -> Finding | None:
    if hit is None:
        return None
    detector, what = hit
    message = (
        f"The {where} appears to contain {what} (detector: {detector}). "
        "Notes must never hold credentials: remove it and, if useful, remember "
        "where it is kept instead (for example 'the staging key is in the team vault')."
    )
    return Finding("secret", detector, message)


def _scan(strict: str) -> tuple[str, str] | None:
    """:func:`scan_secret` of a text in its strict form, and of each credential token in
    it that whitespace broke (a line break or a no-break space inside a token is shown
    as a space: readers glue it back), glued back (see :mod:`remem.policy.split_tokens`)."""
    hit = scan_secret(strict)
    if hit is None:
        for token in rejoined(strict):
            hit = scan_secret(token)
            if hit is not None:
                break
    return hit


def find_secret(text: str) -> Finding | None:
    """Return a ``secret`` finding if ``text`` carries a credential, else ``None``."""
    return _secret_finding(_scan(scan_form(text)))


def find_sensitive(text: str) -> Finding | None:
    """Return a ``sensitive`` finding if ``text`` touches a sensitive personal topic.

    Intended for *inferred* notes only: health, finances, sexuality, religion,
    politics and other people's private business must be told, not guessed.
    """
    hit = scan_sensitive(scan_form(text))
    if hit is None:
        return None
    category, what = hit
    message = (
        f"The inferred note touches on {what} (category: {category}). "
        "Do not infer sensitive personal details; store it only if the person "
        "stated it and asked for it to be remembered."
    )
    return Finding("sensitive", category, message)


def check_note_text(text: str, *, max_chars: int = 500) -> None:
    """Raise :class:`~remem.errors.Rejected` unless ``text`` may be stored as a note.

    Checks, in order: ``reason="empty"`` (blank, whitespace or invisible characters
    only), ``reason="too_long"`` (``len(text) > max_chars``) and ``reason="secret"``
    (see :func:`find_secret`). Returns ``None`` when the text is acceptable.
    """
    strict = scan_form(text)
    if not strict.strip():
        raise Rejected(
            "The note is empty. Write one short statement about the person or channel.",
            "empty",
        )
    if len(text) > max_chars:
        raise Rejected(
            f"The note is {len(text)} characters long; the limit is {max_chars}. "
            "Split it into several shorter notes, one statement each.",
            "too_long",
        )
    finding = _secret_finding(_scan(strict))
    if finding is not None:
        raise Rejected(finding.message, "secret")


def check_note_fields(
    *, subject: str | None = None, tags: Iterable[str] = (), message_id: str | None = None
) -> None:
    """Raise :class:`~remem.errors.Rejected` (``reason="secret"``) if a note's subject or
    a tag carries a credential (every detector, as for the text), or its source message id
    carries a credential token (the detectors that recognise a token by its format only:
    an id's digits pass a card checksum by chance, and ids look random by nature)."""
    finding = None
    if subject:
        finding = _secret_finding(scan_secret(scan_form(subject)), "note's subject")
    for tag in tags:
        finding = finding or _secret_finding(scan_secret(scan_form(tag)), "note's tag")
    if message_id and finding is None:
        finding = _secret_finding(scan_id(scan_form(message_id)), "note's source message id")
    if finding is not None:
        raise Rejected(finding.message, "secret")


def check_rule_text(name: str, content: str) -> None:
    """Raise :class:`~remem.errors.Rejected` (``reason="secret"``) if a rule's content
    carries a credential: rules are shown in every system prompt."""
    finding = _secret_finding(_scan(scan_form(content)), f"rule {name!r}")
    if finding is not None:
        raise Rejected(finding.message, "secret")

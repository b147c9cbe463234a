"""The write-time content guard: what a note may not contain.

Every note passes :func:`check_note_text` before it is written. It refuses
blank text, text longer than the configured limit, and text that carries a
credential (API keys, private keys, JWTs, passwords and PINs in prose, card
numbers, URLs with passwords, random tokens next to "key"/"token"/"secret").
Inferred notes are additionally screened with :func:`find_sensitive`; that
decision belongs to the caller, because what a person states about themselves
may be remembered.

No message produced here ever contains the offending secret: messages name the
*kind* of secret and say how to fix the note.

The detectors live in :mod:`remem.policy.secrets` and
:mod:`remem.policy.sensitive`; this module is the stable facade.
"""

from __future__ import annotations

from dataclasses import dataclass

from remem.errors import Rejected
from remem.policy.secrets import scan_secret
from remem.policy.sensitive import scan_sensitive

__all__ = ["Finding", "check_note_text", "find_secret", "find_sensitive"]


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


def find_secret(text: str) -> Finding | None:
    """Return a ``secret`` finding if ``text`` carries a credential, else ``None``."""
    hit = scan_secret(text)
    if hit is None:
        return None
    detector, what = hit
    message = (
        f"The note appears to contain {what} (detector: {detector}). "
        "Notes must never hold credentials: remove it and, if useful, remember "
        "where it is kept instead (for example 'the staging key is in the team vault')."
    )
    return Finding("secret", detector, message)


def find_sensitive(text: str) -> Finding | None:
    """Return a ``sensitive`` finding if ``text`` touches a sensitive personal topic.

    Intended for *inferred* notes only: health, finances, sexuality, religion,
    politics and other people's private business must be told, not guessed.
    """
    hit = scan_sensitive(text)
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

    Checks, in order: ``reason="empty"`` (blank or whitespace only),
    ``reason="too_long"`` (``len(text) > max_chars``) and ``reason="secret"``
    (see :func:`find_secret`). Returns ``None`` when the text is acceptable.
    """
    if not text.strip():
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
    finding = find_secret(text)
    if finding is not None:
        raise Rejected(finding.message, "secret")

"""Vetoes: an undone revision forbids that replacement to retire or override that note again.

``undo`` of a revision (note R retired by note P) restores R and leaves P in
place; from then on P never retires R and never hides it at recall, whichever
path proposes it (a subject rule, a relearn, a consolidation, a manual
supersession, the recall-time subject override).

A veto is kept two ways:

* by ids: ``State.vetoes`` holds ``(P.id, R.id)``;
* by what the notes say, so that a *new* note with P's words and subject is
  vetoed against a note with R's words and subject: ``State.veto_keys`` holds
  ``(key(P), key(R))``, where ``key`` is a keyed hash (HMAC-SHA256 under a
  per-agent secret the backend keeps outside the log) of the normalized text
  and the subject. The log holds these hashes (in the undo's ``restore``
  event), never a copy of the text; compaction drops the hashes naming a note
  it erases. Without the secret a hash cannot be tested against a guess.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from remem.core.model import Note, normalize_text

if TYPE_CHECKING:
    from remem.core.projection import State

#: Hex digits kept of each HMAC-SHA256 (128 bits: collisions are not a concern).
KEY_HEX = 32


def statement_key(secret: bytes, text: str, subject: str | None) -> str:
    """The keyed hash of what a note says: its normalized text and its subject. The text
    is read in compatibility form (NFKC) first, so that the same words in fullwidth or
    other compatibility letters are the same statement (ASCII text is unchanged)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    message = f"{subject or ''}\x00{normalize_text(text)}".encode("utf-8", "surrogatepass")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:KEY_HEX]


@dataclass(frozen=True, slots=True)
class Said:
    """What a note (or a note about to be written) says, for veto checks."""

    id: str
    text: str
    subject: str | None

    @classmethod
    def of(cls, note: Note) -> Said:
        return cls(note.id, note.text, note.subject)


class Vetoes:
    """The vetoes of one state; the secret is read only when a hash must be computed."""

    __slots__ = ("_secret", "_secret_bytes", "_state")

    def __init__(self, state: State, secret: Callable[[], bytes]) -> None:
        self._state = state
        self._secret = secret
        self._secret_bytes: bytes | None = None

    def _key(self, said: Said) -> str:
        if self._secret_bytes is None:
            self._secret_bytes = self._secret()
        return statement_key(self._secret_bytes, said.text, said.subject)

    def pair(self, replacement: Said, retired: Said) -> tuple[str, str]:
        """The keyed pair an undo of ``replacement`` retiring ``retired`` records."""
        return self._key(replacement), self._key(retired)

    def forbids(self, replacement: Said, retired: Said) -> bool:
        """Whether an undo forbids ``replacement`` to retire or override ``retired``."""
        state = self._state
        if replacement.id == retired.id or (replacement.id, retired.id) in state.vetoes:
            return True
        if not state.veto_keys:
            return False
        return self.pair(replacement, retired) in state.veto_keys

    def __bool__(self) -> bool:
        """False when nothing was ever vetoed (callers may then skip every check)."""
        return bool(self._state.vetoes or self._state.veto_keys)

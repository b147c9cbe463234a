"""Memory-command intents: what a user asked the memory layer to do.

An :class:`Intent` is the *recognized* request only. Executing it against the
memory store (which note "that" refers to, who "me" is, which channel "this
channel" is) is the caller's job; the recognizer never performs I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class IntentKind(StrEnum):
    """The memory commands a person can give in chat.

    "That"/"the note" in the descriptions below means the note the bot most
    recently wrote or used in this conversation; resolving it is up to the
    executor.
    """

    REMEMBER = "remember"
    """Store ``payload`` as an explicit note about the speaker."""
    SCOPE_TO_CHANNEL = "scope_to_channel"
    """Restrict the last note to the current channel."""
    LIST_ABOUT_ME = "list_about_me"
    """Show the speaker what is remembered about them."""
    CORRECT = "correct"
    """Replace the last note with ``payload``."""
    DISABLE = "disable"
    """The last note is wrong or stale; stop using it (no replacement given)."""
    FORGET_LAST = "forget_last"
    """Forget the last note."""
    FORGET_ALL_ABOUT_ME = "forget_all_about_me"
    """Forget every note about the speaker."""
    NO_CROSS_CHANNEL = "no_cross_channel"
    """Do not use the speaker's notes outside the channel they came from."""
    ALLOW_CROSS_CHANNEL = "allow_cross_channel"
    """The speaker's notes may be used in other channels."""
    STOP_INFERRING = "stop_inferring"
    """Keep only what the speaker states explicitly; infer nothing."""
    RESUME_INFERRING = "resume_inferring"
    """Inferring notes about the speaker is allowed again."""
    WHICH_USED = "which_used"
    """Show which notes informed the bot's last answer."""
    MEMBER_LINK = "member_link"
    """Send the speaker a link to their scratchpad page (``/memory``, "show my memory")."""


@dataclass(frozen=True, slots=True)
class Intent:
    """A recognized memory command.

    ``payload`` is the statement for :attr:`IntentKind.REMEMBER` and
    :attr:`IntentKind.CORRECT`, in the speaker's own words and person
    ("I prefer weekly updates"), trimmed, without trailing punctuation and
    without the channel phrase that produced ``scope_hint``. It is ``""`` for
    every other kind.

    ``scope_hint`` is ``"channel"`` when a REMEMBER command itself asks for
    channel scope ("remember for this channel that ..."), else ``None``.
    """

    kind: IntentKind
    payload: str = ""
    scope_hint: str | None = None


class CommandRecognizer(Protocol):
    """Anything that turns a chat message into a memory command or ``None``.

    Contract: pure (no I/O, no state change), total (never raises for any
    ``str``), and conservative: ``None`` whenever the message is not clearly a
    memory command, because a false positive can store junk or forget data.
    """

    def recognize(self, text: str) -> Intent | None: ...

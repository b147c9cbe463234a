"""Learning from a conversation slice under role-based authority (DESIGN §7): the
messages, the report, and the rules; the pass itself is :class:`remem.app.learn.Learner`.

Classification (what is this?) is best-effort and may come from an LLM;
authorization (who may write it?) is code, on the role stored with each
message, never on anything the text claims:

====================================  ====================  =========================
item                                  admin speaker         member speaker
====================================  ====================  =========================
identity / relationship claim         personal note         personal note (a claim)
personal preference or fact           own user scope        own user scope
new operational procedure             agent scope; later    dropped
                                      value on the subject  (operational_from_non_admin)
                                      supersedes
standing style rule                   proposed learned      own preference
                                      rule (policy)
channel decision                      channel (review)      channel (review)
one-off task                          not stored            not stored
====================================  ====================  =========================

The run envelope is the authority; a message's role label is an assertion of
the host, checked in :func:`remem.policy.authz.decide` before anything is
learned (a refusal raises ``Denied`` and nothing of the slice is learned): an
unpaired run learns nothing; no label is above the host's role ceiling
(``Memory(max_role=...)``); a message by the run's own speaker carries the
envelope's role. Then each person is read on their own lines (by the stored
author id); an admin's operational items count only when every message of
theirs in the slice carries a human admin role. Unpaired senders' lines are
nobody's. A DM run reads only its two parties (its speaker, and the agent's
replies for context). Webhook runs are not extracted from; runs without a person
(cron, sop, task, agent-only, knowledge) write no one's personal memory and
never learn operational knowledge (standing rules included). A statement an
undo vetoed against a live note is not taught again (``vetoed``).

A relearn of an archive (:func:`remem.app.formation.relearn`) dates what it
learns when it was said; of what non-admins said, personal lines are not learned
(``archive_personal``) and everything else is quarantined as ``unverified``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from remem.context import Role
from remem.core.model import Note, Status, parse_ts
from remem.errors import InvalidInput
from remem.formation import learned_rules
from remem.formation.classify import Category, Item
from remem.formation.rules import is_operational_content

AGENT_ROLES = frozenset({"agent", "assistant", "bot"})
LEARNED_RULE_TAG = learned_rules.LEARNED_RULE_TAG


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a slice. ``author`` is the stored user id (None: unpaired sender);
    ``role`` the role stored with it (a :class:`Role`, or ``"agent"`` for the agent's own)."""

    author: str | None
    role: Role | str
    text: str
    message_id: str | None = None
    ts: datetime | str | None = None


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item that was not stored (see :attr:`LearnReport.dropped`)."""

    text: str
    author: str | None
    category: str
    message_id: str | None = None


@dataclass(slots=True)
class LearnReport:
    """What a learning pass did: every item is learned, pending, reinforced or dropped."""

    run_id: str
    learned: list[Note] = field(default_factory=list)
    pending: list[Note] = field(default_factory=list)
    reinforced: list[Note] = field(default_factory=list)
    dropped: list[tuple[Dropped, str]] = field(default_factory=list)
    classifier: str = "rules"
    degraded: list[str] = field(default_factory=list)

    def add(self, note: Note) -> None:
        if note.evidence > 1:  # seen before (pending or not): one more piece of evidence
            self.reinforced.append(note)
        elif note.status in (Status.PENDING, Status.UNVERIFIED):
            self.pending.append(note)
        else:
            self.learned.append(note)

    def drop(self, item: Item | Message, author: str | None, reason: str, mid: str | None) -> None:
        if isinstance(item, Message):
            entry = Dropped(item.text, author, "message", mid)
        else:
            entry = Dropped(item.statement, author, item.category.value, mid)
        self.dropped.append((entry, reason))


def operational_from_non_admin(item: Item) -> bool:
    """Whether ``item``, said by a non-admin, is operational knowledge they may not teach
    (DESIGN §7): labelled operational, or operational-looking content in anything but a
    one-off task or a standing style rule. ``learn`` never stores such an item."""
    category = item.category
    if category is Category.OPERATIONAL:
        return True
    if category in (Category.ONE_OFF, Category.STYLE_RULE):
        return False
    return is_operational_content(item.statement.lower())


def _role(value: Role | str) -> Role | str:
    if isinstance(value, Role):
        return value
    text = str(value).lower()
    if text in AGENT_ROLES:
        return "agent"
    try:
        return Role(text)
    except ValueError:
        raise InvalidInput(
            f"message role {value!r:.60} is not a role: use owner, admin, member, unpaired, cron, "
            "sop, webhook or agent"
        ) from None


def _from_dict(raw: dict[Any, Any], number: int) -> Message:
    """A message given as a dict: its keys must be Message's fields, author, role and text
    given (a missing or unknown key is the caller's mistake, not a TypeError)."""
    fields = ("author", "role", "text", "message_id", "ts")
    keys = set(raw)
    if not keys <= set(fields) or not {"author", "role", "text"} <= keys:
        shown = sorted(str(k)[:40] for k in keys)
        raise InvalidInput(
            f"message {number} as a dict needs the keys author, role and text (optional: "
            f"message_id, ts); it has {shown[:8]}"
        )
    return Message(**raw)


def normalize_messages(messages: Sequence[Message | dict[str, Any]]) -> list[Message]:
    """Accept ``Message`` objects or dicts; validate roles and text."""
    out = []
    for number, raw in enumerate(messages, 1):
        msg = _from_dict(raw, number) if isinstance(raw, dict) else raw
        if not isinstance(msg, Message) or not isinstance(msg.text, str):
            raise InvalidInput("each message must be a remem.Message with text")
        out.append(replace(msg, role=_role(msg.role), ts=parse_ts(msg.ts, "message ts")))
    return out


def speaker_roles(messages: Sequence[Message]) -> dict[str, Role]:
    """Each author's effective role in the slice: admin only if every message says so."""
    roles: dict[str, Role] = {}
    for msg in messages:
        if msg.author is None or not isinstance(msg.role, Role):
            continue
        seen = roles.get(msg.author)
        if seen is None:
            roles[msg.author] = msg.role
        elif seen is not msg.role:
            ranks = [Role.UNPAIRED, Role.MEMBER, Role.ADMIN, Role.OWNER]
            weakest = min(seen, msg.role, key=lambda r: ranks.index(r) if r in ranks else 0)
            roles[msg.author] = weakest
    return roles


def context_lines(messages: Sequence[Message], index: int) -> list[str]:
    """The agent's replies right before a message, for the classifier's reference only."""
    lines = []
    for msg in reversed(messages[max(0, index - 3) : index]):
        if msg.role == "agent":
            lines.append(msg.text)
    return list(reversed(lines))

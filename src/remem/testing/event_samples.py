"""Sample events for the contract suites: one of every type, with distinct ids and times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from remem.core.events import (
    EVENT_TYPES,
    Approved,
    ChannelKindSet,
    ChannelPolicySet,
    Corrected,
    Disabled,
    Enabled,
    Erased,
    Event,
    Forgotten,
    Pinned,
    PreferencesSet,
    Refused,
    Reinforced,
    Remembered,
    Restored,
    Superseded,
    Unpinned,
)
from remem.core.ids import new_id
from remem.core.model import Basis, Kind, Scope, Source, Status

__all__ = ["every_event_type", "remembered", "sample_envelope", "sample_ts"]

_T0 = datetime(2026, 7, 10, 12, 0, 0, tzinfo=UTC)
_tick = 0


def sample_ts() -> datetime:
    """Distinct, increasing, microsecond-precise times (exercises the timestamp codec)."""
    global _tick
    _tick += 1
    return _T0 + timedelta(seconds=_tick, microseconds=_tick % 997)


def sample_envelope(eid: str | None = None) -> dict[str, Any]:
    return {
        "eid": eid or new_id("ev"),
        "ts": sample_ts(),
        "actor": "discord:123",
        "role": "member",
        "run_id": new_id("run"),
        "channel": "discord:456",
    }


def remembered(
    text: str = "Prefers replies of one or two sentences.",
    *,
    note_id: str | None = None,
    eid: str | None = None,
    scope_id: str = "discord:123",
) -> Remembered:
    """A fully populated ``Remembered`` event (fresh ids unless given)."""
    return Remembered(
        note_id=note_id or new_id("note"),
        scope=Scope.USER,
        scope_id=scope_id,
        kind=Kind.PREFERENCE,
        text=text,
        basis=Basis.EXPLICIT,
        status=Status.ACTIVE,
        subject="reply.length",
        tags=("style", "tone"),
        pinned=False,
        expires_at=_T0 + timedelta(days=30),
        said_at=_T0 - timedelta(minutes=5),
        source=Source(
            channel_id="discord:456",
            message_id="discord:789",
            author_id="discord:123",
            run_id=new_id("run"),
        ),
        **sample_envelope(eid),
    )


def every_event_type(note_id: str, other_id: str) -> list[Event]:
    """One event of every type in :data:`remem.core.events.EVENT_TYPES`, about two notes."""
    revision = new_id("rev")
    events: list[Event] = [
        remembered("Uses metric units.", note_id=note_id),
        remembered("Lives in Lisbon.", note_id=other_id),
        Reinforced(note_id=note_id, source=Source(message_id="discord:790"), **sample_envelope()),
        Corrected(
            note_id=note_id,
            text="Uses metric units, except for screen sizes.",
            scope=Scope.CHANNEL,
            scope_id="discord:456",
            kind=Kind.FACT,
            **sample_envelope(),
        ),
        Pinned(note_id=note_id, **sample_envelope()),
        Unpinned(note_id=note_id, **sample_envelope()),
        Disabled(note_id=note_id, **sample_envelope()),
        Enabled(note_id=note_id, **sample_envelope()),
        Approved(note_id=note_id, **sample_envelope()),
        Refused(note_id=other_id, **sample_envelope()),
        Superseded(
            note_id=other_id, by=note_id, revision_id=revision, how="subject", **sample_envelope()
        ),
        Restored(note_id=other_id, revision_id=revision, **sample_envelope()),
        Forgotten(note_id=other_id, **sample_envelope()),
        Erased(
            note_id=other_id,
            eids=(new_id("ev"), new_id("ev")),
            final_status="forgotten",
            **sample_envelope(),
        ),
        ChannelPolicySet(
            target="discord:456",
            settings={"memory": "on", "kinds": ["decision", "fact"], "stewards": ["discord:9"]},
            **sample_envelope(),
        ),
        ChannelKindSet(
            target="discord:456",
            run_kind="dm",
            member="discord:123",
            ceiling="member",
            **sample_envelope(),
        ),
        PreferencesSet(user="discord:123", settings={"inferred": False}, **sample_envelope()),
    ]
    assert {type(ev) for ev in events} == set(EVENT_TYPES.values()), "update every_event_type"
    return events

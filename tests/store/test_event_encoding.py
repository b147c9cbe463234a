"""The on-disk form of events: one canonical text whatever Python objects built them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import orjson

from remem.core.events import encode, from_dict, to_dict, unseal
from remem.core.model import Source
from remem.testing.contract import remembered


class ClockDatetime(datetime):
    """What a test clock library hands out: a datetime subclass."""


def test_timestamps_are_utc_with_z_whatever_their_class_or_zone() -> None:
    moment = datetime(2026, 7, 10, 12, 0, 0, 250000, tzinfo=UTC)
    plain = remembered("Same moment.")
    variants = [
        plain.__class__(**{**_fields(plain), "ts": moment, "said_at": moment}),
        plain.__class__(
            **{
                **_fields(plain),
                "ts": ClockDatetime(2026, 7, 10, 12, 0, 0, 250000, tzinfo=UTC),
                "said_at": moment.astimezone(timezone(timedelta(hours=2))),
            }
        ),
    ]
    lines = [orjson.loads(encode(ev)) for ev in variants]
    for line in lines:
        assert line["ts"] == "2026-07-10T12:00:00.250000Z"
        assert line["said_at"] == "2026-07-10T12:00:00.250000Z"
    assert lines[0] == lines[1]


def test_an_event_survives_encoding() -> None:
    event = remembered("Round trip, with tags and a source.")
    again = from_dict(unseal(encode(event), "test"), "test")
    assert again == event
    data = to_dict(event)
    assert isinstance(data["tags"], list) and isinstance(data["source"], dict)
    assert Source(**data["source"]) == event.source


def _fields(event: object) -> dict[str, object]:
    from dataclasses import fields

    return {f.name: getattr(event, f.name) for f in fields(event)}  # type: ignore[arg-type]


def test_the_log_line_is_the_canonical_dict_serialized_whatever_the_event() -> None:
    """``encode`` lets orjson write UTC times and sources itself: byte for byte the same
    line as serializing :func:`to_dict` (the canonical text) and sealing it."""
    import random

    from remem.core.events import EVENT_TYPES, Corrected, Forgotten, seal

    rng = random.Random(5)
    base = remembered("Every field, every zone.")
    zones = [UTC, timezone(timedelta(hours=-7)), timezone(timedelta(hours=5, minutes=30))]
    events = []
    for i in range(300):
        moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(
            seconds=rng.randrange(10**8), microseconds=rng.choice([0, rng.randrange(10**6)])
        )
        when = moment.astimezone(rng.choice(zones))
        source = Source(
            channel_id=rng.choice([None, "discord:1"]),
            message_id=rng.choice([None, f"m{i}"]),
            author_id=rng.choice([None, "discord:2"]),
            run_id=rng.choice([None, "run_x"]),
        )
        fields_ = {**_fields(base), "ts": when, "source": source}
        fields_["said_at"] = rng.choice([None, when, ClockDatetime(2026, 3, 1, tzinfo=UTC)])
        fields_["expires_at"] = rng.choice([None, moment + timedelta(days=3)])
        events.append(base.__class__(**fields_))
        envelope = {k: fields_[k] for k in ("eid", "ts", "actor", "role", "run_id", "channel")}
        events.append(Corrected(note_id=base.note_id, text=f"New {i}.", **envelope))
        events.append(Forgotten(note_id=base.note_id, **envelope))
    assert {type(e) for e in events} <= set(EVENT_TYPES.values())
    for event in events:
        assert encode(event) == seal(orjson.dumps(to_dict(event)))

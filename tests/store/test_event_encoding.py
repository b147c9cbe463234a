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

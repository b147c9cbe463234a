"""Where member links point and how long links and sessions last (see
:mod:`remem.app.member_links`); the engine holds one (``Memory.link_settings``)."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from datetime import timedelta

from remem.errors import InvalidInput

#: The config store collections of link and session records (what
#: :mod:`remem.app.member_links` stores; each record names its agent, DM channel and member).
LINKS, SESSIONS = "member_links", "member_sessions"


@dataclass(frozen=True, slots=True)
class LinkSettings:
    """Where member links point and how long they last.

    ``base_url``: the service's public address (``https://memory.example.com``), the
    links' prefix; ``None`` gives links relative to the service (``/pad#token=…``).
    ``lifetime``: how long an unused link stays valid; ``session_lifetime``: how long the
    session it is exchanged for lasts."""

    base_url: str | None = None
    lifetime: timedelta = timedelta(minutes=15)
    session_lifetime: timedelta = timedelta(minutes=30)

    def __post_init__(self) -> None:
        if self.base_url is not None:
            url = urllib.parse.urlsplit(self.base_url)
            if url.scheme not in ("http", "https") or not url.netloc or url.query or url.fragment:
                raise InvalidInput(
                    f"the public URL must be http(s)://host[:port][/path], not "
                    f"{self.base_url[:80]!r} (e.g. https://memory.example.com)"
                )
            object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        for name in ("lifetime", "session_lifetime"):
            value = getattr(self, name)
            if not isinstance(value, timedelta) or not (
                timedelta(minutes=1) <= value <= timedelta(days=1)
            ):
                raise InvalidInput(f"{name} must be a timedelta from 1 minute to 1 day")


__all__ = ["LinkSettings"]

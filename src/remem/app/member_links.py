"""Member links and member sessions: how a member reaches their own scratchpad.

A host mints a **member link** for the speaker of a DM run (:func:`member_link`, rule
``member_link_dm_only`` of :func:`remem.policy.authz.decide`): a URL of the member page
whose fragment carries a one-time token (``…/pad#token=<token>``; a fragment never
reaches a server log nor a ``Referer``). The page exchanges the token once
(:func:`exchange_link`) for a **member session** token, which the service sets as a
short-lived cookie; every request with that cookie acts as
:class:`~remem.app.principal.MemberSession` (:func:`session_principal`): that member's DM
envelope with role member, whatever their role elsewhere.

Both are stored through the config store's versioned records (collections
``member_links`` and ``member_sessions``), keyed by the SHA-256 of the token: the token
itself is never stored. A link is single-use (deleted at the version read, so of two
exchanges racing for it one wins) and expires after :attr:`LinkSettings.lifetime`; a
session after :attr:`LinkSettings.session_lifetime`. Expired records are removed when
the next link is minted. Every refusal is :class:`~remem.errors.Unauthenticated` with
one message, so a caller learns nothing about which tokens exist.

This module needs no web framework: the kernel's command handler mints links too.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from remem.app.link_settings import LINKS, SESSIONS, LinkSettings
from remem.app.principal import MemberSession, credential_digest
from remem.core.model import Scope, format_ts, parse_ts
from remem.errors import Conflict, Unauthenticated
from remem.policy.authz import Action, Target, decide, require

if TYPE_CHECKING:
    from remem.app.kernel import Kernel
    from remem.store.base import ConfigStore

#: The member page's path on the service; the link's fragment key.
PAD_PATH, FRAGMENT_KEY = "/pad", "token"
_REFUSED = (
    "this member link or session is invalid, used or expired: ask the bot for a new link "
    "(say /memory in your DM with it)"
)


@dataclass(frozen=True, slots=True)
class MemberLink:
    """A minted link: ``url`` (what the host sends the member, in their DM only: it is a
    bearer credential), the one-time ``token`` in its fragment, when it stops working
    (``expires_at``), and whose scratchpad it opens (``agent``, ``channel``, ``member``)."""

    url: str
    token: str
    expires_at: datetime
    agent: str
    channel: str
    member: str


@dataclass(frozen=True, slots=True)
class SessionGrant:
    """What an exchanged link gives: the session ``token`` (the cookie's value), its
    ``principal`` and when it expires."""

    token: str
    principal: MemberSession
    expires_at: datetime


def _expiry(value: dict[str, Any]) -> datetime:
    """A record's expiry (a record without one counts as long expired)."""
    raw = value.get("expires_at")
    return (parse_ts(raw) if isinstance(raw, str) else None) or datetime.min.replace(tzinfo=UTC)


def _plausible(token: Any) -> bool:
    """Whether ``token`` could be a link or session token (else no store is read for it)."""
    return isinstance(token, str) and 20 <= len(token) <= 100


def _link_url(settings: LinkSettings, token: str) -> str:
    return f"{settings.base_url or ''}{PAD_PATH}#{FRAGMENT_KEY}={token}"


def member_link(k: Kernel) -> MemberLink:
    """Mint a link to the scratchpad of the speaker of ``k``'s DM run (``Denied`` with
    rule ``member_link_dm_only`` in any other run, ``member_link_from_session`` for a
    member session, which would otherwise renew itself). Stores only the token's hash."""
    k.require_envelope(Action.MEMBER_LINK)
    require(decide(k.ctx, Action.MEMBER_LINK, Target(Scope.USER), grants=k.engine.principal))
    ctx, settings, now = k.ctx, k.engine.links, k.now()
    assert ctx.actor is not None and ctx.channel is not None  # a DM run has both
    store = k.backend
    _prune(store, now)
    token = secrets.token_urlsafe(32)
    expires = now + settings.lifetime
    record = {
        "agent": ctx.agent,
        "channel": ctx.channel,
        "member": ctx.actor,
        "created_at": format_ts(now),
        "expires_at": format_ts(expires),
    }
    store.write_record(LINKS, credential_digest(token), record, if_version=0)
    url = _link_url(settings, token)
    return MemberLink(url, token, expires, ctx.agent, ctx.channel, ctx.actor)


def _live(store: ConfigStore, collection: str, token: str, now: datetime) -> Any:
    """The record of an unexpired ``token`` in ``collection`` (``None`` otherwise)."""
    if not _plausible(token):
        return None
    record = store.read_record(collection, credential_digest(token))
    if record is None or _expiry(record.value) <= now:
        return None
    return record


def _principal(value: dict[str, Any]) -> MemberSession:
    return MemberSession(str(value["member"]), str(value["agent"]), str(value["channel"]))


def link_principal(store: ConfigStore, token: str, now: datetime) -> MemberSession:
    """Whose scratchpad an unused link opens, without using it up (``Unauthenticated``
    for an unknown, used or expired token, the same refusal as :func:`exchange_link`)."""
    record = _live(store, LINKS, token, now)
    if record is None:
        raise Unauthenticated(_REFUSED)
    return _principal(record.value)


def exchange_link(
    store: ConfigStore, token: str, now: datetime, settings: LinkSettings
) -> SessionGrant:
    """Use a link's token once: delete the link and store a new session for its member.
    ``Unauthenticated`` for an unknown, used or expired token (the same message)."""
    record = _live(store, LINKS, token, now)
    if record is None:
        raise Unauthenticated(_REFUSED)
    try:  # at the version read: of two exchanges of one link, one wins
        store.write_record(LINKS, credential_digest(token), None, if_version=record.version)
    except Conflict:
        raise Unauthenticated(_REFUSED) from None
    principal = _principal(record.value)
    session = secrets.token_urlsafe(32)
    expires = now + settings.session_lifetime
    value = {**record.value, "created_at": format_ts(now), "expires_at": format_ts(expires)}
    store.write_record(SESSIONS, credential_digest(session), value, if_version=0)
    return SessionGrant(session, principal, expires)


def session_principal(store: ConfigStore, token: str, now: datetime) -> SessionGrant:
    """The live session of ``token`` (``Unauthenticated`` for an unknown or expired one)."""
    record = _live(store, SESSIONS, token, now)
    if record is None:
        raise Unauthenticated(_REFUSED)
    return SessionGrant(token, _principal(record.value), _expiry(record.value))


def end_session(store: ConfigStore, token: str) -> None:
    """Delete a session (signing out); nothing happens for an unknown token."""
    if _plausible(token):
        key = credential_digest(token)
        if store.read_record(SESSIONS, key) is not None:
            store.write_record(SESSIONS, key, None, if_version=None)


def _prune(store: ConfigStore, now: datetime) -> None:
    """Remove expired link and session records (their tokens no longer work anyway)."""
    for collection in (LINKS, SESSIONS):
        for key in store.record_keys(collection):
            record = store.read_record(collection, key)
            if record is None:
                continue
            if _expiry(record.value) <= now:
                try:
                    store.write_record(collection, key, None, if_version=record.version)
                except Conflict:
                    continue  # another process changed it: leave it to that one


__all__ = [
    "FRAGMENT_KEY",
    "LINKS",
    "PAD_PATH",
    "SESSIONS",
    "LinkSettings",
    "MemberLink",
    "SessionGrant",
    "end_session",
    "exchange_link",
    "link_principal",
    "member_link",
    "session_principal",
]

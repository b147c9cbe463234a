"""Host tokens: what ``remem tokens`` creates and what ``remem serve`` authenticates.

A token is ``rmm_<name>_<secret>``: the name (not secret: it finds the record and names
the host in logs) and 32 random bytes (URL-safe base64). Only the SHA-256 of the whole
token is stored, in the config store's ``tokens`` collection under the name, beside the
grants it carries; the JSONL backend writes the record with mode 0600. The token itself
is shown once, when it is made, and never stored nor logged. Checking compares hashes
with :func:`hmac.compare_digest` (constant time).

A record's grants are a :class:`~remem.app.principal.HostPrincipal`'s (agent, channel
and actor patterns, highest role, system principals, run kinds), or, for an owner token, the
:class:`~remem.app.principal.OwnerPrincipal`'s (every grant).

This module needs no web framework: the command line uses it too.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from remem.app.principal import (
    HostPrincipal,
    OwnerPrincipal,
    Principal,
    credential_digest,
    system_roles,
)
from remem.context import Role, RunKind
from remem.core.model import format_ts
from remem.core.names import is_reserved
from remem.errors import Conflict, InvalidInput, NotFound, Unauthenticated
from remem.policy.kind_rules import parse_kinds
from remem.store.base import ConfigStore

#: The config store collection holding the token records.
COLLECTION = "tokens"
PREFIX = "rmm_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
_TOKEN = re.compile(r"^rmm_([A-Za-z0-9][A-Za-z0-9-]{0,63})_([A-Za-z0-9_-]{43})$")


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """What ``remem tokens ls`` shows of a token (never the token nor its hash)."""

    name: str
    owner: bool
    agents: tuple[str, ...]
    channels: tuple[str, ...]
    actors: tuple[str, ...]
    max_role: str
    system: tuple[str, ...]
    created_at: str
    #: The run kinds it may assume (empty: every kind).
    kinds: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "owner": self.owner,
            "agents": list(self.agents),
            "channels": list(self.channels),
            "actors": list(self.actors),
            "max_role": self.max_role,
            "system": list(self.system),
            "created_at": self.created_at,
            "kinds": list(self.kinds) or None,
        }


def check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInput(
            f"token name {str(name)[:40]!r} is not allowed: use 1-64 letters, digits and '-', "
            "starting with a letter or digit (e.g. discord-bot)"
        )
    return name


def create_token(
    store: ConfigStore,
    name: str,
    *,
    agents: Iterable[str] = (),
    channels: Iterable[str] = (),
    actors: Iterable[str] = (),
    max_role: Role | str = Role.MEMBER,
    system: Iterable[Role | str] = (),
    owner: bool = False,
    kinds: Iterable[RunKind | str] = (),
    now: datetime | None = None,
) -> str:
    """Store a new token's hash and grants under ``name``; return the token (the only time
    it exists outside the host). An owner token takes no patterns: it has every grant.
    ``kinds``: the run kinds it may assume (empty: every kind). Raises ``InvalidInput``
    for a bad name or grant, or a name already in use."""
    check_name(name)
    patterns = (tuple(agents), tuple(channels), tuple(actors), tuple(system), tuple(kinds))
    if owner and any(patterns):
        raise InvalidInput(
            "an owner token has every grant: leave out --agent, --channel, --actor, --system "
            "and --kinds"
        )
    role = _role(max_role)
    system = system_roles(patterns[3], "--system")
    run_kinds = parse_kinds(patterns[4])
    if not owner:
        if not patterns[0]:
            raise InvalidInput("a host token needs at least one --agent pattern (e.g. yuko)")
        HostPrincipal(patterns[0], patterns[1], patterns[2], role, system, kinds=run_kinds)
        for pattern in patterns[0]:
            if is_reserved(pattern):
                raise InvalidInput(
                    f"--agent {pattern[:64]!r}: names starting with '#' are the service's "
                    "own agents, which no token may act as; name the agents the host serves "
                    "(e.g. yuko)"
                )
    token = f"{PREFIX}{name}_{secrets.token_urlsafe(32)}"
    record = {
        "hash": credential_digest(token),
        "owner": owner,
        "agents": list(patterns[0]),
        "channels": list(patterns[1]),
        "actors": list(patterns[2]),
        "max_role": Role.OWNER.value if owner else role.value,
        "system": sorted(r.value for r in system),
        # Absent: every kind (the records of tokens made before kinds existed).
        **({"kinds": sorted(k.value for k in run_kinds)} if run_kinds else {}),
        "created_at": format_ts(now or datetime.now(UTC)),
    }
    try:
        store.write_record(COLLECTION, name, record, if_version=0)
    except Conflict:
        raise InvalidInput(
            f"a token named {name!r} exists: revoke it first (remem tokens revoke {name})"
        ) from None
    return token


def _role(value: Role | str) -> Role:
    try:
        role = Role(value)
    except ValueError:
        role = None
    if role not in (Role.ADMIN, Role.MEMBER):
        raise InvalidInput(f"--max-role is admin or member, not {str(value)[:20]!r}")
    return role


def list_tokens(store: ConfigStore) -> list[TokenInfo]:
    """Every token's name and grants, by name."""
    out = []
    for name in store.record_keys(COLLECTION):
        record = store.read_record(COLLECTION, name)
        if record is not None:
            out.append(_info(name, record.value))
    return out


def _info(name: str, v: dict[str, Any]) -> TokenInfo:
    return TokenInfo(
        name,
        bool(v.get("owner")),
        tuple(v.get("agents", ())),
        tuple(v.get("channels", ())),
        tuple(v.get("actors", ())),
        str(v.get("max_role", "member")),
        tuple(v.get("system", ())),
        str(v.get("created_at", "")),
        tuple(v.get("kinds", ())),
    )


def revoke_token(store: ConfigStore, name: str) -> None:
    """Delete token ``name``: the next request that presents it gets 401."""
    check_name(name)
    if store.read_record(COLLECTION, name) is None:
        raise NotFound(f"no token named {name!r} (remem tokens ls lists them)")
    store.write_record(COLLECTION, name, None, if_version=None)


def authenticate(store: ConfigStore, token: str | None) -> tuple[str, Principal]:
    """The name and principal of ``token``; ``Unauthenticated`` (401) for none, a
    malformed one, an unknown name or a wrong secret, all with one message."""
    match = _TOKEN.fullmatch(token or "")
    record = store.read_record(COLLECTION, match.group(1)) if match else None
    stored = str(record.value.get("hash", "")) if record is not None else ""
    # Compare even when there is no record, so timing tells nothing about the names.
    ok = hmac.compare_digest(credential_digest(token or ""), stored or "0" * 64)
    if record is None or not ok:
        raise Unauthenticated(
            "missing or invalid host token: send 'Authorization: Bearer <token>' with a token "
            "from `remem tokens create`"
        )
    assert match is not None
    return match.group(1), principal_of(match.group(1), record.value)


def principal_of(name: str, v: dict[str, Any]) -> Principal:
    """The principal a token record grants."""
    if v.get("owner"):
        return OwnerPrincipal()
    return HostPrincipal(
        tuple(v.get("agents", ())),
        tuple(v.get("channels", ())),
        tuple(v.get("actors", ())),
        Role(v.get("max_role", "member")),
        frozenset(Role(s) for s in v.get("system", ())),
        name=name,
        kinds=parse_kinds(v.get("kinds")),
    )


__all__ = [
    "COLLECTION",
    "TokenInfo",
    "authenticate",
    "check_name",
    "create_token",
    "list_tokens",
    "principal_of",
    "revoke_token",
]

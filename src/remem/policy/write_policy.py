"""Write policy: what a note's content must pass before it is stored (every path).

Pure functions of the text, the limits in force and the participant's choices; the
remember use case (:mod:`remem.app.remember`) calls :func:`screen_write` before anything
is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from remem.core.model import Basis, Kind, Scope
from remem.errors import Rejected
from remem.policy.config import Limits
from remem.policy.guard import check_note_text, find_sensitive


def check_write_policy(text: str, kind: Kind, limits: Limits) -> None:
    """Content rules common to every write: memory on, kind allowed, size, secrets."""
    if not limits.enabled:
        raise Rejected("memory is turned off here by policy", reason="memory_off")
    if kind not in limits.kinds:
        allowed = ", ".join(sorted(k.value for k in limits.kinds)) or "none"
        raise Rejected(
            f"kind {kind.value!r} is not allowed here (allowed: {allowed})",
            reason="kind_not_allowed",
        )
    check_note_text(text, max_chars=limits.max_note_chars)


def screen_write(
    text: str,
    kind: Kind,
    basis: Basis,
    limits: Limits,
    scope: Scope,
    scope_id: str | None,
    preferences: Mapping[str, Mapping[str, Any]],
) -> None:
    """``Rejected`` (with its reason) unless a note of this content may be stored:
    :func:`check_write_policy`, and for an inferred note the inferred-memory policy, the
    person's choice not to have things inferred about them (``preferences``: each
    participant's stored choices) and the sensitive-content screen."""
    check_write_policy(text, kind, limits)
    if basis is not Basis.INFERRED:
        return
    if limits.inferred == "off":
        raise Rejected("inferred memory is turned off here by policy", reason="policy_off")
    about = preferences.get(scope_id, {}) if scope is Scope.USER and scope_id else {}
    if about.get("inferred") is False:
        raise Rejected(
            "this person asked not to have things inferred about them", reason="policy_off"
        )
    finding = find_sensitive(text)
    if finding is not None:
        raise Rejected(finding.message, reason="sensitive")

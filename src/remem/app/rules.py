"""The rules use cases: read the agent's trusted rules, write one (owners and admins)."""

from __future__ import annotations

from remem.app.kernel import Kernel
from remem.core.model import Scope
from remem.core.text import check_document, check_id
from remem.errors import Rejected
from remem.policy.authz import Action, Target
from remem.policy.guard import check_rule_text


def rules(k: Kernel) -> dict[str, str]:
    """The agent's trusted rules by name (read from the backend on every call)."""
    k.require_envelope(Action.ACCESS)
    return k.backend.read_rules(k.ctx.agent)


def set_rule(k: Kernel, name: str, content: str) -> None:
    """Write (or with empty content remove) a rule; owners and admins only."""
    state = k.state()
    k.require(state, Action.RULES, Target(Scope.AGENT))
    check_id(name, "rule name")
    check_document(content, "rule content")
    limit = k.limits().max_rule_chars
    if len(content) > limit:
        raise Rejected(
            f"rule {name!r} is {len(content)} characters; the limit is {limit}. "
            "Shorten it or split it into several rules",
            reason="too_long",
        )
    check_rule_text(name, content)
    k.backend.write_rule(k.ctx.agent, name, content)

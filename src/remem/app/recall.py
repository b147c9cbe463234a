"""The recall use cases: recall (ranked, bounded, traced) and compile (a prompt)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from remem.app import settings
from remem.app.kernel import Kernel
from remem.core.text import check_optional_id, check_str
from remem.errors import InvalidInput
from remem.policy.authz import Action

if TYPE_CHECKING:
    from remem.prompt import Prompt
    from remem.recall.engine import Recall

#: The characters of a query that recall reads for relevance (``compile`` passes whole
#: messages; the start of a very long one ranks as well as all of it, at a bounded cost).
MAX_QUERY_CHARS = 4_000


def recall(
    k: Kernel, query: str = "", *, max_chars: int | None = None, tag: str | None = None
) -> Recall:
    """What this run may see, ranked and bounded, rendered as inert data; leaves a trace."""
    from remem.recall.engine import run_recall

    check_str(query, "query")
    query = query[:MAX_QUERY_CHARS]  # relevance reads the start of a very long message
    if max_chars is not None and (type(max_chars) is not int or max_chars < 0):
        raise InvalidInput("max_chars must be a non-negative integer")
    check_optional_id(tag, "tag")
    k.require_envelope(Action.ACCESS)
    state = k.state()
    if query.strip():  # a query is message text: not in the clear from an e2ee channel
        k.require_plaintext()
    return run_recall(
        k.agent,
        state,
        k.ctx,
        query,
        policy=settings.recall_policy(k, state),
        now=k.now(),
        max_chars=max_chars,
        tag=tag,
        rules=k.rules_text(),
    )


def compile_prompt(
    k: Kernel,
    message: str,
    *,
    identity: str = "",
    purpose: str = "",
    policy: str = "",
    briefing: str = "",
) -> Prompt:
    """Build a prompt around one recall of ``message`` (see ``Memory.compile``)."""
    from remem.prompt import assemble

    for what, part in (
        ("identity", identity),
        ("purpose", purpose),
        ("policy", policy),
        ("briefing", briefing),
    ):
        check_str(part, what)
    k.require_plaintext()
    found = recall(k, check_str(message, "message"))
    return assemble(
        found, message, identity=identity, purpose=purpose, policy=policy, briefing=briefing
    )

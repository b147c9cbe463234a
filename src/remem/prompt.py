"""Context assembly for hosts: a cache-friendly system prefix and a per-turn input.

``system`` holds only authoritative text (identity → runtime policy → purpose
→ rules); memory never enters it. ``input`` holds the memory block, then the
briefing, then the current message, so memory sits after all authoritative
context.
"""

from __future__ import annotations

from dataclasses import dataclass

from remem.recall.engine import Recall


@dataclass(frozen=True, slots=True)
class Prompt:
    system: str
    input: str
    run_id: str
    recall: Recall


def assemble(
    recall: Recall, message: str, *, identity: str, purpose: str, policy: str, briefing: str
) -> Prompt:
    system_parts = [identity, policy, purpose, recall.rules]
    input_parts = [recall.text, briefing, message]
    return Prompt(
        system="\n\n".join(p.strip() for p in system_parts if p and p.strip()),
        input="\n\n".join(p for p in input_parts if p and p.strip()),
        run_id=recall.run_id,
        recall=recall,
    )

"""The authorization rules of end-to-end encrypted DM memory, as data for
:func:`remem.policy.authz.decide` (which turns each into its ``Decision``; ``Denied``
is raised there only).

=============  ====================================================================
action         rule
=============  ====================================================================
dm_slot        a DM's encrypted memory slot (thread = the run's channel) is read and
               written only by runs in that DM: the member's own turn or page
               (``dm_slot_member``), or the agent's host acting in that thread as a
               system or task run once the thread's channel policy marks it
               ``e2ee`` (``dm_slot_host``); any other run is refused
               (``dm_slot_thread``), owners and admins included: the slot is for
               those holding the DM key
plaintext      putting a run's message text into memory in the clear (``remember``,
               ``correct``, ``learn``, ``compile``, a recall's query) is refused in a
               channel whose policy marks it ``e2ee`` (``e2ee_plaintext``), for
               every role: nothing of that DM reaches the server in the clear
=============  ====================================================================
"""

from __future__ import annotations

from remem.context import RunContext, RunKind

#: (allowed, rule, reason): what :func:`remem.policy.authz.decide` makes a Decision of.
Verdict = tuple[bool, str, str]

_HOSTS = frozenset({RunKind.SYSTEM, RunKind.TASK})


def dm_slot_rule(ctx: RunContext, thread: str | None, e2ee: bool) -> Verdict:
    """Whether ``ctx`` may read or write the encrypted slot of DM thread ``thread``
    (``e2ee``: the thread's channel policy marks it end-to-end encrypted, which is how
    the host declares a channel an encrypted DM to its own system runs)."""
    if thread is not None and ctx.channel == thread:
        if ctx.kind is RunKind.DM:
            return True, "dm_slot_member", ""
        if ctx.kind in _HOSTS and e2ee:
            return True, "dm_slot_host", ""
    where = f" in channel {ctx.channel!r}" if ctx.channel else ""
    return (
        False,
        "dm_slot_thread",
        f"a DM's encrypted memory slot is read and written only by runs in that DM (the "
        f"member's turn or page, or the host's system run in a thread marked e2ee); this is a "
        f"{ctx.kind.value} run{where}",
    )


def plaintext_rule(e2ee: bool, channel: str | None) -> Verdict:
    """Whether a run may put message text into memory in the clear (``e2ee``: its
    channel's policy marks it end-to-end encrypted)."""
    if not e2ee:
        return True, "plaintext", ""
    return (
        False,
        "e2ee_plaintext",
        f"channel {channel!r} is end-to-end encrypted (channel policy e2ee): nothing of it "
        "is stored or sent to memory in the clear; keep its memory in the encrypted DM "
        "slot (remem.e2ee.DmMemory)",
    )

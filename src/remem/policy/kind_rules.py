"""The authorization rules of channel kinds, as data for :func:`remem.policy.authz.decide`
(which turns each into its ``Decision``; ``Denied`` is raised there only).

A channel's kind (``dm`` with its one member, or ``group``) is recorded in the agent's
log the first time a call names it (:mod:`remem.app.channel_kinds`); from then on a run
envelope is judged against that record, not against what the host asserts.

==================  ==================================================================
action              rule
==================  ==================================================================
channel_kind        a dm or group turn must match its channel's recorded kind: a ``dm``
                    envelope on a channel recorded as a group, a ``group`` envelope on a
                    recorded DM, or a DM envelope whose speaker is not the DM's recorded
                    member is refused (``channel_kind``), for every role: an owner or
                    admin corrects the record first (``remem channel set-kind``);
                    ``unrecorded_channel`` refuses a DM claim on a channel whose notes
                    other people wrote there (the log shows it is not that member's DM)
set_channel_kind    recording or correcting a channel's kind: owners and admins only
                    (``admin_only``, decided by :func:`~remem.policy.authz.decide`)
assume_envelope     a principal whose grants name run kinds (``remem tokens create
                    --kinds``) may assume envelopes of those kinds only
                    (``kind_not_granted``)
==================  ==================================================================
"""

from __future__ import annotations

from collections.abc import Collection

from remem.context import RunContext, RunKind
from remem.errors import InvalidInput

#: (allowed, rule, reason): what :func:`remem.policy.authz.decide` makes a Decision of.
Verdict = tuple[bool, str, str]

#: The run kinds whose envelope asserts a channel's kind.
CONVERSATION = frozenset({RunKind.DM, RunKind.GROUP})
#: What a recorded kind may be.
CHANNEL_KINDS = (RunKind.DM.value, RunKind.GROUP.value)
#: The ``kind`` a Target carries for a channel with no record whose notes were written
#: there by ``created_by``, another person than a DM claim's speaker.
OTHERS_SPOKE = "others_spoke"

_FIX = "an owner or admin corrects it with `remem channel set-kind {agent} {channel} {kind}`"


def channel_kind_rule(ctx: RunContext, kind: str | None, member: str | None) -> Verdict:
    """Whether ``ctx`` (a dm or group turn) may act in its channel, whose recorded kind is
    ``kind`` (``dm`` with ``member``, ``group``; ``None``: not recorded yet, the call
    records it; :data:`OTHERS_SPOKE`: not recorded, and ``member`` is a person other
    than the speaker who wrote in the channel)."""
    channel, asserted = ctx.channel, ctx.kind.value
    if kind is None or (kind == asserted and (kind != "dm" or member == ctx.actor)):
        return True, "channel_kind", ""
    if kind == OTHERS_SPOKE:
        return (
            False,
            "unrecorded_channel",
            f"channel {channel!r} has no recorded kind and other people wrote in it, so it is "
            f"not the DM of {ctx.actor!r}; "
            + _FIX.format(agent=ctx.agent, channel=channel, kind="dm --member <user>"),
        )
    if kind == asserted:  # a DM of another member
        return (
            False,
            "channel_kind",
            f"channel {channel!r} is recorded as the DM of another member, not of "
            f"{ctx.actor!r}; a DM turn there is spoken by its member; "
            + _FIX.format(agent=ctx.agent, channel=channel, kind=f"dm --member {ctx.actor}"),
        )
    return (
        False,
        "channel_kind",
        f"channel {channel!r} is recorded as a {kind}, not a {asserted}: this run's envelope "
        f"contradicts it; send kind {kind!r}, or "
        + _FIX.format(agent=ctx.agent, channel=channel, kind=asserted),
    )


def kind_grant_rule(ctx: RunContext, kinds: Collection[RunKind] | None) -> Verdict:
    """Whether a principal granted the run kinds ``kinds`` (``None``: every kind) may
    assume ``ctx``."""
    if kinds is None or ctx.kind in kinds:
        return True, "granted_kind", ""
    names = ",".join(sorted(k.value for k in kinds)) or "none"
    return (
        False,
        "kind_not_granted",
        f"this principal's grants cover {names} runs only, not {ctx.kind.value} runs; grant "
        f"the kind with a token made with --kinds including {ctx.kind.value}",
    )


def parse_kinds(value: object, what: str = "--kinds") -> frozenset[RunKind] | None:
    """The run kinds ``value`` names (``None`` or empty: every kind): ``InvalidInput``
    naming ``what`` for anything else."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Collection):
        raise InvalidInput(f"{what} must be a list of run kinds such as dm,group")
    out = set()
    for item in value:
        try:
            out.add(RunKind(item))
        except ValueError:
            names = ", ".join(k.value for k in RunKind)
            raise InvalidInput(f"{what} takes {names}, not {str(item)[:40]!r}") from None
    return frozenset(out) if out else None

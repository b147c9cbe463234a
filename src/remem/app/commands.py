"""Carrying out recognized memory commands through the same governed actions.

:func:`run_command` resolves what "that" and "me" mean from the trusted
envelope (the speaker, the channel, the speaker's last write or last recall)
and calls the ordinary use cases (remember, change, reading, settings, erasure),
so every command is authorized exactly like the API call it stands for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from remem.app import change
from remem.app.erasure import about_member, erase_forgotten
from remem.app.kernel import Kernel
from remem.app.member_links import member_link
from remem.app.reading import explain
from remem.app.remember import remember
from remem.app.settings import set_my_preferences
from remem.commands.intents import CommandRecognizer, Intent, IntentKind
from remem.context import RunContext, RunKind
from remem.core.model import LIVE_STATUSES, Kind, Note, Scope, Status
from remem.core.text import display
from remem.errors import RememError


@dataclass(frozen=True, slots=True)
class Reply:
    """What to tell the person (``text``) and notices the host shows with its reply."""

    text: str
    intent: IntentKind
    notices: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


def _quote(note: Note) -> str:
    return f'"{note.text}" [{note.id}]'


def last_written(k: Kernel) -> Note | None:
    """The newest live note this speaker wrote in this conversation."""
    ctx = k.ctx
    state = k.state()
    best = None
    for note in state.notes.values():
        if (
            note.created_by == ctx.actor
            and note.source.channel_id == ctx.channel
            and note.status in LIVE_STATUSES
            and (best is None or note.id > best.id)
        ):
            best = note
    return best


def last_used(k: Kernel) -> tuple[str | None, list[Note]]:
    """The speaker's last recall in this channel: its run id and the notes they may see."""
    ctx = k.ctx
    agent = k.agent
    record = agent.traces.latest(ctx.actor, ctx.channel) if ctx.actor else None
    if record is None:
        return None, []
    run_id = str(record.get("run_id"))
    trace = explain(k, run_id)
    state = agent.state
    # A note forgotten since has no content left to show or change.
    used = [state.notes.get(i) for i, _ in trace.selected]
    return run_id, [n for n in used if n is not None and n.status is not Status.FORGOTTEN]


def _target(k: Kernel) -> Note | None:
    """ "That" note: the speaker's last write here, else the first changeable note just used."""
    written = last_written(k)
    if written is not None:
        return written
    _, used = last_used(k)
    for note in used:
        if note.scope is Scope.USER and note.scope_id == k.ctx.actor:
            return note
    return None


#: The answer to a non-admin who states a change to how the agent works.
ADMIN_ONLY_CHANGE = (
    "Only an admin can change how the agent works (its procedures, data sources and "
    "report definitions), so I haven't stored that. Please ask an admin."
)


def _operational_refusal(ctx: RunContext, text: str, *, stated: bool) -> Reply | None:
    """The refusal for a non-admin's operational change, judged by the formation
    classifier exactly as ``learn`` judges it; None when ``text`` is no such change.
    ``stated``: ``text`` is not a recognized command (only a labelled operational
    statement counts then, so ordinary conversation passes through)."""
    from remem.formation.classify import Category, RuleClassifier
    from remem.formation.extract import operational_from_non_admin

    if ctx.role.is_admin:
        return None
    items = RuleClassifier().classify(text).items
    if stated:
        operational = any(item.category is Category.OPERATIONAL for item in items)
    else:
        operational = any(operational_from_non_admin(item) for item in items)
    if not operational:
        return None
    return Reply(ADMIN_ONLY_CHANGE, IntentKind.REMEMBER, ["Not stored: admins only."])


def _remember(k: Kernel, intent: Intent) -> Reply:
    from remem.formation.classify import Category, RuleClassifier

    refusal = _operational_refusal(k.ctx, intent.payload, stated=False)
    if refusal is not None:
        return refusal
    items = RuleClassifier().classify(intent.payload).memories
    item = items[0] if items else None
    text = item.statement if item is not None else intent.payload
    kind = item.kind if item is not None and item.kind is not None else Kind.FACT
    scope: Scope | None = Scope.CHANNEL if intent.scope_hint == "channel" else None
    if item is not None and item.category is Category.CHANNEL:
        scope = Scope.CHANNEL
    if item is not None and item.category is Category.OPERATIONAL and scope is None:
        scope = Scope.AGENT  # never wider than asked: "for this channel" stays in the channel
    note = remember(
        k, text, scope=scope, kind=kind, subject=item.subject if item else None, basis="explicit"
    )
    return Reply(f"Noted: {_quote(note)}", intent.kind, [note.receipt], [note])


def _scope_to_channel(k: Kernel, intent: Intent) -> Reply:
    note = last_written(k)
    if note is None:
        return Reply("I haven't written anything for you here to move.", intent.kind)
    moved = change.move(k, note.id, scope=Scope.CHANNEL)
    return Reply(
        f"Done — {_quote(moved)} now applies only to this channel.",
        intent.kind,
        ["Memory changed: moved to this channel."],
        [moved],
    )


def _list_about_me(k: Kernel, intent: Intent) -> Reply:
    _complete_erasure(k)  # what waits from an earlier erase-all
    notes = about_member(k, status=Status.ACTIVE.value)
    pending = [n for n in about_member(k) if n.status is Status.PENDING]
    if not notes and not pending:
        return Reply("I don't remember anything about you.", intent.kind)
    lines = [f"- {_quote(n)}" for n in notes]
    lines += [f"- (awaiting your review) {_quote(n)}" for n in pending]
    text = "Here is what I remember about you:\n" + "\n".join(lines)
    return Reply(text, intent.kind, [], notes + pending)


def _correct(k: Kernel, intent: Intent) -> Reply:
    note = _target(k)
    if note is None:
        return _remember(k, intent)
    from remem.formation.classify import RuleClassifier

    refusal = _operational_refusal(k.ctx, intent.payload, stated=False)
    if refusal is not None:
        return refusal
    items = RuleClassifier().classify(intent.payload).memories
    text = items[0].statement if items else intent.payload
    fixed = change.correct(k, note.id, text)
    return Reply(
        f"Corrected: {_quote(fixed)}", intent.kind, ["Memory changed: corrected."], [fixed]
    )


def _disable(k: Kernel, intent: Intent) -> Reply:
    note = _target(k)
    if note is None:
        return Reply(
            "I can't tell which note you mean; ask what I remember about you.", intent.kind
        )
    off = change.disable(k, note.id)
    return Reply(
        f"Thanks — I've stopped using {_quote(off)}. You can correct or forget it.",
        intent.kind,
        ["Memory changed: disabled."],
        [off],
    )


def _forget_last(k: Kernel, intent: Intent) -> Reply:
    note = _target(k)
    if note is None:
        return Reply("There is nothing recent to forget here.", intent.kind)
    gone = change.forget(k, note.id)
    return Reply(f"Forgot {_quote(note)}.", intent.kind, ["Memory changed: forgotten."], [gone])


def _forget_all(k: Kernel, intent: Intent) -> Reply:
    notes = about_member(k)
    # A rejected note is never used, but its text stays on disk until a compaction:
    # forgetting it too lets this erasure remove it with the rest.
    gone = [change.forget(k, n.id) for n in notes if n.status is not Status.FORGOTTEN]
    notices = [f"Memory changed: {len(gone)} notes forgotten."]
    notices.append(_complete_erasure(k) or "")
    return Reply(
        f"I've forgotten everything I remembered about you ({len(gone)} notes).",
        intent.kind,
        [n for n in notices if n],
        gone,
    )


def _complete_erasure(k: Kernel) -> str | None:
    """Physically erase the speaker's forgotten notes now (see :mod:`remem.app.erasure`);
    a notice saying what happened, or None when nothing waited."""
    waiting = [n.id for n in about_member(k) if n.status is Status.FORGOTTEN]
    if not waiting:
        return None
    try:
        report = erase_forgotten(k, waiting)
    except RememError as exc:
        return (
            f"Their text is not erased from storage yet ({exc}); it will be at your next "
            "memory request or the owner's next compaction."
        )
    return f"Erased from storage: {len(report.notes_erased)} notes (no copy is kept)."


def _preference(key: str, value: bool, text: str) -> Callable[[Kernel, Intent], Reply]:
    def run(k: Kernel, intent: Intent) -> Reply:
        choice: dict[str, Any] = {key: value}
        done = set_my_preferences(k, **choice)
        return Reply(text, intent.kind, ["Memory settings changed.", *done.notices])

    return run


def _which_used(k: Kernel, intent: Intent) -> Reply:
    run_id, notes = last_used(k)
    if run_id is None:
        return Reply("I haven't used any memories with you here yet.", intent.kind)
    if not notes:
        return Reply(f"I used no memories for that answer (run {run_id}).", intent.kind)
    lines = "\n".join(f"- {_quote(n)}" for n in notes)
    return Reply(f"For that answer I used:\n{lines}", intent.kind, [], notes)


#: The answer to ``/memory`` outside a DM: a link is a bearer credential.
ASK_IN_DM = (
    "Your memory page link works like a password, so I only send it in a direct message: "
    "ask me in a DM (say /memory there)."
)


def _member_link(k: Kernel, intent: Intent) -> Reply:
    if k.ctx.kind is not RunKind.DM:
        return Reply(ASK_IN_DM, intent.kind)
    link = member_link(k)
    minutes = int(k.engine.links.lifetime.total_seconds() // 60)
    return Reply(
        f"Here is your memory page, where you can see, correct, add and erase what I "
        f"remember about you. The link works once, for {minutes} minutes; don't share "
        f"it:\n{link.url}",
        intent.kind,
    )


HANDLERS: dict[IntentKind, Callable[[Kernel, Intent], Reply]] = {
    IntentKind.MEMBER_LINK: _member_link,
    IntentKind.REMEMBER: _remember,
    IntentKind.SCOPE_TO_CHANNEL: _scope_to_channel,
    IntentKind.LIST_ABOUT_ME: _list_about_me,
    IntentKind.CORRECT: _correct,
    IntentKind.DISABLE: _disable,
    IntentKind.FORGET_LAST: _forget_last,
    IntentKind.FORGET_ALL_ABOUT_ME: _forget_all,
    IntentKind.NO_CROSS_CHANNEL: _preference(
        "cross_channel", False, "Understood — I won't use what I know about you in other channels."
    ),
    IntentKind.ALLOW_CROSS_CHANNEL: _preference(
        "cross_channel", True, "Understood — I may use what I know about you in other channels."
    ),
    IntentKind.STOP_INFERRING: _preference(
        "inferred", False, "Understood — I'll only remember what you explicitly ask me to."
    ),
    IntentKind.RESUME_INFERRING: _preference(
        "inferred",
        True,
        "Understood — I may note things I infer about you again (you'll see them).",
    ),
    IntentKind.WHICH_USED: _which_used,
}


def run_command(k: Kernel, text: str, recognizer: CommandRecognizer) -> Reply | None:
    """Recognize and carry out a memory command; ``None`` when ``text`` is not one.

    A refusal (no personal scope, a secret, a denied scope) becomes a polite
    reply that says why, rather than an exception the host must catch. A
    non-admin who states an operational change (a procedure, a data source, a
    report definition: what ``learn`` would refuse from them) is told that only
    an admin can make it, and nothing is stored.
    """
    ctx = k.ctx
    if len(text) > MAX_COMMAND_CHARS:
        return None  # a memory command is a sentence, not a pasted document
    intent = recognizer.recognize(text)
    if intent is None:
        # Not a memory command, but a member stating a new procedure is told, not ignored.
        if ctx.has_personal_scope:
            return _operational_refusal(ctx, text, stated=True)
        return None
    if not ctx.has_personal_scope:
        return Reply("Memory commands are only available to paired people.", intent.kind)
    try:
        return _inert(HANDLERS[intent.kind](k, intent))
    except RememError as exc:
        return _inert(Reply(f"I couldn't do that: {exc}", intent.kind, []))


#: Longer texts are never read as memory commands (``command`` returns ``None``).
MAX_COMMAND_CHARS = 2_000


def _inert(reply: Reply) -> Reply:
    """The reply with every control or invisible character of its texts escaped: a reply
    quotes notes and the person's words, and must not carry terminal escapes or bidi
    overrides into the host's chat (its own line breaks stay)."""
    return replace(
        reply,
        text=display(reply.text, keep_newlines=True),
        notices=[display(n, keep_newlines=True) for n in reply.notices],
    )

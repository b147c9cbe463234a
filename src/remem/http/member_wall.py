"""The member wall: what a member session's request returns, checked by the database.

Reads on the member path go through the in-process projection that every principal
shares, so scope resolution (:meth:`remem.app.kernel.Kernel.can_read`) is the first wall.
Where the backend offers :class:`~remem.store.base.MemberWall` (PostgreSQL: row-level
security under ``remem.agent``, ``remem.user`` and ``remem.channel``), every note a
:class:`~remem.app.principal.MemberSession`'s result holds (a note, a list of notes, a
recall's notes, a note's history) is also asked of the database, as that member: a note
it does not let through is dropped from a list, and refuses any other result with
``NotFound`` (the answer for a note this context may not see). Each such note is a bug
in scope resolution: it is logged (logger ``remem.http.wall``, one JSON object a line:
agent, member, channel, route and the refused note ids; never a note's text).
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from remem.app.kernel import NOTE_NOT_FOUND
from remem.app.principal import MemberSession
from remem.core.events import Event, NoteEvent
from remem.core.model import Note
from remem.errors import NotFound
from remem.recall.engine import Recall
from remem.store.base import MemberWall

WALL = logging.getLogger("remem.http.wall")


def _note_ids(result: Any) -> set[str]:
    """The note ids ``result`` shows (empty for a result that holds no note)."""
    if isinstance(result, Note):
        return {result.id}
    if isinstance(result, Recall):
        return {n.id for n in result.notes}
    if isinstance(result, list):
        return {x.id for x in result if isinstance(x, Note)} | {
            x.note_id for x in result if isinstance(x, NoteEvent)
        }
    return set()


def check_member_result(backend: object, session: MemberSession, route: str, result: Any) -> Any:
    """``result`` as the member wall lets ``session`` have it (see the module docstring);
    unchanged where the backend offers no wall or nothing was refused."""
    if not isinstance(backend, MemberWall):
        return result
    ids = _note_ids(result)
    if not ids:
        return result
    refused = ids - backend.readable_notes(session.agent, session.member, session.channel, ids)
    if not refused:
        return result
    WALL.error(
        orjson.dumps(
            {
                "wall": "member",
                "agent": session.agent,
                "member": session.member,
                "channel": session.channel,
                "route": route,
                "refused": sorted(refused),
            }
        ).decode()
    )
    if isinstance(result, list) and not any(isinstance(x, Event) for x in result):
        return [x for x in result if not (isinstance(x, Note) and x.id in refused)]
    raise NotFound(NOTE_NOT_FOUND.format(id=min(refused)))


__all__ = ["WALL", "check_member_result"]

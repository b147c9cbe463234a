"""Recall traces: what a run was shown and why, stored as ids, scores and reasons (no text).

A trace keeps no text of a note, of a query or of a compiled message (DESIGN §4.1): of
the query only its length (``query_chars``). So the size of a stored line does not
depend on what anyone said: a recall line is about 500 bytes plus the envelope's ids
plus about 40 bytes per note id it names (those chosen, at most ``recall_max_notes``,
and those the character budget cut); a shared line (:func:`shared_candidates`) names
each candidate of the eligible scopes once, stored once per set. Compaction rewrites
stored lines through :func:`scrub_record`, which keeps only these fields, so text
written by an older version (a ``query``) goes too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson


def group_by_reason(excluded: list[tuple[str, str]]) -> dict[str, list[str]]:
    """(id, reason) pairs → reason → ids, in order."""
    grouped: dict[str, list[str]] = {}
    for note_id, reason in excluded:
        grouped.setdefault(reason, []).append(note_id)
    return grouped


#: Resolves a trace's ``candidates_ref`` to the shared candidate set it names.
Lookup = Callable[[str], "dict[str, Any] | None"]


def shared_candidates(notes: list[str], excluded_by_reason: dict[str, list[str]]) -> dict[str, Any]:
    """The part of a trace that many recalls share (stored once, named by ``ref``): the
    candidates that passed the filters (``kept``) and those the filters and dedupe
    excluded, by reason. A recall's record then names only what it chose and what its
    character budget cut; every other kept note was over the note limit."""
    body = orjson.dumps([notes, excluded_by_reason])
    return {
        "ref": "cs_" + hashlib.sha256(body).hexdigest()[:24],
        "kept": notes,
        "excluded_by_reason": excluded_by_reason,
    }


def expand(data: dict[str, Any], lookup: Lookup | None) -> dict[str, Any]:
    """A stored recall record with its shared candidate set folded back in: the shape
    of a record that carries everything itself. Without the set (``lookup`` missing or
    the set no longer stored), the record's own exclusions are all there is."""
    ref = data.get("candidates_ref")
    if ref is None or lookup is None:
        return data
    shared = lookup(str(ref))
    if shared is None:
        return data
    own: dict[str, list[str]] = data.get("excluded_by_reason", {})
    placed = {str(i) for i, _ in data.get("selected", [])}
    placed.update(i for ids in own.values() for i in ids)
    over = [i for i in shared.get("kept", []) if i not in placed]
    grouped = {**shared.get("excluded_by_reason", {}), **own}
    if over:
        grouped["over_note_limit"] = over
    return {**data, "excluded_by_reason": grouped}


def _excluded(data: dict[str, Any]) -> list[tuple[str, str]]:
    if "excluded_by_reason" in data:
        return [
            (str(i), str(reason)) for reason, ids in data["excluded_by_reason"].items() for i in ids
        ]
    return [(str(i), str(r)) for i, r in data.get("excluded", [])]


def _candidates(data: dict[str, Any]) -> list[str]:
    if "candidates" in data:
        return [str(i) for i in data["candidates"]]
    return [str(i) for i, _ in data.get("selected", [])] + [i for i, _ in _excluded(data)]


@dataclass(frozen=True, slots=True)
class Trace:
    """One stored recall. ``excluded`` pairs each unselected candidate with its reason code."""

    run_id: str
    agent: str
    ts: str
    run_kind: str
    actor: str | None
    role: str
    channel: str | None
    #: The length of the run's query in characters (0: no query); its text is not stored.
    query_chars: int
    retrieval: str
    scopes: list[str]
    candidates: list[str]
    selected: list[tuple[str, float]]
    excluded: list[tuple[str, str]]
    budget: dict[str, int] = field(default_factory=dict)
    text_sha256: str = ""
    text_len: int = 0

    def to_dict(self) -> dict[str, Any]:
        return self.record(
            run_id=self.run_id,
            agent=self.agent,
            ts=self.ts,
            run_kind=self.run_kind,
            actor=self.actor,
            role=self.role,
            channel=self.channel,
            query_chars=self.query_chars,
            retrieval=self.retrieval,
            scopes=self.scopes,
            selected=self.selected,
            excluded_by_reason=group_by_reason(self.excluded),
            budget=self.budget,
            text_sha256=self.text_sha256,
            text_len=self.text_len,
        )

    @staticmethod
    def record(
        *,
        run_id: str,
        agent: str,
        ts: str,
        run_kind: str,
        actor: str | None,
        role: str,
        channel: str | None,
        query_chars: int,
        retrieval: str,
        scopes: list[str],
        selected: list[tuple[str, float]],
        excluded_by_reason: dict[str, list[str]],
        budget: dict[str, int],
        text_sha256: str,
        text_len: int,
        candidates_ref: str | None = None,
    ) -> dict[str, Any]:
        """The stored form. Candidates are exactly the selected plus the excluded ids, and
        exclusions are grouped by reason, which keeps a trace of 600 candidates small.
        With ``candidates_ref`` the record names a shared candidate set
        (:func:`shared_candidates`) and holds only this recall's own exclusions."""
        extra = {} if candidates_ref is None else {"candidates_ref": candidates_ref}
        return {
            "type": "recall",
            "run_id": run_id,
            "agent": agent,
            "ts": ts,
            "run_kind": run_kind,
            "actor": actor,
            "role": role,
            "channel": channel,
            "query_chars": query_chars,
            "retrieval": retrieval,
            "scopes": list(scopes),
            "selected": [[i, round(s, 6)] for i, s in selected],
            "excluded_by_reason": excluded_by_reason,
            "budget": dict(budget),
            "text_sha256": text_sha256,
            "text_len": text_len,
            **extra,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], lookup: Lookup | None = None) -> Trace:
        """A stored record; ``lookup`` resolves its shared candidate set, if it has one."""
        data = expand(data, lookup)
        return cls(
            run_id=data["run_id"],
            agent=data["agent"],
            ts=data["ts"],
            run_kind=data["run_kind"],
            actor=data.get("actor"),
            role=data.get("role", ""),
            channel=data.get("channel"),
            query_chars=int(data.get("query_chars", 0)),
            retrieval=data.get("retrieval", ""),
            scopes=list(data.get("scopes", [])),
            candidates=_candidates(data),
            selected=[(str(i), float(s)) for i, s in data.get("selected", [])],
            excluded=_excluded(data),
            budget=dict(data.get("budget", {})),
            text_sha256=data.get("text_sha256", ""),
            text_len=int(data.get("text_len", 0)),
        )

    def visible_to(self, allowed: set[str]) -> Trace:
        """The same trace restricted to note ids in ``allowed``."""
        return replace(
            self,
            candidates=[i for i in self.candidates if i in allowed],
            selected=[(i, s) for i, s in self.selected if i in allowed],
            excluded=[(i, r) for i, r in self.excluded if i in allowed],
        )


#: The fields a stored trace line may keep (recall records, older forms of them, and
#: shared candidate sets): ids, numbers, reason codes. Nothing else survives compaction.
_STORED_FIELDS = frozenset(
    {
        *Trace.record(
            run_id="",
            agent="",
            ts="",
            run_kind="",
            actor=None,
            role="",
            channel=None,
            query_chars=0,
            retrieval="",
            scopes=[],
            selected=[],
            excluded_by_reason={},
            budget={},
            text_sha256="",
            text_len=0,
            candidates_ref="",
        ),
        "candidates",
        "excluded",
        "ref",
        "kept",
    }
)


def scrub_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with only the fields a trace may keep (see the module docstring): what
    compaction writes back, so no text a trace line once held outlives it."""
    return {k: v for k, v in record.items() if k in _STORED_FIELDS}

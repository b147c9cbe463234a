"""Recall traces: what a run was shown and why, stored as ids, scores and reasons (no text)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


def group_by_reason(excluded: list[tuple[str, str]]) -> dict[str, list[str]]:
    """(id, reason) pairs → reason → ids, in order."""
    grouped: dict[str, list[str]] = {}
    for note_id, reason in excluded:
        grouped.setdefault(reason, []).append(note_id)
    return grouped


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
    query: str
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
            query=self.query,
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
        query: str,
        retrieval: str,
        scopes: list[str],
        selected: list[tuple[str, float]],
        excluded_by_reason: dict[str, list[str]],
        budget: dict[str, int],
        text_sha256: str,
        text_len: int,
    ) -> dict[str, Any]:
        """The stored form. Candidates are exactly the selected plus the excluded ids, and
        exclusions are grouped by reason, which keeps a trace of 600 candidates small."""
        return {
            "type": "recall",
            "run_id": run_id,
            "agent": agent,
            "ts": ts,
            "run_kind": run_kind,
            "actor": actor,
            "role": role,
            "channel": channel,
            "query": query,
            "retrieval": retrieval,
            "scopes": list(scopes),
            "selected": [[i, round(s, 6)] for i, s in selected],
            "excluded_by_reason": excluded_by_reason,
            "budget": dict(budget),
            "text_sha256": text_sha256,
            "text_len": text_len,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        return cls(
            run_id=data["run_id"],
            agent=data["agent"],
            ts=data["ts"],
            run_kind=data["run_kind"],
            actor=data.get("actor"),
            role=data.get("role", ""),
            channel=data.get("channel"),
            query=data.get("query", ""),
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

"""The EventLog contract suite (remem.testing.contract) against the embedded JSONL log."""

from __future__ import annotations

from pathlib import Path

from remem.store.jsonl import JsonlBackend, JsonlEventLog
from remem.testing.contract import EventLogContract
from remem.testing.contract_seq import SeqContract


class TestJsonlEventLog(EventLogContract, SeqContract):
    def make_log(self, tmp_path: Path) -> JsonlEventLog:
        return JsonlEventLog(tmp_path / "agents" / "yuko" / "memory.jsonl")


class TestJsonlBackendEventLog(EventLogContract, SeqContract):
    """The same contract through the backend, one backend object per handle (per process)."""

    def make_log(self, tmp_path: Path) -> JsonlEventLog:
        return JsonlBackend(tmp_path / "data").event_log("yuko")

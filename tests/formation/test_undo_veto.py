"""Undo is a veto, and the replacement stays (issue 11, item 3).

After ``undo`` of a revision the retired note returns to recall and the
replacing note stays active. The same note never retires or overrides the same
note again, by any path: re-learning the identical statement (a *new* note with
the same words and subject), a relearn, a consolidation, a manual supersession,
a direct ``remember``, and the recall-time subject override. The veto is keyed
on what the notes say (a keyed hash of normalized text and subject, under a
per-agent secret outside the log), survives reopening and other processes, and
compaction drops the hash of a note it erases.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from remem import InvalidInput, Memory, Message, Role, RunContext, Status
from remem.core.model import normalize_text

from . import cast
from .cast import (
    AGENT,
    ALICE,
    BOB,
    admin,
    member,
    no_operational_from_non_admins,  # noqa: F401  (an autouse fixture: importing it applies it)
    owner,
)

FINANCE = "The weekly report pulls from the finance_v2 table."
SALES = "The weekly report pulls from the sales_v3 table."
SUBJECT = "report.weekly.source"


def teach(mem: Memory, text: str, mid: str, ts: datetime) -> str:
    note_id = cast.teach(mem, text, mid, ts)
    assert mem.get(owner(), note_id).subject == SUBJECT
    return note_id


def undone_pair(mem: Memory, clock: Any) -> tuple[str, str]:
    """FINANCE retired by SALES, then the revision undone: (restored, replacement)."""
    old = teach(mem, FINANCE, "m1", clock())
    new = teach(mem, SALES, "m2", clock.advance(days=1))
    assert mem.get(owner(), old).superseded_by == new
    (rev,) = mem.revisions(owner())
    clock.advance(hours=1)
    mem.undo(admin(), rev.id)
    return old, new


def recalled(mem: Memory, ctx: RunContext) -> tuple[list[str], list[tuple[str, str]]]:
    rec = mem.recall(ctx, "weekly report table")
    return [n.id for n in rec.notes], mem.explain(owner(), rec.run_id).excluded


def test_undo_returns_the_note_to_recall_and_keeps_the_replacement(mem: Memory, clock: Any) -> None:
    old, new = undone_pair(mem, clock)
    assert mem.get(owner(), old).status is Status.ACTIVE
    assert mem.get(owner(), new).status is Status.ACTIVE
    ids, excluded = recalled(mem, RunContext.agent_only(AGENT))
    assert sorted(ids) == sorted([old, new])
    assert excluded == []  # the restored note is not "overridden"


def test_a_new_note_saying_the_same_is_vetoed_on_every_write_path(mem: Memory, clock: Any) -> None:
    old, new = undone_pair(mem, clock)
    mem.forget(admin(), new)  # the replacement is gone: a re-statement is a new note
    later = clock.advance(days=2)
    # learn: a new message, said after the undo
    report = mem.learn(admin(), [Message(ALICE, Role.ADMIN, SALES, "m9", later)])
    assert [r for _, r in report.dropped] == ["vetoed"]
    assert mem.get(owner(), old).status is Status.ACTIVE
    # remember, directly: the note is written, but retires nothing …
    direct = mem.remember(admin(), SALES, scope="agent", kind="procedure", subject=SUBJECT)
    assert direct.id != new and direct.status is Status.ACTIVE
    assert mem.get(owner(), old).status is Status.ACTIVE
    # … and does not hide the restored note at recall
    ids, excluded = recalled(mem, RunContext.agent_only(AGENT))
    assert sorted(ids) == sorted([old, direct.id]) and excluded == []
    # supersede, by hand, with that new note: vetoed too
    with pytest.raises(InvalidInput, match="veto"):
        mem.supersede(admin(), old, direct.id)
    assert mem.get(owner(), old).status is Status.ACTIVE
    assert len(mem.revisions(owner())) == 1


def test_a_relearned_archive_does_not_retire_the_restored_note(
    mem: Memory, clock: Any, tmp_path: Path
) -> None:
    old, new = undone_pair(mem, clock)
    mem.forget(admin(), new)
    archive = tmp_path / "session.jsonl"
    rows = [
        {"trust": "verified"},
        {"author": ALICE, "role": "admin", "text": SALES, "message_id": "x1", "ts": "2026-08-01"},
    ]
    archive.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = mem.relearn(admin(), archive)
    assert [r for _, r in report.dropped] == ["vetoed"]
    assert mem.get(owner(), old).status is Status.ACTIVE
    assert len(mem.revisions(owner())) == 1


def test_the_recall_override_never_hides_the_restored_note(mem: Memory, clock: Any) -> None:
    """A note in another scope saying what the vetoed replacement said, on the same
    subject, is recalled beside the restored note, not over it."""
    old, new = undone_pair(mem, clock)
    mem.forget(admin(), new)
    clock.advance(days=1)
    bob_dm = RunContext.dm(AGENT, "discord:dm-bob", BOB)
    mine = mem.remember(bob_dm, SALES, scope="user", kind="fact", subject=SUBJECT)
    ids, excluded = recalled(mem, bob_dm)
    assert old in ids and mine.id in ids
    assert (old, "overridden") not in excluded
    # Any other statement on the subject still overrides it, as before.
    clock.advance(days=1)
    other = mem.remember(
        bob_dm, "The weekly report pulls from the hr table.", scope="user", subject=SUBJECT
    )
    ids, excluded = recalled(mem, bob_dm)
    assert other.id in ids and (old, "overridden") in excluded


def test_an_undone_merge_is_not_redone_with_a_new_note_saying_the_same(mem: Memory) -> None:
    texts = ("Prefers short status reports.", "Prefers very short status reports.")
    sources = [mem.remember(member(BOB), t, scope="user") for t in texts]
    report = mem.consolidate(admin())
    (merged,) = report.merged
    mem.undo_run(admin(), report.run_id)
    assert mem.get(owner(), merged.id).status is Status.ACTIVE
    # The source the merged note did not copy is forgotten and said again: a new note.
    (other,) = [s for s in sources if normalize_text(s.text) != normalize_text(merged.text)]
    mem.forget(member(BOB), other.id)
    again = mem.remember(member(BOB), other.text, scope="user")
    assert again.id != other.id
    assert mem.consolidate(admin()).groups == []
    assert mem.get(owner(), again.id).status is Status.ACTIVE


def _restore_lines(data_dir: Path) -> list[dict[str, Any]]:
    log = data_dir / "agents" / AGENT / "memory.jsonl"
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line["op"] == "restore"]


def test_the_veto_is_keyed_hashes_under_a_secret_kept_outside_the_log(
    mem: Memory, clock: Any, data_dir: Path
) -> None:
    undone_pair(mem, clock)
    (restore,) = _restore_lines(data_dir)
    veto = restore["veto"]
    assert len(veto) == 2 and all(len(h) == 32 for h in veto)
    # Keyed: not a plain hash of the words (which anyone could test a guess against).
    for text in (FINANCE, SALES):
        plain = f"{SUBJECT}\x00{normalize_text(text)}".encode()
        assert hashlib.sha256(plain).hexdigest()[:32] not in veto
    secret = data_dir / "agents" / AGENT / "secret.key"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(secret.read_bytes()) == 32
    log = (data_dir / "agents" / AGENT / "memory.jsonl").read_bytes()
    assert secret.read_bytes() not in log and secret.read_bytes().hex().encode() not in log


def test_the_veto_holds_after_reopening_and_in_another_process(data_dir: Path, clock: Any) -> None:
    with Memory.open(data_dir, clock=clock) as mem:
        old, new = undone_pair(mem, clock)
        mem.forget(admin(), new)
    secret = (data_dir / "agents" / AGENT / "secret.key").read_bytes()
    script = f"""
import sys
from remem import Memory, RunContext, Role
mem = Memory.open({str(data_dir)!r})
ctx = RunContext.group({AGENT!r}, "discord:general", {ALICE!r}, role=Role.ADMIN)
note = mem.remember(ctx, {SALES!r}, scope="agent", kind="procedure", subject={SUBJECT!r})
print(mem.get(RunContext.owner({AGENT!r}), {old!r}).status.value)
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "active"
    assert (data_dir / "agents" / AGENT / "secret.key").read_bytes() == secret
    with Memory.open(data_dir, clock=clock) as mem:
        assert mem.get(owner(), old).status is Status.ACTIVE
        ids, excluded = recalled(mem, RunContext.agent_only(AGENT))
        assert old in ids and excluded == []


def test_compaction_drops_the_hash_of_an_erased_note(
    mem: Memory, clock: Any, data_dir: Path
) -> None:
    old, new = undone_pair(mem, clock)
    mem.compact(owner())  # nothing dead yet: the hashes stay
    assert len(_restore_lines(data_dir)[0]["veto"]) == 2
    mem.forget(admin(), new)
    mem.compact(owner())
    (restore,) = _restore_lines(data_dir)
    assert restore["veto"] == []  # with the replacement, its hash went
    assert restore["note_id"] == old
    # The restored note itself is untouched, and still no note retires it by id.
    assert mem.get(owner(), old).status is Status.ACTIVE
    assert mem.revisions(owner())[0].undone


def test_the_veto_survives_the_catalog_cache(
    data_dir: Path, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big log opens from the catalog snapshot (no scan): the keyed vetoes are in it."""
    from remem.app import agent_state as agentlog

    monkeypatch.setattr(agentlog, "FREEZE_AFTER", 1)  # snapshot after any scan
    with Memory.open(data_dir, clock=clock) as mem:
        old, new = undone_pair(mem, clock)
        mem.forget(admin(), new)
    with Memory.open(data_dir, clock=clock) as mem:
        mem.list(owner())  # a full scan, which writes the snapshot
    assert (data_dir / "agents" / AGENT / "catalog.cache").exists()
    with Memory.open(data_dir, clock=clock) as mem:
        state = mem._agent(owner()).sync()
        assert state.veto_keys  # resumed from the snapshot with the vetoes
        mem.remember(admin(), SALES, scope="agent", kind="procedure", subject=SUBJECT)
        assert mem.get(owner(), old).status is Status.ACTIVE

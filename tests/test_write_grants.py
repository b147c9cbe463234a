"""A remember's authorization and limits are kept per envelope and target between writes
(so repeated writes of one run skip the work) and decided again the moment anything they
depend on changes: a steward appointed or removed, a channel policy, a participant's
choice, the policy file, in this process or another one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from remem import Denied, Memory, Rejected, Role, RunContext, Scope

AGENT = "yuko"
ADMIN = RunContext.group(AGENT, "discord:team", "discord:9", role=Role.ADMIN)
MEMBER = RunContext.group(AGENT, "discord:team", "discord:7")  # one run, many writes


def _write_elsewhere(mem: Memory, text: str) -> None:
    mem.remember(MEMBER, text, scope="channel", scope_id="discord:ops", kind="fact")


def test_a_steward_appointed_or_removed_counts_at_the_next_write(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        for _ in range(2):  # refusals are never kept: the second one is decided again
            with pytest.raises(Denied):
                _write_elsewhere(mem, "The ops channel deploys on Fridays.")
        mem.set_channel_policy(ADMIN, "discord:ops", stewards=["discord:7"])
        _write_elsewhere(mem, "The ops channel deploys on Fridays.")
        _write_elsewhere(mem, "The ops channel freezes in December.")  # kept grant
        mem.set_channel_policy(ADMIN, "discord:ops", stewards=[])
        with pytest.raises(Denied):
            _write_elsewhere(mem, "The ops channel has no on-call.")


def test_another_process_removing_a_steward_counts_at_the_next_write(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem, Memory.open(tmp_path) as other:
        other.set_channel_policy(ADMIN, "discord:ops", stewards=["discord:7"])
        _write_elsewhere(mem, "The ops channel deploys on Fridays.")
        other.set_channel_policy(ADMIN, "discord:ops", stewards=[])
        with pytest.raises(Denied):
            _write_elsewhere(mem, "The ops channel freezes in December.")


def test_a_channel_policy_turning_memory_off_counts_at_the_next_write(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        mem.remember(MEMBER, "The team ships on Tuesdays.")
        mem.set_channel_policy(ADMIN, "discord:team", memory=False)
        with pytest.raises(Rejected) as refused:
            mem.remember(MEMBER, "The team ships on Wednesdays.")
        assert refused.value.reason == "memory_off"


def _edit(path: Path, text: str) -> None:
    path.write_text(text)
    stamp = time.time_ns() + 5_000_000_000  # a distinct mtime: the edit cannot hide
    os.utime(path, ns=(stamp, stamp))


def test_an_edit_of_the_policy_file_counts_at_the_next_write(tmp_path: Path) -> None:
    policy = tmp_path / "remem.toml"
    _edit(policy, '[memory]\nagent_write_access = ["discord:7"]\n')
    with Memory.open(tmp_path) as mem:
        note = mem.remember(MEMBER, "The standup is at 9:30.", scope="agent", kind="fact")
        assert note.scope is Scope.AGENT
        _edit(policy, "[memory]\nagent_write_access = []\n")
        with pytest.raises(Denied):
            mem.remember(MEMBER, "The standup is at 9:45.", scope="agent", kind="fact")
        _edit(policy, '[memory]\nagent_write_access = ["discord:7"]\nmax_note_chars = 20\n')
        with pytest.raises(Rejected) as refused:
            mem.remember(MEMBER, "The standup is at ten o'clock.", scope="agent", kind="fact")
        assert refused.value.reason == "too_long"


def test_a_policy_edit_during_a_decision_is_not_kept_under_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file changes between the read that names the grant's version and the reads
    the decision makes: the decision (on the new file) must not be kept under the old
    version, or putting the old file back would bring back a decision it never made."""
    from remem.policy.book import PolicyBook

    policy = tmp_path / "remem.toml"
    closed = "[memory]\nagent_write_access = []\n"
    opened = '[memory]\nagent_write_access = ["discord:7"]\n'
    _edit(policy, closed)
    armed: list[bool] = []
    real_file = PolicyBook.file

    def file_then_edit(self: PolicyBook) -> object:
        current = real_file(self)
        if armed:  # the admin's edit lands right after this read
            armed.clear()
            _edit(policy, opened)
        return current

    with Memory.open(tmp_path) as mem:
        monkeypatch.setattr(PolicyBook, "file", file_then_edit)
        armed.append(True)
        mem.remember(MEMBER, "The standup is at 9:30.", scope="agent", kind="fact")
        _edit(policy, closed)  # and back: the same content, the same version as before
        with pytest.raises(Denied):
            mem.remember(MEMBER, "The standup is at 9:45.", scope="agent", kind="fact")

"""A run's channel kind is a recorded fact, not whatever the host asserts (issue 20,
item 17), through a real ``remem serve``, its CLI and its files.

The hole: a member-capped host token claimed ``kind: dm`` for a group channel and then
acted as the DM's member there (disabled an admin's team note, minted a member link).
Now the first call naming a channel records its kind in the log (a ``channel_kind``
event), a contradicting envelope is refused (rule ``channel_kind``), only owners and
admins correct it (``remem channel set-kind``), tokens can be limited to run kinds
(``remem tokens create --kinds``), plaintext cannot be written or moved into an
encrypted DM's channel scope, existing channels are backfilled from what the data
shows, and ``remem doctor`` lists what an admin should confirm.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from http_server import Server, serve
from remem import Memory, Role, RunContext
from remem.cli import main
from test_member_links import request

AGENT, OLD = "yuko", "oldbot"  # OLD: an agent whose log predates channel kinds
ADMIN, EVIL, ANN = "u:admin", "u:evil", "u:ann"


def env(
    kind: str, channel: str | None, actor: str, role: str = "member", agent: str = AGENT
) -> Any:
    return {"agent": agent, "kind": kind, "channel": channel, "actor": actor, "role": role,
            "run_id": None}  # fmt: skip


def call(
    server: Server, token: str, verb: str, path: str, envelope: Any = None, body: Any = None
) -> tuple[int, Any]:
    agent = envelope["agent"] if envelope else AGENT
    headers = {"Authorization": f"Bearer {token}"}
    if envelope is not None:
        headers["Remem_Run"] = json.dumps(envelope)
    status, _, data = request(server, verb, f"/v1/agents/{agent}{path}", body, **headers)
    return status, data


def remem_cli(data: Path, *args: str) -> Result:
    """The owner's command line on the service's data directory (in this process: the
    service is another one, which must see what the command wrote)."""
    return CliRunner().invoke(main, ["--data", str(data), *args], env={"REMEM_EMBEDDINGS": "0"})


def _legacy_data(data: Path) -> None:
    """An agent written before channel kinds existed: its group channel's recall left a
    trace of a group run, its DM a member link, a third channel only a note. The
    ``channel_kind`` lines this version wrote are cut out, as an older remem had none."""
    with Memory.open(data, embedder=None) as mem:
        team = RunContext.group(OLD, "team:old", ADMIN, role=Role.ADMIN)
        mem.remember(team, "The old team ships on Mondays.", scope="channel", kind="decision")
        mem.recall(team, "ship")
        mem.member_link(RunContext.dm(OLD, "dm:ann", ANN))
        mem.remember(RunContext.owner(OLD), "Quiet channel.", scope="channel", scope_id="q:old")
        said = RunContext.group(OLD, "said:old", ADMIN, role=Role.ADMIN)  # no recall there
        mem.remember(said, "The ops channel pages on call.", scope="channel", kind="decision")
    log = data / "agents" / OLD / "memory.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(line for line in lines if b'"op":"channel_kind"' not in line))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("kinds") / "data"
    data.mkdir()
    _legacy_data(data)
    with serve(data) as srv:
        yield srv


@pytest.fixture(scope="module")
def tokens(server: Server) -> dict[str, str]:
    made = {}
    grants = ("--agent", "*", "--channel", "*", "--actor", "*")
    for key, args in {
        "owner": ("--name", "own", "--owner"),
        "admin": ("--name", "adm", *grants, "--max-role", "admin"),
        "member": ("--name", "mem", *grants, "--system", "sop"),  # members only (default)
        "dmonly": ("--name", "dmo", *grants, "--kinds", "dm"),
    }.items():
        out = remem_cli(server.data, "tokens", "create", "--json", *args)
        assert out.exit_code == 0, out.output
        made[key] = json.loads(out.stdout)["token"]
    return made


def _team_note(server: Server, tokens: dict[str, str], channel: str) -> str:
    status, note = call(
        server,
        tokens["admin"],
        "POST",
        "/notes",
        env("group", channel, ADMIN, "admin"),
        {"text": "The team deploys on Thursdays.", "scope": "channel", "kind": "decision"},
    )
    assert status == 201, note
    return str(note["id"])


def test_a_member_capped_token_cannot_claim_a_dm_on_a_group_channel(
    server: Server, tokens: dict[str, str]
) -> None:
    """The exact attack: kind dm on a group channel, then act as the DM's member."""
    note = _team_note(server, tokens, "team:1")
    claim = env("dm", "team:1", EVIL)
    status, body = call(server, tokens["member"], "POST", f"/notes/{note}/disable", claim)
    assert (status, body["rule"]) == (403, "channel_kind"), body
    assert "recorded as a group" in body["message"]
    status, body = call(server, tokens["member"], "POST", "/member-link", claim)
    assert (status, body["rule"]) == (403, "channel_kind"), body
    status, body = call(server, tokens["member"], "POST", "/recall", claim, {"query": "deploy"})
    assert (status, body["rule"]) == (403, "channel_kind"), body
    status, seen = call(
        server, tokens["admin"], "GET", f"/notes/{note}", env("group", "team:1", ADMIN, "admin")
    )
    assert (status, seen["status"], seen["version"]) == (200, "active", 1)
    # A task run in the channel (the token's sop grant) never acts as a DM's member either.
    task = {**env("task", "team:1", "task", "sop")}
    status, body = call(server, tokens["member"], "POST", f"/notes/{note}/disable", task)
    assert (status, body["rule"]) == (403, "not_author"), body
    status, body = call(server, tokens["member"], "POST", "/member-link", task)
    assert (status, body["rule"]) == (403, "member_link_dm_only"), body


def test_the_first_read_records_the_kind_and_its_member(
    server: Server, tokens: dict[str, str]
) -> None:
    ann = env("dm", "dm:1", ANN)
    status, _ = call(server, tokens["member"], "POST", "/recall", ann, {"query": ""})
    assert status == 200
    status, kinds = call(server, tokens["owner"], "GET", "/channel-kinds", env_owner())
    assert status == 200, kinds
    fact = kinds["recorded"]["dm:1"]
    assert (fact["kind"], fact["member"], fact["how"], fact["ceiling"]) == (
        "dm", ANN, "first_use", "member",
    )  # fmt: skip
    assert "dm:1" in kinds["unconfirmed"]
    # Recorded once, in the log: the next reads add nothing.
    log = server.data / "agents" / AGENT / "memory.jsonl"
    count = log.read_bytes().count(b'"target":"dm:1"')
    call(server, tokens["member"], "POST", "/recall", ann, {"query": "again"})
    assert log.read_bytes().count(b'"target":"dm:1"') == count == 1
    # The same channel as another member's DM, or as a group: refused.
    for other in (env("dm", "dm:1", EVIL), env("group", "dm:1", EVIL)):
        status, body = call(server, tokens["member"], "POST", "/recall", other, {"query": ""})
        assert (status, body["rule"]) == (403, "channel_kind"), body


def env_owner(agent: str = AGENT) -> Any:
    return {"agent": agent, "kind": "owner", "channel": None, "actor": "local:owner",
            "role": "owner", "run_id": None}  # fmt: skip


def test_only_owners_and_admins_set_a_kind_and_the_cli_does(
    server: Server, tokens: dict[str, str]
) -> None:
    _team_note(server, tokens, "team:2")
    member = env("group", "team:2", EVIL)
    status, body = call(
        server,
        tokens["member"],
        "PUT",
        "/channels/team:2/kind",
        member,
        {"kind": "dm", "member": EVIL},
    )
    assert (status, body["rule"]) == (403, "admin_only"), body
    help_text = remem_cli(server.data, "channel", "set-kind", "--help").stdout
    assert "remem channel set-kind yuko discord:456 dm --member discord:123" in help_text
    done = remem_cli(server.data, "channel", "set-kind", AGENT, "team:2", "dm", "--member", ANN)
    assert done.exit_code == 0, done.output
    assert "team:2: dm of u:ann" in done.stdout
    # The running service reads the correction: the DM of ann now, a group turn refused.
    status, _ = call(
        server, tokens["member"], "POST", "/recall", env("dm", "team:2", ANN), {"query": ""}
    )
    assert status == 200
    status, body = call(server, tokens["member"], "POST", "/recall", member, {"query": ""})
    assert (status, body["rule"]) == (403, "channel_kind"), body
    bad = remem_cli(server.data, "channel", "set-kind", AGENT, "team:2", "dm")
    assert bad.exit_code != 0 and "--member" in bad.output
    status, fact = call(
        server, tokens["admin"], "PUT", "/channels/team:2/kind",
        env("group", "team:9", ADMIN, "admin"), {"kind": "group"},
    )  # fmt: skip
    assert (status, fact["kind"], fact["how"]) == (200, "group", "set"), fact


def test_a_token_limited_to_dm_runs_is_refused_other_kinds(
    server: Server, tokens: dict[str, str]
) -> None:
    status, _ = call(
        server, tokens["dmonly"], "POST", "/recall", env("dm", "dm:k", ANN), {"query": ""}
    )
    assert status == 200
    for other in (env("group", "team:k", ANN), {**env("task", "team:k", "task", "sop")}):
        status, body = call(server, tokens["dmonly"], "POST", "/recall", other, {"query": ""})
        assert (status, body["rule"]) == (403, "kind_not_granted"), body
    status, listed = call(server, tokens["owner"], "GET", "/channel-kinds", env_owner())
    assert "team:k" not in listed["recorded"]  # a refused envelope records nothing
    shown = remem_cli(server.data, "tokens", "ls", "--json")
    kinds = {t["name"]: t["kinds"] for t in json.loads(shown.stdout)}
    assert kinds["dmo"] == ["dm"] and kinds["mem"] is None


def test_no_plaintext_is_written_or_moved_into_an_encrypted_dm(
    server: Server, tokens: dict[str, str]
) -> None:
    call(server, tokens["member"], "POST", "/recall", env("dm", "dm:e2", ANN), {"query": ""})
    owner = env_owner()
    status, _ = call(
        server,
        tokens["owner"],
        "PATCH",
        "/channels/dm:e2/policy",
        owner,
        {"values": {"e2ee": True}},
    )
    assert status == 200
    admin = env("group", "team:3", ADMIN, "admin")
    status, body = call(
        server, tokens["admin"], "POST", "/notes", admin,
        {"text": "Ann's DM says hi.", "scope": "channel", "scope_id": "dm:e2"},
    )  # fmt: skip
    assert (status, body["rule"]) == (403, "e2ee_plaintext"), body
    note = _team_note(server, tokens, "team:3")
    status, body = call(
        server, tokens["admin"], "POST", f"/notes/{note}/move", admin,
        {"scope": "channel", "scope_id": "dm:e2"},
    )  # fmt: skip
    assert (status, body["rule"]) == (403, "e2ee_plaintext"), body
    status, seen = call(server, tokens["admin"], "GET", f"/notes/{note}", admin)
    assert (seen["scope_id"], seen["version"]) == ("team:3", 1)


def test_existing_channels_are_backfilled_from_what_the_data_shows(
    server: Server, tokens: dict[str, str]
) -> None:
    def recall(kind: str, channel: str, actor: str) -> tuple[int, Any]:
        claim = env(kind, channel, actor, agent=OLD)
        return call(server, tokens["member"], "POST", "/recall", claim, {"query": ""})

    status, body = recall("dm", "team:old", EVIL)
    assert (status, body["rule"]) == (403, "channel_kind"), body
    status, body = recall("dm", "dm:ann", EVIL)
    assert (status, body["rule"]) == (403, "channel_kind"), body
    status, _ = recall("dm", "dm:ann", ANN)
    assert status == 200
    status, kinds = call(server, tokens["owner"], "GET", "/channel-kinds", env_owner(OLD))
    recorded = {c: (f["kind"], f["member"], f["how"]) for c, f in kinds["recorded"].items()}
    assert recorded == {
        "team:old": ("group", None, "backfill"),  # a trace of a group run
        "dm:ann": ("dm", ANN, "backfill"),  # a member link
    }
    assert kinds["unrecorded"] == ["q:old", "said:old"]  # notes only: left for first use
    # ...but a DM claim where the log shows another person speaking is not recorded.
    status, body = recall("dm", "said:old", EVIL)
    assert (status, body["rule"]) == (403, "unrecorded_channel"), body
    status, _ = recall("group", "said:old", EVIL)
    assert status == 200
    status, kinds = call(server, tokens["owner"], "GET", "/channel-kinds", env_owner(OLD))
    assert kinds["recorded"]["said:old"]["how"] == "first_use"


def test_doctor_lists_kinds_to_confirm_and_channels_without_one(
    server: Server, tokens: dict[str, str]
) -> None:
    call(server, tokens["member"], "POST", "/recall", env("dm", "dm:doc", ANN), {"query": ""})
    out = remem_cli(server.data, "doctor").stdout
    assert "dm:doc was recorded as a dm of u:ann by a member-capped host" in out, out
    assert f"remem channel set-kind {AGENT} dm:doc dm --member {ANN}" in out
    assert re.search(r"channel\(s\) have no recorded kind yet: [^\n]*\bq:old\b", out), out


def test_a_task_run_in_a_dm_learns_nothing_as_a_group_speaker_there(
    server: Server, tokens: dict[str, str]
) -> None:
    """``learn`` writes each message under its speaker's envelope, derived from the run's:
    a task (or system) run in a DM's channel derives a group speaker there, which the
    recorded kind refuses as it refuses that envelope sent by a host."""
    status, _ = call(server, tokens["member"], "POST", "/recall", env("dm", "dm:k9", ANN),
                     {"query": ""})  # fmt: skip
    assert status == 200  # dm:k9 is recorded as Ann's DM
    said = "We decided the deploy is on Fridays, remember that."
    task = env("task", "dm:k9", "task", "sop")
    messages = [{"author": EVIL, "role": "member", "text": said}]
    status, report = call(server, tokens["member"], "POST", "/learn", task, {"messages": messages})
    assert status == 200, report
    assert (report["learned"], report["pending"]) == ([], []), report
    assert [d["reason"] for d in report["dropped"]] == ["channel_kind"], report
    status, notes = call(server, tokens["owner"], "GET", "/notes?status=all", env_owner())
    assert [n for n in notes if n["scope_id"] == "dm:k9"] == [], notes

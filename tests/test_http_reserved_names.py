"""A real ``remem serve`` refuses every agent name of the service's own (issue 20, item
11): ``#config``, ``#keyring``, ``#directory`` in the path and the envelope, and as the
target of a trash, answer 422 and create nothing, even for an owner token."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

from click.testing import CliRunner

from http_server import serve
from remem import RunContext
from remem.cli import main
from test_http_service import call


def test_http_refuses_reserved_agents(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = CliRunner().invoke(
        main, ["--data", str(data), "tokens", "create", "--name", "owner", "--owner", "--json"]
    )
    token = json.loads(made.output)["token"]
    with serve(data) as server:
        for name in ("#config", "#keyring", "#directory"):
            envelope = {**RunContext.owner("yuko").to_json(), "agent": name}
            base = f"/v1/agents/{urllib.parse.quote(name, safe='')}"
            wrote = call(
                server,
                "POST",
                base + "/notes",
                token=token,
                envelope=envelope,
                body={"text": "x", "scope": "agent"},
            )
            read = call(server, "GET", base + "/notes", token=token, envelope=envelope)
            trash = call(
                server,
                "POST",
                "/v1/agents/yuko/trash",
                token=token,
                envelope=RunContext.owner("yuko").to_json(),
                body={"target": name},
            )
            for status, _, body in (wrote, read, trash):
                assert status == 422, (name, body)
                assert "reserved" in json.dumps(body)
            assert not (data / "agents" / name).exists()


def test_no_token_is_granted_a_reserved_agent(tmp_path: Path) -> None:
    """``remem tokens create --agent`` takes agent names and patterns: one naming the
    service's own agents (``#config``, ``#*``) is refused, and no token is stored."""
    data = tmp_path / "data"
    for pattern in ("#config", "#keyring", "#*"):
        made = CliRunner().invoke(
            main, ["--data", str(data), "tokens", "create", "--name", "t", "--agent", pattern]
        )
        assert made.exit_code != 0 and "service's own" in made.output, made.output
        assert "rmm_" not in made.output
        assert not (data / "config" / "tokens" / "t.json").exists()

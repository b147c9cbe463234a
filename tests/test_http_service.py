"""The HTTP service's own promises, against a real ``remem serve`` on 127.0.0.1: tokens
(401), forged or out-of-grant envelopes (403 with the rule, for every route), optimistic
versions (ETag, If-Match, a 409 race between two clients), headers and limits, and an
access log without tokens or note text."""

from __future__ import annotations

import http.client
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, serve
from remem import Conflict, Denied, Memory, Message, Role, RunContext, Unauthenticated
from remem.http.routes import REQUIRED, ROUTES, Route

AGENT = "yuko"
CLI = (sys.executable, "-m", "remem.cli")
HOST_ARGS = ("--agent", AGENT, "--channel", "discord:*", "--actor", "*")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("svc") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def host_token(server: Server) -> str:
    return server.token("--name", "discord-bot", *HOST_ARGS)


@pytest.fixture(scope="module")
def owner_token(server: Server) -> str:
    return server.token("--name", "owner", "--owner")


def call(
    server: Server,
    verb: str,
    path: str,
    *,
    token: str | None = None,
    envelope: dict[str, Any] | str | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], Any]:
    """One raw request: status, headers (lower-case names), JSON body."""
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=30)
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    if envelope is not None:
        sent["Remem-Run"] = envelope if isinstance(envelope, str) else json.dumps(envelope)
    raw = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    conn.request(verb, path, body=raw, headers=sent)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    got = {k.lower(): v for k, v in resp.getheaders()}
    return resp.status, got, json.loads(data) if data else None


def dm(agent: str = AGENT, channel: str = "discord:1", actor: str = "discord:7", **kw: Any) -> Any:
    return RunContext.dm(agent, channel, actor, **kw).to_json()


#: Envelopes a host token for yuko in discord:* as a member may not assume, with the rule.
FORGED = {
    "other agent": (RunContext.dm("hana", "discord:1", "discord:7").to_json(), "agent_not_granted"),
    "channel outside the pattern": (dm(channel="slack:1"), "channel_not_granted"),
    "role above the grant": (
        RunContext.group(AGENT, "discord:1", "discord:7", role=Role.ADMIN).to_json(),
        "role_above_grant",
    ),
    "owner without the grant": (RunContext.owner(AGENT).to_json(), "owner_not_granted"),
    "system run without the grant": (
        RunContext.system(AGENT, Role.CRON).to_json(),
        "system_not_granted",
    ),
}


def route_path(route: Route, agent: str) -> str:
    path = route.full_path.replace("{agent}", agent)
    for param in route.path_params:
        path = path.replace("{" + param + "}", "x1")
    return path


def minimal_body(route: Route) -> dict[str, Any]:
    samples = {"str": "x", "objects": [], "object": {}, "any": {}}
    return {k: samples[t] for k, (t, d) in route.body.items() if d is REQUIRED}


@pytest.mark.parametrize("forged", sorted(FORGED))
def test_a_forged_envelope_is_403_with_its_rule_on_every_route(
    server: Server, host_token: str, forged: str
) -> None:
    envelope, rule = FORGED[forged]
    wrong = []
    for route in ROUTES:
        path = route_path(route, envelope["agent"])
        body = minimal_body(route) if route.writes else None
        status, _, data = call(
            server, route.verb, path, token=host_token, envelope=envelope, body=body
        )
        if status != 403 or data.get("rule") != rule:
            wrong.append((route.name, status, data))
    assert wrong == []


@pytest.mark.parametrize("token", [None, "", "rmm_discord-bot_" + "A" * 43, "not-a-token"])
def test_a_missing_or_bad_token_is_401_on_every_route(server: Server, token: str | None) -> None:
    wrong = []
    for route in ROUTES:
        path = route_path(route, AGENT)
        status, _, data = call(server, route.verb, path, token=token, envelope=dm(), body={})
        if status != 401 or data["code"] != "unauthenticated":
            wrong.append((route.name, status))
    status, _, _ = call(server, "GET", "/v1/agents", token=token)
    assert wrong == [] and status == 401


def test_a_granted_envelope_works_and_a_revoked_token_is_401(server: Server) -> None:
    token = server.token("--name", "short-lived", *HOST_ARGS)
    mem = Memory.open(server.url, token=token)
    note = mem.remember(RunContext.dm(AGENT, "discord:1", "discord:7"), "Likes green tea.")
    assert note.scope.value == "user"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "remem.cli",
            "--data",
            str(server.data),
            "tokens",
            "revoke",
            "short-lived",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    with pytest.raises(Unauthenticated):
        mem.get(RunContext.dm(AGENT, "discord:1", "discord:7"), note.id)


def test_tokens_are_stored_hashed_with_mode_0600(server: Server, host_token: str) -> None:
    folder = server.data / "config" / "tokens"
    files = sorted(folder.glob("*.json"))
    assert files
    for path in files:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert host_token not in path.read_text()
        assert host_token.rsplit("_", 1)[1] not in path.read_text()


def test_two_clients_race_on_one_note_and_the_loser_gets_409_with_the_current_note(
    server: Server, owner_token: str
) -> None:
    a = Memory.open(server.url, token=owner_token)
    b = Memory.open(server.url, token=owner_token)
    ctx = RunContext.owner("race")
    note = a.remember(ctx, "Deploys go out on Mondays.", scope="agent")
    seen_a, seen_b = a.get(ctx, note.id), b.get(ctx, note.id)
    won = a.correct(ctx, note.id, "Deploys go out on Tuesdays.", if_version=seen_a.version)
    with pytest.raises(Conflict) as lost:
        b.correct(ctx, note.id, "Deploys go out on Fridays.", if_version=seen_b.version)
    assert lost.value.current == won
    redo = b.correct(ctx, note.id, "Deploys go out on Fridays.", if_version=won.version)
    assert redo.version > won.version


def test_etag_if_match_and_no_store_over_the_wire(server: Server, owner_token: str) -> None:
    env = RunContext.owner("etag").to_json()
    status, headers, note = call(
        server,
        "POST",
        "/v1/agents/etag/notes",
        token=owner_token,
        envelope=env,
        body={"text": "The wiki lives at wiki.example.", "scope": "agent"},
    )
    assert status == 201 and headers["etag"] == f'"{note["version"]}"'
    assert headers["cache-control"] == "no-store"
    path = f"/v1/agents/etag/notes/{note['id']}"
    status, headers, got = call(server, "GET", path, token=owner_token, envelope=env)
    assert status == 200 and headers["etag"] == f'"{got["version"]}"'
    stale = {"If-Match": '"999"'}
    status, headers, body = call(
        server, "POST", path + "/pin", token=owner_token, envelope=env, headers=stale
    )
    assert status == 409 and body["code"] == "conflict" and body["current"]["id"] == note["id"]
    assert headers["cache-control"] == "no-store"
    fresh = {"If-Match": headers.get("etag") or f'"{got["version"]}"'}
    status, _, pinned = call(
        server, "POST", path + "/pin", token=owner_token, envelope=env, headers=fresh
    )
    assert status == 200 and pinned["pinned"] is True


def test_bad_requests_are_4xx_never_5xx(server: Server, owner_token: str) -> None:
    env = RunContext.owner("bad").to_json()
    notes = "/v1/agents/bad/notes"
    cases = {
        "no envelope": call(server, "GET", notes, token=owner_token),
        "envelope not JSON": call(server, "GET", notes, token=owner_token, envelope="{"),
        "path agent is not the envelope's": call(
            server, "GET", "/v1/agents/other/notes", token=owner_token, envelope=env
        ),
        "unknown body field": call(
            server, "POST", notes, token=owner_token, envelope=env, body={"text": "x", "y": 1}
        ),
        "wrong type": call(
            server, "POST", notes, token=owner_token, envelope=env, body={"text": 1}
        ),
        "body not JSON": call(server, "POST", notes, token=owner_token, envelope=env, body=b"{"),
        "bad If-Match": call(
            server,
            "DELETE",
            notes + "/n1",
            token=owner_token,
            envelope=env,
            headers={"If-Match": "abc"},
        ),
    }
    assert {name: r[0] for name, r in cases.items()} == {name: 422 for name in cases}
    big = b'{"text": "' + b"x" * (1 << 20) + b'"}'
    status, _, _ = call(server, "POST", notes, token=owner_token, envelope=env, body=big)
    assert status == 413


def test_no_cors_no_docs_and_the_openapi_document(server: Server) -> None:
    status, headers, _ = call(server, "GET", "/healthz", headers={"Origin": "https://evil.test"})
    assert status == 200 and not any(h.startswith("access-control-") for h in headers)
    assert call(server, "GET", "/docs")[0] == 404
    status, _, spec = call(server, "GET", "/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.1")
    for route in ROUTES:
        op = spec["paths"][route.full_path][route.verb.lower()]
        assert {"401", "403", "404", "422", "503", str(route.ok)} <= set(op["responses"]), route


def _preflight(
    server: Server, path: str, origin: str, headers: dict[str, str]
) -> tuple[int, dict[str, str]]:
    """A CORS preflight (its body is plain text): status and headers (lower-case names)."""
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]), timeout=30)
    conn.request("OPTIONS", path, headers={"Origin": origin, **headers})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}


def test_cors_only_for_the_configured_origins_and_never_with_credentials(tmp_path: Path) -> None:
    console, evil = "https://console.example", "https://evil.example"
    with serve(tmp_path / "data", "--cors-origin", console) as srv:
        token = srv.token("--name", "console", "--owner")
        preflight = {
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type,remem-run,if-match",
        }
        path = "/v1/agents/yuko/notes"
        status, headers = _preflight(srv, path, console, preflight)
        assert status == 200 and headers["access-control-allow-origin"] == console
        assert "access-control-allow-credentials" not in headers
        assert "remem-run" in headers["access-control-allow-headers"].lower()
        status, headers = _preflight(srv, path, evil, preflight)
        assert status >= 400 and "access-control-allow-origin" not in headers
        owner = RunContext.owner("yuko").to_json()
        body = {"text": "Deploys are on Tuesdays.", "scope": "agent"}
        status, headers, note = call(
            srv, "POST", path, token=token, envelope=owner, body=body, headers={"Origin": console}
        )
        assert status == 201 and headers["access-control-allow-origin"] == console
        assert headers["etag"] == f'"{note["version"]}"'
        assert "etag" in headers["access-control-expose-headers"].lower()
        _, headers, _ = call(srv, "GET", "/healthz", headers={"Origin": evil})
        assert "access-control-allow-origin" not in headers  # the browser keeps it out
    bad = subprocess.run(
        [*CLI, "serve", "--data", str(tmp_path / "d2"), "--cors-origin", "https://x.example/a"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode != 0 and "is not an origin" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_access_log_has_routes_but_no_token_and_no_note_text(
    server: Server, owner_token: str
) -> None:
    secret_text = "The vault combination is in the blue folder."
    mem = Memory.open(server.url, token=owner_token)
    mem.remember(RunContext.owner("logged"), secret_text, scope="agent")
    mem.recall(RunContext.owner("logged"), "vault combination")
    log = Path(server.log).read_text()
    assert '"route":"/v1/agents/{agent}/notes"' in log
    assert owner_token not in log and secret_text not in log and "vault" not in log


def test_learned_message_labels_are_capped_at_the_tokens_role(
    server: Server, host_token: str
) -> None:
    """The service uses the principal's view: a member-only host may not pass a message
    labelled admin to learn (the label would make the words operational knowledge)."""
    mem = Memory.open(server.url, token=host_token)
    ctx = RunContext.group(AGENT, "discord:team-1", "discord:7")  # discord:1 is a DM here
    said_by_admin = Message("discord:8", Role.ADMIN, "From now on, use the finance table.", "m1")
    with pytest.raises(Denied) as refused:
        mem.learn(ctx, [said_by_admin])
    assert refused.value.rule == "role_ceiling", refused.value.rule
    report = mem.learn(ctx, [Message("discord:7", Role.MEMBER, "I prefer short replies.", "m2")])
    assert report is not None


def test_two_serve_processes_on_one_directory_read_each_others_writes(tmp_path: Path) -> None:
    """Read-your-writes across processes: a note written through one server is read, and
    changed at its version, through another on the same data directory."""
    data = tmp_path / "data"
    with serve(data) as first, serve(data) as second:
        token = first.token("--name", "both", "--owner")
        a = Memory.open(first.url, token=token)
        b = Memory.open(second.url, token=token)
        ctx = RunContext.owner("shared")
        note = a.remember(ctx, "Standups are at nine.", scope="agent")
        assert b.get(ctx, note.id) == note
        changed = b.correct(ctx, note.id, "Standups are at ten.", if_version=note.version)
        assert a.get(ctx, note.id) == changed
        with pytest.raises(Conflict):
            a.pin(ctx, note.id, if_version=note.version)

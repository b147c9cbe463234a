"""``Idempotency-Key`` on ``remember`` and the note changes against real ``remem serve``
processes: the same request sent again returns the first result and writes nothing, also
after a restart of the server (the ids come from the key, and the log remembers them)."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

from http_server import Server, serve
from remem import Memory, RunContext

AGENT = "yuko"
#: How a key sent again with a different request is refused (422).
REUSED = "Idempotency-Key reused for a different request"
ME = RunContext.dm(AGENT, "discord:1", "discord:7")
HOST_ARGS = ("--name", "bot", "--agent", AGENT, "--channel", "discord:*", "--actor", "*")


def _remember(
    server: Server, token: str, text: str, key: str | None, ctx: RunContext = ME
) -> tuple[int, Any]:
    port = int(server.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Remem-Run": json.dumps(ctx.to_json())}
    if key is not None:
        headers["Idempotency-Key"] = key
    body = json.dumps({"text": text, "scope": "user"}).encode()
    conn.request("POST", f"/v1/agents/{AGENT}/notes", body=body, headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, data


def _history(server: Server, token: str, note_id: str) -> list[Any]:
    return Memory.open(server.url, token=token).history(ME, note_id)


def test_a_retried_remember_returns_the_first_result_even_after_a_restart(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with serve(data) as server:
        token = server.token(*HOST_ARGS)
        status, first = _remember(server, token, "I prefer tea", "retry-1")
        assert status == 201
        status, again = _remember(server, token, "I prefer tea", "retry-1")
        assert (status, again) == (201, first)
        assert len(_history(server, token, first["id"])) == 1
        # Without a key, the same text again is a second write (a reinforcement).
        _, plain = _remember(server, token, "I prefer tea", None)
        assert plain["id"] == first["id"] and plain["version"] > first["version"]
        history = len(_history(server, token, first["id"]))
    with serve(data) as restarted:
        status, after = _remember(restarted, token, "I prefer tea", "retry-1")
        assert status == 201 and after["id"] == first["id"]
        assert after["version"] == plain["version"]  # nothing written: the note as it is
        assert len(_history(restarted, token, first["id"])) == history
        # Another key is another request; the same key in another envelope is refused.
        _, other = _remember(restarted, token, "I prefer coffee", "retry-2")
        assert other["id"] != first["id"]
        them = RunContext.dm(AGENT, "discord:2", "discord:8")
        status, theirs = _remember(restarted, token, "I prefer tea", "retry-1", them)
        assert status == 422 and theirs["message"].startswith(REUSED), theirs
        status, bad = _remember(restarted, token, "x", "k" * 201)
        assert status == 422 and "Idempotency-Key" in bad["message"]


def _send(
    server: Server, token: str, verb: str, path: str, headers: dict[str, str], body: Any = None
) -> tuple[int, Any]:
    port = int(server.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    sent = {"Authorization": f"Bearer {token}", "Remem-Run": json.dumps(ME.to_json()), **headers}
    raw = None if body is None else json.dumps(body).encode()
    conn.request(verb, f"/v1/agents/{AGENT}/notes/{path}", body=raw, headers=sent)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, data


#: Each note change sent twice with one key: (verb, path after the note id, body).
CHANGES = {
    "correct": ("POST", "/correct", {"text": "I prefer green tea"}),
    "move": ("POST", "/move", {"scope": "channel"}),
    "pin": ("POST", "/pin", None),
    "unpin": ("POST", "/unpin", None),
    "disable": ("POST", "/disable", None),
    "enable": ("POST", "/enable", None),
    "forget": ("DELETE", "", None),
}


def test_a_retried_change_at_its_version_answers_instead_of_409_and_writes_once(
    tmp_path: Path,
) -> None:
    """The first attempt's own event makes the ``If-Match`` version stale (or the note
    gone); the retry with the same key gets the note, and the log holds one event."""
    with serve(tmp_path / "data") as server:
        token = server.token(*HOST_ARGS)
        _, note = _remember(server, token, "I prefer tea", None)
        for name, (verb, tail, body) in CHANGES.items():
            if name == "unpin":
                assert note["pinned"]
            headers = {"If-Match": f'"{note["version"]}"', "Idempotency-Key": f"k-{name}"}
            status, first = _send(server, token, verb, note["id"] + tail, headers, body)
            assert status == 200, (name, first)
            events = len(_history(server, token, note["id"]))
            status, again = _send(server, token, verb, note["id"] + tail, headers, body)
            assert (status, again["version"]) == (200, first["version"]), (name, again)
            assert len(_history(server, token, note["id"])) == events, name
            # Without the key the same request is a new one, and its version is stale.
            stale = {"If-Match": headers["If-Match"]}
            status, refused = _send(server, token, verb, note["id"] + tail, stale, body)
            assert status in (404, 409), (name, refused)
            note = first
        # One key on two different notes: the second is refused, and not applied.
        _, a = _remember(server, token, "I like rain", None)
        _, b = _remember(server, token, "I like snow", None)
        key = {"Idempotency-Key": "same"}
        status, pinned = _send(server, token, "POST", a["id"] + "/pin", key)
        assert status == 200 and pinned["pinned"], pinned
        status, refused = _send(server, token, "POST", b["id"] + "/pin", key)
        assert status == 422 and refused["message"].startswith(REUSED), refused
        assert not Memory.open(server.url, token=token).get(ME, b["id"]).pinned

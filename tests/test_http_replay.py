"""Results given again must be allowed again, against a real ``remem serve`` (issue 20,
items 1 and 2); ``postgres/test_pg_replay.py`` runs the same scenarios on PostgreSQL.

1. A request sent again with its ``Idempotency-Key`` (``remember``, every note change,
   a ``tools/call``) after an admin moved the note to another member and corrected it
   answers as a read of that note by the caller now: 404 with a ``GET``'s body (a
   ``not_found`` refusal for a tool call), never the other member's note. The same for a
   ``forget`` applied already whose note the caller may no longer see (its stewardship
   of the note's channel ended).
2. The key works with a null ``run_id`` and for member sessions (which send no
   envelope), and the same key sent with a different route, note, ``Remem-Run`` or body
   is refused with 422 and writes nothing, in any process serving the data.

Each with a host token and with the member page's session (the ``/pad`` cookie).
"""

from __future__ import annotations

import http.client
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from http_server import Server, serve
from remem import Memory, RunContext
from remem.http.tokens import create_token
from test_member_links import exchange

AGENT = "yuko"
#: How a key sent again with a different request is refused (422).
REUSED = "Idempotency-Key reused for a different request"
#: The member, in a run of its own, and as a host sends it with no run id (null).
ME = RunContext.dm(AGENT, "discord:1", "discord:7", run_id="run-1")
RUN, NULL_RUN = json.dumps(ME.to_json()), json.dumps({**ME.to_json(), "run_id": None})
OTHER, TEAM = "discord:8", "discord:9"
OWNER = RunContext.owner(AGENT)
#: The note changes sent with a key: route -> (verb, path after the note id, body, the
#: change made first without a key).
CHANGES: dict[str, tuple[str, str, Any, str | None]] = {
    "correct": ("POST", "/correct", {"text": "I prefer green tea"}, None),
    "move": ("POST", "/move", {"scope": "channel"}, None),
    "disable": ("POST", "/disable", None, None),
    "enable": ("POST", "/enable", None, "disable"),
    "pin": ("POST", "/pin", None, None),
    "unpin": ("POST", "/unpin", None, "pin"),
}
#: A request: verb, path under the agent, body, key, If-Match version.
Sent = tuple[str, str, Any, str, int | None]


@dataclass
class Caller:
    """Requests as the member ``ME``: with a host token, or with the member page's session
    cookie; ``envelope``: the ``Remem-Run`` header sent (a page may send none: then it
    acts in its session's own DM, in a new run each time)."""

    base: str
    label: str
    envelope: str | None
    token: str | None = None
    cookie: str | None = None

    def send(
        self,
        verb: str,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        version: int | None = None,
        run: str | None = None,
    ) -> tuple[int, Any]:
        """``run``: this ``Remem-Run`` header instead of the caller's own envelope."""
        url = urllib.parse.urlsplit(self.base)
        headers = {"Content-Type": "application/json"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        else:
            assert self.cookie is not None
            headers |= {"Cookie": self.cookie, "Origin": self.base, "Remem-Pad": "1"}
        if (run or self.envelope) is not None:
            headers["Remem-Run"] = run or self.envelope or ""
        if key is not None:
            headers["Idempotency-Key"] = f"{self.label}-{key}"
        if version is not None:
            headers["If-Match"] = f'"{version}"'
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        raw = None if body is None else json.dumps(body).encode()
        conn.request(verb, f"/v1/agents/{AGENT}{path}", raw, headers)
        response = conn.getresponse()
        data = json.loads(response.read())
        conn.close()
        return response.status, data

    def again(self, sent: Sent) -> tuple[int, Any]:
        verb, path, body, key, version = sent
        return self.send(verb, path, body, key=key, version=version)

    def remember(self, text: str, key: str | None = None) -> tuple[int, Any]:
        return self.send("POST", "/notes", self.note(text), key=key)

    def note(self, text: str) -> dict[str, Any]:
        return {"text": f"{self.label}: {text}", "scope": "user"}

    def get(self, note_id: str) -> tuple[int, Any]:
        return self.send("GET", f"/notes/{note_id}")


def callers(server: Server, token: str, *, run: str | None = RUN) -> list[Caller]:
    """The member as a host token asserts it (``Remem-Run``: ``run``, else ``NULL_RUN``),
    and as its own page session (``run``, else none)."""
    link = Memory.open(server.url, token=token).member_link(ME)
    status, headers = exchange(server, link.token)
    assert status == 201, headers
    cookie = headers["set-cookie"].split(";")[0]
    return [
        Caller(server.url, "host", run or NULL_RUN, token=token),
        Caller(server.url, "page", run, cookie=cookie),
    ]


def _tool_call(me: Caller) -> dict[str, Any]:
    return {"name": "remember", "arguments": {"fact": f"{me.label} drinks tea at four"}}


def _first_sends(me: Caller, admin: Memory, steward: bool) -> dict[str, tuple[str, Sent]]:
    """Each keyed request, sent once: route -> (its note's id, the request)."""
    sent: dict[str, tuple[str, Sent]] = {}
    body = me.note("I prefer tea")
    status, note = me.send("POST", "/notes", body, key="remember")
    assert status == 201, note
    sent["remember"] = (note["id"], ("POST", "/notes", body, "remember", None))
    for name, (verb, tail, change, first) in CHANGES.items():
        _, note = me.remember(f"a note to {name}")
        if first is not None:
            _, note = me.send("POST", f"/notes/{note['id']}/{first}")
        request: Sent = (verb, f"/notes/{note['id']}{tail}", change, name, note["version"])
        status, done = me.again(request)
        assert status == 200, (name, done)
        sent[name] = (note["id"], request)
    request = ("POST", "/tools/call", _tool_call(me), "tool", None)
    status, result = me.again(request)
    assert status == 200 and not result["is_error"], result
    sent["tools/call"] = (result["writes"][-1]["note"]["id"], request)
    if steward:  # a note of another channel, which the member may change as its steward
        admin.set_channel_policy(OWNER, TEAM, stewards=[ME.actor])
        team = admin.remember(OWNER, f"{me.label}: the team ships", scope="channel", scope_id=TEAM)
        request = ("DELETE", f"/notes/{team.id}", None, "forget", team.version)
        status, done = me.again(request)
        assert status == 200 and done["status"] == "forgotten", done
        sent["forget"] = (team.id, request)
    return sent


def replays_answer_as_reads(me: Caller, admin: Memory, *, steward: bool = True) -> None:
    """Item 1 for one caller: every keyed request sent again after the admin took its note
    out of the member's reach answers as a ``GET`` of that note does now."""
    sent = _first_sends(me, admin, steward)
    for i, (route, (note_id, _)) in enumerate(sent.items()):
        if route != "forget":
            admin.move(OWNER, note_id, scope="user", scope_id=OTHER)
            admin.correct(OWNER, note_id, f"SECRET of {OTHER} number {i}")
    if steward:
        admin.set_channel_policy(OWNER, TEAM, stewards=[])
    for route, (note_id, request) in sent.items():
        read = me.get(note_id)
        assert read[0] == 404, (route, read)
        status, body = me.again(request)
        if route == "tools/call":
            assert status == 200 and body["is_error"] and body["code"] == "not_found", body
            assert "SECRET" not in json.dumps(body) and note_id in body["text"], body
        else:
            assert (status, body) == read, (me.label, route)


def keys_bind_one_request(me: Caller) -> dict[str, Any]:
    """Item 2 for one caller: a retried ``remember`` and ``correct`` with a null run id (a
    page session: no envelope at all) are replays, and the key with anything else is 422
    with nothing written. Returns what :func:`keys_still_bind` checks again."""
    status, first = me.remember("I like rain", key="rain")
    assert status == 201
    status, again = me.remember("I like rain", key="rain")
    assert (status, again) == (201, first)  # a reinforcement would be a new version
    _, note = me.remember("I drink coffee")
    path, version = f"/notes/{note['id']}/correct", note["version"]
    fixed = {"text": "I drink black coffee"}
    status, corrected = me.send("POST", path, fixed, key="fix", version=version)
    assert status == 200 and corrected["version"] == version + 1, corrected
    status, retried = me.send("POST", path, fixed, key="fix", version=version)
    assert (status, retried) == (200, corrected)  # not 409: its own first attempt
    _, other = me.remember("I like snow")
    changed_run = json.dumps({**ME.to_json(), "run_id": "run-2"})  # a page: any at all
    reused = {
        "body": ("POST", path, {"text": "I drink no coffee"}, None),
        "route": ("POST", f"/notes/{note['id']}/pin", None, None),
        "path": ("POST", f"/notes/{other['id']}/correct", fixed, None),
        "envelope": ("POST", path, fixed, changed_run),
        "remember": ("POST", "/notes", me.note("I like hail"), None),
    }
    for what, (verb, where, body, run) in reused.items():
        status, refused = me.send(verb, where, body, key="fix", version=version, run=run)
        assert status == 422 and refused["message"].startswith(REUSED), (what, refused)
    _assert_unchanged(me, note["id"], corrected, other)
    return {"note": note, "corrected": corrected, "other": other, "path": path, "body": fixed}


def keys_still_bind(me: Caller, seen: dict[str, Any]) -> None:
    """On another process (or after a restart): the same request is still a replay, and
    the key with another body is still refused."""
    version, path = seen["note"]["version"], seen["path"]
    status, retried = me.send("POST", path, seen["body"], key="fix", version=version)
    assert (status, retried) == (200, seen["corrected"])
    status, refused = me.send("POST", path, {"text": "I hate coffee"}, key="fix", version=version)
    assert status == 422 and refused["message"].startswith(REUSED), refused
    _assert_unchanged(me, seen["note"]["id"], seen["corrected"], seen["other"])


def _assert_unchanged(me: Caller, note_id: str, corrected: Any, other: Any) -> None:
    assert me.get(note_id) == (200, corrected)
    assert me.get(other["id"]) == (200, other)
    _, listed = me.send("GET", "/notes")
    assert not [n for n in listed if "hail" in n["text"]], listed


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str, Memory]]:
    """One ``remem serve``, a host token for the member's DMs, and the owner's Memory on
    the same data (another process, as an admin's CLI would be)."""
    data = tmp_path_factory.mktemp("replay") / "data"
    with Memory.open(data) as admin, serve(data) as server:
        yield server, host_token(admin), admin


def host_token(admin: Memory) -> str:
    """A host token for the member's DMs (``remem tokens create``, in this process)."""
    return create_token(admin.backend, "bot", agents=[AGENT], channels=["discord:*"], actors=["*"])


def test_a_replay_answers_as_a_read_by_the_caller_now(
    service: tuple[Server, str, Memory],
) -> None:
    server, token, admin = service
    for me in callers(server, token):
        replays_answer_as_reads(me, admin)


def test_a_key_binds_one_request_with_a_null_run_id_in_every_process(
    service: tuple[Server, str, Memory],
) -> None:
    server, token, _ = service
    pair = callers(server, token, run=None)
    seen = [keys_bind_one_request(me) for me in pair]
    with serve(server.data) as another:
        for me, before in zip(pair, seen, strict=True):
            me.base = another.url
            keys_still_bind(me, before)

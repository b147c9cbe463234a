"""Member links and sessions: minted in DMs only, stored hashed, single-use, expiring;
the session cookie's attributes and its sign-out; ``remem serve``'s link options."""

from __future__ import annotations

import http.client
import subprocess
import sys
import threading
import urllib.parse
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, request, serve
from remem import HostPrincipal, Memory, Role, RunContext
from remem.app.commands import ASK_IN_DM
from remem.app.member_links import (
    LINKS,
    SESSIONS,
    LinkSettings,
    exchange_link,
    session_principal,
)
from remem.app.principal import MemberSession
from remem.errors import Denied, InvalidInput, Unauthenticated
from remem.testing.clock import FakeClock

AGENT = "yuko"
DM = RunContext.dm(AGENT, "discord:dm-7", "discord:7")


def exchange(server: Server, token: str, origin: str | None = None) -> tuple[int, dict[str, str]]:
    status, headers, _ = request(
        server, "POST", "/pad/session", {"token": token}, Origin=origin or server.url, Remem_Pad="1"
    )
    return status, headers


def files_holding(root: Path, secret: str) -> list[str]:
    return [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and secret.encode() in p.read_bytes()
    ]


def test_links_and_sessions_are_single_use_and_stored_hashed(tmp_path: Path) -> None:
    with serve(tmp_path / "data") as server:
        token = server.token("--name", "bot", "--agent", AGENT, "--channel", "*", "--actor", "*")
        with Memory.open(server.url, token=token) as host:
            link = host.member_link(DM)
            assert link.url == f"{server.url}/pad#token={link.token}"
            status, headers = exchange(server, link.token)
            assert status == 201
            cookie = headers["set-cookie"]
            session = cookie.split(";")[0].split("=", 1)[1]
            parts = [p.strip() for p in cookie.split(";")]
            assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(parts)
            assert "Secure" not in parts  # plain http here (see the TLS test below)
            assert exchange(server, link.token)[0] == 401  # used
            status, _, body = request(server, "GET", "/pad/session", Cookie=f"remem_pad={session}")
            assert status == 200 and body["member"] == DM.actor and body["channel"] == DM.channel
            # Neither token is stored anywhere under the data directory: only their hashes.
            assert files_holding(server.data, link.token) == []
            assert files_holding(server.data, session) == []
            # Signing out ends the session.
            status, headers, _ = request(
                server, "DELETE", "/pad/session", Cookie=f"remem_pad={session}",
                Origin=server.url, Remem_Pad="1",
            )  # fmt: skip
            assert status == 200 and "Max-Age=0" in headers["set-cookie"]
            status, _, _ = request(
                server, "GET", "/v1/agents/yuko/notes", Cookie=f"remem_pad={session}"
            )
            assert status == 401


def test_links_and_sessions_expire(tmp_path: Path) -> None:
    clock = FakeClock()
    mem = Memory.open(tmp_path / "data", clock=clock, embedder=None)
    settings = LinkSettings(lifetime=timedelta(minutes=5), session_lifetime=timedelta(minutes=20))
    mem.link_settings = settings
    late = mem.member_link(DM)
    assert late.expires_at == clock() + timedelta(minutes=5)
    clock.advance(minutes=5)
    with pytest.raises(Unauthenticated):
        exchange_link(mem.backend, late.token, clock(), settings)
    link = mem.member_link(DM)  # minting removes the expired record
    assert len(mem.backend.record_keys(LINKS)) == 1
    grant = exchange_link(mem.backend, link.token, clock(), settings)
    assert grant.principal == MemberSession(DM.actor, AGENT, DM.channel)
    assert session_principal(mem.backend, grant.token, clock() + timedelta(minutes=19))
    with pytest.raises(Unauthenticated):
        session_principal(mem.backend, grant.token, clock() + timedelta(minutes=20))
    clock.advance(minutes=21)
    mem.member_link(DM)
    assert mem.backend.record_keys(SESSIONS) == []
    mem.close()


def test_of_two_racing_exchanges_one_wins(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path / "data", embedder=None)
    for _ in range(5):
        link = mem.member_link(DM)
        outcomes: list[str] = []

        def use(token: str = link.token, out: list[str] = outcomes) -> None:
            try:
                exchange_link(mem.backend, token, mem.clock(), LinkSettings())
                out.append("won")
            except Unauthenticated:
                out.append("401")

        threads = [threading.Thread(target=use) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["401", "401", "401", "won"]
    mem.close()


def test_memory_command_answers_with_a_link_in_a_dm_only(tmp_path: Path) -> None:
    mem = Memory.open(tmp_path / "data", embedder=None)
    mem.link_settings = LinkSettings("https://memory.example.com/")
    group = RunContext.group(AGENT, "discord:general", DM.actor)
    reply = mem.command(group, "/memory")
    assert reply is not None and reply.text == ASK_IN_DM and "token" not in reply.text
    assert mem.backend.record_keys(LINKS) == []  # nothing minted
    with pytest.raises(Denied) as error:
        mem.member_link(group)
    assert error.value.rule == "member_link_dm_only"
    reply = mem.command(DM, "show my memory")
    assert reply is not None and "https://memory.example.com/pad#token=" in reply.text
    assert len(mem.backend.record_keys(LINKS)) == 1
    with pytest.raises(InvalidInput):
        LinkSettings("ftp://x")
    with pytest.raises(InvalidInput):
        LinkSettings(lifetime=timedelta(days=2))
    mem.close()


def test_serve_options_set_the_links_address_lifetime_and_secure_cookie(tmp_path: Path) -> None:
    public = "https://memory.example.com"
    with serve(tmp_path / "data", "--public-url", public, "--link-minutes", "3") as server:
        token = server.token("--name", "bot", "--agent", AGENT, "--channel", "*", "--actor", "*")
        with Memory.open(server.url, token=token) as host:
            link = host.member_link(DM)
            assert link.url.startswith(f"{public}/pad#token=")
            now = host.remember(DM, "Prefers tea.").created_at
            assert timedelta(minutes=2) < link.expires_at - now <= timedelta(minutes=3)
            status, headers = exchange(server, link.token, origin=public)
            assert status == 201 and "Secure" in headers["set-cookie"]
    bad = subprocess.run(
        [sys.executable, "-m", "remem.cli", "serve", "--data", str(tmp_path / "d"),
         "--public-url", "memory.example.com"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "public URL" in bad.stderr and "Traceback" not in bad.stderr


def get_raw(server: Server, path: str) -> tuple[int, http.client.HTTPResponse, bytes]:
    url = urllib.parse.urlsplit(server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, response, body


def test_the_page_and_its_files(tmp_path: Path) -> None:
    with serve(tmp_path / "data") as server:
        for path in ("/pad", "/pad/static/pad.js", "/pad/static/pad.css"):
            status, response, body = get_raw(server, path)
            assert status == 200 and body
            assert "script-src 'self'" in response.getheader("content-security-policy", "")
            assert response.getheader("x-content-type-options") == "nosniff"
            assert response.getheader("cache-control") == "no-store"
        for bad in ("/pad/static/..%2Fpad.py", "/pad/static/pad.py", "/pad/static/.hidden.js"):
            assert get_raw(server, bad)[0] == 404


def test_the_page_script_never_parses_text_as_html() -> None:
    import remem.http.pad as pad

    script = (pad.STATIC / "pad.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script, sink
    page = (pad.STATIC / "pad.html").read_text()
    assert "<script>" not in page and "style=" not in page and "http" not in page.split("<body>")[1]


SESSION = MemberSession(DM.actor or "", AGENT, DM.channel or "")
HOST = HostPrincipal((AGENT,), ("discord:*",), ("*",), Role.ADMIN, frozenset({Role.CRON}))

ADMIN_DM = RunContext.dm(AGENT, "discord:dm-8", "discord:8", role=Role.ADMIN)
GROUP = RunContext.group(AGENT, "discord:general", DM.actor or "")
ADMIN_GROUP = RunContext.group(AGENT, "discord:general", "discord:8", role=Role.ADMIN)
UNPAIRED = RunContext.dm(AGENT, "discord:dm-9", "discord:9", role=Role.UNPAIRED)
CRON = RunContext.system(AGENT, Role.CRON)
TASK = RunContext.task(AGENT, "discord:general")
DM_ONLY, FROM_SESSION = "member_link_dm_only", "member_link_from_session"

# fmt: off
#: Who may mint a member link, as a table: (who, envelope, whose view calls, rule or ok).
LINK_TABLE: list[tuple[str, RunContext, Any, str]] = [
    ("member in their DM",  DM,                     None,    "ok"),
    ("admin in their DM",   ADMIN_DM,               None,    "ok"),
    ("host's view, DM",     DM,                     HOST,    "ok"),
    ("member in a group",   GROUP,                  None,    DM_ONLY),
    ("admin in a group",    ADMIN_GROUP,            HOST,    DM_ONLY),
    ("owner run",           RunContext.owner(AGENT), None,   DM_ONLY),
    ("cron run",            CRON,                   HOST,    DM_ONLY),
    ("task run",            TASK,                   None,    DM_ONLY),
    ("unpaired DM",         UNPAIRED,               None,    "unpaired"),
    ("member session",      DM,                     SESSION, FROM_SESSION),
]
# fmt: on


@pytest.mark.parametrize(
    ("who", "ctx", "principal", "outcome"), LINK_TABLE, ids=[r[0] for r in LINK_TABLE]
)
def test_who_may_mint_a_member_link(
    tmp_path: Path, who: str, ctx: RunContext, principal: Any, outcome: str
) -> None:
    with Memory.open(tmp_path / "data", embedder=None) as mem:
        view = mem if principal is None else mem.for_principal(principal)
        if outcome == "ok":
            link = view.member_link(ctx)
            assert (link.member, link.channel) == (ctx.actor, ctx.channel)
            assert mem.backend.record_keys(LINKS) != []
            return
        with pytest.raises(Denied) as error:
            view.member_link(ctx)
        assert error.value.rule == outcome, who
        assert mem.backend.record_keys(LINKS) == []

"""The member wall: row-level security under ``remem.user`` and ``remem.channel`` on the
member read path, tested as the application role (a superuser bypasses RLS), and the
service's check that a scope-resolution bug cannot hand a member another member's note."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from http_server import Server
from postgres.test_pg_two_hosts import serve_pg
from remem import Memory, RunContext
from remem.app.kernel import Kernel
from remem.app.principal import MemberSession
from remem.cli import main
from remem.errors import NotFound
from remem.http.member_wall import check_member_result
from remem.recall import engine as recall_engine
from remem.store.base import MemberWall
from remem.store.postgres.backend import PgBackend
from remem.store.postgres.connect import connect
from remem.testing import postgres_server
from test_member_links import exchange, request

AGENT, OTHER_AGENT = "alice_bot", "bob_bot"
M, N = MemberSession("m", AGENT, "dm-m"), MemberSession("n", AGENT, "dm-n")


def _dm(session: MemberSession) -> RunContext:
    return RunContext.dm(session.agent, session.channel, session.member)


@pytest.fixture(scope="module")
def notes(app_db: tuple[str, str]) -> Iterator[dict[str, str]]:
    """Notes of every kind of owner, written through the service as the application role:
    name -> note id."""
    _, app_url = app_db
    ids = {}
    with Memory.open(app_url) as mem:
        owner = RunContext.owner(AGENT)
        for who in (M, N):
            ctx = _dm(who)
            ids[f"{who.member}_user"] = mem.remember(
                ctx, f"{who.member} likes tea.", scope="user"
            ).id
            ids[f"{who.member}_dm"] = mem.remember(ctx, "We talk on Fridays.", scope="channel").id
        ids["agent"] = mem.remember(owner, "The office opens at nine.", scope="agent").id
        ids["group"] = mem.remember(
            RunContext.group(AGENT, "team", "m"), "The team ships on Mondays.", scope="channel"
        ).id
        # An agent-wide note the owner then moves into n's personal scope: every row of it
        # must follow (its Remembered row said "agent", which m may read).
        moved = mem.remember(owner, "The spare key is under the mat.", scope="agent").id
        mem.move(owner, moved, scope="user", scope_id="n")
        ids["moved_to_n"] = moved
        mem.pin(owner, ids["m_user"])  # a later event of m's note, with no scope of its own
        mem.set_channel_policy(owner, "team", inferred="off")  # an event about no note
        ids["other_agent_m"] = mem.remember(
            RunContext.dm(OTHER_AGENT, "dm-m", "m"), "m is on bob_bot too.", scope="user"
        ).id
    yield ids


def _events(conn: Any) -> list[dict[str, Any]]:
    cur = conn.execute("SELECT * FROM remem_events")
    names = [c.name for c in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def test_under_an_agent_and_a_member_events_return_only_that_members_rows(
    app_db: tuple[str, str], notes: dict[str, str]
) -> None:
    _, app_url = app_db
    backend = PgBackend(app_url)  # the application role, signing its scopes

    def scoped(agent: str, user: str, channel: str) -> list[dict[str, Any]]:
        with backend.pool.scoped(agent, user=user, channel=channel) as conn:
            return _events(conn)

    with connect(app_url, autocommit=True) as conn:
        assert conn.execute(
            "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone() == (False, False)
    try:
        every = scoped(AGENT, "", "")  # the agent policy alone: all of alice_bot's rows
        assert {r["agent"] for r in every} == {AGENT}
        assert {r["note_id"] for r in every} >= {notes[k] for k in notes if k != "other_agent_m"}
        assert any(r["note_id"] is None for r in every)  # the channel policy's event
        for who, own in ((M, {"m_user", "m_dm"}), (N, {"n_user", "n_dm", "moved_to_n"})):
            rows = scoped(AGENT, who.member, who.channel)
            assert {r["agent"] for r in rows} == {AGENT}
            assert {r["note_id"] for r in rows} == {notes[k] for k in own | {"agent"}}
            # Every row of those notes (the pin of m's note included), and no other row.
            assert len(rows) == sum(
                1 for r in every if r["note_id"] in {x["note_id"] for x in rows}
            )
        assert scoped("", "m", "dm-m") == []  # an empty agent still admits nothing
        rows = scoped(OTHER_AGENT, "m", "dm-m")
        assert {r["note_id"] for r in rows} == {notes["other_agent_m"]}
    finally:
        backend.close()


def test_the_backend_answers_which_notes_a_member_may_read(
    app_db: tuple[str, str], notes: dict[str, str]
) -> None:
    _, app_url = app_db
    with Memory.open(app_url) as mem:
        backend = mem.backend
        assert isinstance(backend, MemberWall)
        every = set(notes.values())
        assert backend.readable_notes(AGENT, "m", "dm-m", every) == {
            notes["m_user"],
            notes["m_dm"],
            notes["agent"],
        }
        assert backend.readable_notes(AGENT, "n", "dm-n", every) == {
            notes["n_user"],
            notes["n_dm"],
            notes["moved_to_n"],
            notes["agent"],
        }
        assert backend.readable_notes(AGENT, "n", "dm-n", []) == set()


def test_the_wall_refuses_another_members_note_that_a_scope_bug_let_through(
    app_db: tuple[str, str],
    notes: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, app_url = app_db
    with Memory.open(app_url) as mem:
        view, ctx = mem.for_principal(M), _dm(M)
        fine = view.get(ctx, notes["m_user"])
        assert check_member_result(mem.backend, M, "get", fine) is fine
        with pytest.raises(NotFound):
            view.get(ctx, notes["n_user"])  # scope resolution, the first wall, holds
        # A bug in scope resolution: every note readable by everyone.
        monkeypatch.setattr(Kernel, "can_read", lambda self, state, note: True)
        leaked = view.get(ctx, notes["n_user"])
        assert leaked.text == "n likes tea."  # the projection alone would hand it over
        caplog.set_level(logging.ERROR, logger="remem.http.wall")
        with pytest.raises(NotFound, match=notes["n_user"]):
            check_member_result(mem.backend, M, "get", leaked)
        listed = view.list(ctx)
        assert notes["n_dm"] in {n.id for n in listed}
        walled = check_member_result(mem.backend, M, "list", listed)
        assert {n.id for n in walled} == {notes[k] for k in ("m_user", "m_dm", "agent")}
        with pytest.raises(NotFound):
            check_member_result(mem.backend, M, "history", view.history(ctx, notes["n_dm"]))
        # The same kind of bug in recall's scopes: every scope of the agent is eligible.
        monkeypatch.setattr(recall_engine, "eligible_scopes", lambda ctx, state: list(state.scopes))
        recall = view.recall(ctx, "tea")
        own = {notes[k] for k in ("m_user", "m_dm", "agent")}
        assert {n.id for n in recall.notes} - own  # other members' notes recalled
        with pytest.raises(NotFound):
            check_member_result(mem.backend, M, "recall", recall)
    hits = [r.getMessage() for r in caplog.records if r.name == "remem.http.wall"]
    assert len(hits) == 4 and all('"member":"m"' in h for h in hits)
    assert notes["n_user"] in hits[0] and "likes tea" not in "".join(hits)


def test_upgrade_from_v2_gives_every_note_row_its_current_scope(pg_server: str) -> None:
    """Upgraded by a plain role that owns the tables (FORCE row-level security applies to
    it: the fill must lift it for its one statement), checked as the superuser."""
    role = f"remem_owner_{secrets.token_hex(4)}"
    with postgres_server.fresh_database(pg_server, schema=False) as admin_url:
        with connect(admin_url, autocommit=True) as admin:
            admin.execute(f'CREATE ROLE "{role}" LOGIN')
            admin.execute(f'GRANT CREATE ON SCHEMA public TO "{role}"')
        url = f"postgresql://{role}@{admin_url.split('@', 1)[1]}"
        assert CliRunner().invoke(main, ["--data", url, "db", "upgrade"]).exit_code == 0
        owner = RunContext.owner(AGENT)
        with Memory.open(url) as mem:
            kept = mem.remember(_dm(M), "m likes tea.", scope="user").id
            moved = mem.remember(owner, "The spare key is under the mat.", scope="agent").id
            mem.move(owner, moved, scope="user", scope_id="n")
            mem.set_channel_policy(owner, "team", inferred="off")
        with connect(admin_url, autocommit=True) as admin:  # a v2 database: no note scopes
            admin.execute("UPDATE remem_events SET note_scope = NULL, note_scope_id = NULL")
            admin.execute(
                "CREATE OR REPLACE FUNCTION remem_schema_version() RETURNS integer "
                "LANGUAGE sql AS 'SELECT 2'"
            )
        result = CliRunner().invoke(main, ["--data", url, "db", "upgrade"])
        assert "schema at v4 (was 2)" in result.output, result.output
        with connect(admin_url, autocommit=True) as admin:
            rows = admin.execute(
                "SELECT note_id, note_scope, note_scope_id FROM remem_events"
            ).fetchall()
            forced = admin.execute(
                "SELECT relforcerowsecurity FROM pg_class WHERE relname = 'remem_events'"
            ).fetchone()
    with connect(pg_server, autocommit=True) as admin:
        admin.execute(f'DROP ROLE IF EXISTS "{role}"')
    assert forced == (True,)  # forced again after the fill
    assert {(r[1], r[2]) for r in rows if r[0] == kept} == {("user", "m")}
    assert {(r[1], r[2]) for r in rows if r[0] == moved} == {("user", "n")}
    assert len([r for r in rows if r[0] == moved]) == 2  # its Remembered row followed
    assert {(r[1], r[2]) for r in rows if r[0] is None} == {(None, None)}


def test_a_member_session_on_a_real_server_gets_its_notes_through_the_wall(
    app_db: tuple[str, str], notes: dict[str, str], tmp_path: Path
) -> None:
    _, app_url = app_db
    with Memory.open(app_url) as mem:
        link = mem.member_link(_dm(M))
    with serve_pg(app_url, tmp_path) as (base, proc):
        server = Server(base, tmp_path, proc, tmp_path)
        status, headers = exchange(server, link.token)
        assert status == 201
        cookie = headers["set-cookie"].split(";")[0]
        status, _, body = request(server, "GET", f"/v1/agents/{AGENT}/notes", Cookie=cookie)
        assert status == 200
        assert {n["id"] for n in body} == {notes[k] for k in ("m_user", "m_dm", "agent")}
        for key, want in (("m_user", 200), ("agent", 200), ("n_user", 404), ("n_dm", 404)):
            path = f"/v1/agents/{AGENT}/notes/{notes[key]}"
            assert request(server, "GET", path, Cookie=cookie)[0] == want, key
        status, _, body = request(
            server, "POST", f"/v1/agents/{AGENT}/recall", {"query": "tea"},
            Cookie=cookie, Origin=base, Remem_Pad="1",
        )  # fmt: skip
        assert status == 200 and notes["m_user"] in {n["id"] for n in body["notes"]}
    logs = "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))
    assert "remem.http.wall" not in logs and '"wall":"member"' not in logs

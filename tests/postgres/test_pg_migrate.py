"""``remem migrate --from DIR --to postgresql://``: an embedded store copied and verified;
the Memory on PostgreSQL serves the same notes (ids, versions, history, erased content
still erased)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from remem import Memory, RunContext
from remem.cli import main
from remem.http import tokens
from remem.testing import postgres_server


def test_migrate_copies_an_embedded_store_and_verifies_it(pg_server: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = RunContext.owner("yuko")
    with Memory.open(data) as mem:
        kept = mem.remember(ctx, "The deploy window is Friday.", scope="agent")
        kept = mem.correct(ctx, kept.id, "The deploy window is Thursday.", if_version=1)
        gone = mem.remember(ctx, "My old phone number is 555-0100.", scope="agent")
        mem.forget(ctx, gone.id)
        mem.compact(ctx)  # a hole in the seqs, an erased eid
        mem.set_rule(ctx, "tone", "Be brief.")
        mem.recall(ctx, "deploy")
        token = tokens.create_token(mem.backend, "bot", agents=["yuko"], max_role="admin")
        before = [(ev.seq, ev.eid) for ev in mem.history(ctx, kept.id)]
    with postgres_server.fresh_database(pg_server) as url:
        result = CliRunner().invoke(main, ["migrate", "--from", str(data), "--to", url])
        assert result.exit_code == 0, result.output
        assert "verified" in result.output and "tokens: 1 records" in result.output
        with Memory.open(url) as mem:
            note = mem.get(ctx, kept.id)
            assert (note.text, note.version) == ("The deploy window is Thursday.", 2)
            assert [(ev.seq, ev.eid) for ev in mem.history(ctx, kept.id)] == before
            assert mem.rules(ctx) == {"tone": "Be brief."}
            assert "555-0100" not in repr(mem.list(ctx, status=None))
            assert tokens.authenticate(mem.backend, token)[0] == "bot"
            later = mem.remember(ctx, "After the move.", scope="agent")
            assert mem.history(ctx, later.id)[0].seq > max(s for s, _ in before)
        again = CliRunner().invoke(main, ["migrate", "--from", str(data), "--to", url])
        assert again.exit_code != 0 and "already has events" in again.output


def test_migrate_refuses_what_is_not_a_data_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["migrate", "--from", str(tmp_path), "--to", "postgresql://x@127.0.0.1/y"]
    )
    assert result.exit_code != 0 and "not a remem data directory" in result.output

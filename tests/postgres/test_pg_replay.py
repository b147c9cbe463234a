"""Results given again must be allowed again, on PostgreSQL (issue 20, items 1 and 2): the
scenarios of ``test_http_replay.py`` against ``remem serve`` processes on one database,
as the application role (row-level security on; the member wall checks the page
session's results)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from http_server import Server
from postgres.test_pg_two_hosts import serve_pg
from remem import Memory
from test_http_replay import (
    callers,
    host_token,
    keys_bind_one_request,
    replays_answer_as_reads,
)


@pytest.fixture(scope="module")
def service(
    app_db: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, str, Memory]]:
    """One ``remem serve`` on the database, a host token, and the owner's Memory."""
    _, url = app_db
    logs = tmp_path_factory.mktemp("pg-replay")
    with Memory.open(url) as admin, serve_pg(url, logs) as (base, proc):
        yield Server(base, Path(), proc, logs), host_token(admin), admin


def test_a_replay_answers_as_a_read_by_the_caller_now_on_postgres(
    service: tuple[Server, str, Memory],
) -> None:
    server, token, admin = service
    host, page = callers(server, token)
    replays_answer_as_reads(host, admin)
    # The member wall refuses a page session every note outside its own DM and person,
    # the channel it stewards included: no stewardship here.
    replays_answer_as_reads(page, admin, steward=False)


def test_a_key_binds_one_request_with_a_null_run_id_on_postgres(
    service: tuple[Server, str, Memory],
) -> None:
    """(Across processes the database is the record; ``test_http_replay`` starts a second
    process on the JSONL store, whose lookup of a key reads the log as it opens.)"""
    server, token, _ = service
    for me in callers(server, token, run=None):
        keys_bind_one_request(me)

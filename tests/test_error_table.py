"""One error table for every adapter (remem.error_table) and one error body."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

import remem.errors
from remem import Conflict, Denied, Memory, NotFound, Rejected, RememError, RunContext
from remem.cli import EXIT_CODES
from remem.cli import exit_code as cli_exit_code
from remem.core.ids import new_id
from remem.core.model import Note
from remem.error_table import (
    ERROR_TABLE,
    error_body,
    error_body_schema,
    http_status,
    mapping_for,
    rpc_code,
)
from remem.schema import from_json


def every_error_class() -> list[type[RememError]]:
    out: list[type[RememError]] = [RememError]
    for cls in out:
        out.extend(c for c in cls.__subclasses__() if c not in out)
    return out


def test_the_table_names_every_error_class() -> None:
    assert set(every_error_class()) - set(ERROR_TABLE) == set()


def test_statuses_are_those_design_promises() -> None:
    e = remem.errors
    expected = {
        e.Denied: 403,
        e.NotFound: 404,
        e.Conflict: 409,
        e.Rejected: 422,
        e.InvalidInput: 422,
        e.StoreError: 503,
        e.CorruptLog: 503,
        e.UnsupportedLog: 503,
        e.ConfigError: 500,
    }
    for cls, status in expected.items():
        assert ERROR_TABLE[cls].http_status == status, cls


def test_json_rpc_codes_are_distinct_per_meaning_and_in_the_server_range() -> None:
    by_meaning = {}
    for cls, row in ERROR_TABLE.items():
        assert row.rpc_code == -32602 or -32099 <= row.rpc_code <= -32000, cls
        by_meaning.setdefault(row.rpc_code, set()).add(row.http_status)
    assert all(len(statuses) == 1 for statuses in by_meaning.values())


def test_cli_exit_codes_come_from_the_table_and_are_unchanged() -> None:
    e = remem.errors
    today = {
        e.InvalidInput: 2,
        e.Denied: 3,
        e.Rejected: 4,
        e.NotFound: 5,
        e.Conflict: 6,
        e.ConfigError: 7,
        e.StoreError: 8,
        e.CorruptLog: 8,
        e.UnsupportedLog: 8,
        e.RememError: 1,
    }
    for cls, code in today.items():
        assert cli_exit_code(cls("x") if cls not in (Denied, Rejected) else cls("x", "r")) == code
        assert mapping_for(cls).exit_code == code
    assert dict(EXIT_CODES) == {cls: row.exit_code for cls, row in ERROR_TABLE.items()}


def test_an_unlisted_subclass_takes_its_base_row() -> None:
    class Later(remem.errors.StoreError):
        code = "later"

    assert mapping_for(Later("x")) == ERROR_TABLE[remem.errors.StoreError]
    del Later


def bodies(mem: Memory) -> list[tuple[RememError, dict[str, Any]]]:
    owner = RunContext.owner("errs")
    member = RunContext.dm("errs", "discord:dm", "discord:1")
    note = mem.remember(owner, "Uses metric units.", scope="agent")
    mem.correct(owner, note.id, "Uses metric units, mostly.")
    out = []
    for call in (
        lambda: mem.remember(member, "Everyone uses metric.", scope="agent"),
        lambda: mem.get(member, new_id("note")),
        lambda: mem.forget(owner, note.id, if_version=1),
        lambda: mem.remember(owner, "x" * 100_000, scope="agent"),
        lambda: mem.recall(owner, 5),  # type: ignore[arg-type]
    ):
        with pytest.raises(RememError) as info:
            call()
        out.append((info.value, error_body(info.value)))
    return out


def test_error_bodies_validate_and_carry_rule_reason_current(mem: Memory) -> None:
    schema = error_body_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    seen = {}
    for error, body in bodies(mem):
        jsonschema.validate(json.loads(json.dumps(body)), schema)
        assert (body["code"], body["message"]) == (error.code, error.message)
        seen[type(error)] = body
    assert seen[Denied]["rule"] == "member_agent_scope"
    assert "reason" not in seen[Denied] and "current" not in seen[Denied]
    assert seen[Rejected]["reason"] == "too_long"
    assert set(seen[NotFound]) == {"code", "message"}
    current = from_json(Note, seen[Conflict]["current"])
    assert (current.version, current.text) == (2, "Uses metric units, mostly.")
    assert http_status(Conflict("x")) == 409


def test_conflict_carries_the_current_note(mem: Memory) -> None:
    owner = RunContext.owner("errs")
    note = mem.remember(owner, "Uses metric units.", scope="agent")
    pinned = mem.pin(owner, note.id)
    with pytest.raises(Conflict) as info:
        mem.disable(owner, note.id, if_version=note.version)
    assert info.value.current == pinned == mem.get(owner, note.id)
    assert rpc_code(info.value) == ERROR_TABLE[Conflict].rpc_code

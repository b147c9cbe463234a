"""Schemathesis over ``/openapi.json`` of a real ``remem serve`` (bounded examples): no
5xx, no undocumented status, responses match their documented schemas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
hypothesis = pytest.importorskip("hypothesis")

from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from http_server import Server, serve  # noqa: E402
from remem import RunContext  # noqa: E402
from remem.errors import RememError  # noqa: E402


@pytest.fixture(scope="module")
def st_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("st") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def st_token(st_server: Server) -> str:
    return st_server.token("--name", "fuzz", "--owner")


#: What the issue asks of the schema: no 5xx, no undocumented status, responses that match
#: their schemas. (Positive-data acceptance is left out: the library checks more than a
#: schema can say, e.g. an owner run needs an explicit scope, and answers 422.)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def _envelope(agent: object) -> str | None:
    """An owner envelope for the path's agent when it is a valid id (so the fuzzing reaches
    the routes' own checks), else None (the generated header stays)."""
    try:
        return json.dumps(RunContext.owner(str(agent)).to_json())
    except RememError:
        return None


def test_the_api_matches_its_schema(st_server: Server, st_token: str) -> None:
    """Every operation, a few generated requests each, every default check."""
    api = schemathesis.openapi.from_url(st_server.url + "/openapi.json")
    # The event stream never ends by itself (tests/test_http_events.py covers it).
    operations = [result.ok() for result in api.get_all_operations()]
    operations = [op for op in operations if op.definition.raw.get("operationId") != "events"]
    assert len(operations) >= 36

    def check(case: Any) -> None:
        headers = {"Authorization": f"Bearer {st_token}"}
        agent = (case.path_parameters or {}).get("agent")
        envelope = _envelope(agent) if agent is not None else None
        if envelope is not None:
            headers["Remem-Run"] = envelope
        case.call_and_validate(headers=headers, checks=CHECKS)

    for operation in operations:
        run = hypothesis.given(case=operation.as_strategy())(check)
        hypothesis.settings(
            max_examples=10,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(hypothesis.HealthCheck),
        )(run)()

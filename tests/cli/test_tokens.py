"""``remem tokens create|ls|revoke`` through the CLI, and what a token authenticates as."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from remem import HostPrincipal, Memory, OwnerPrincipal, Role, Unauthenticated
from remem.cli import main
from remem.errors import InvalidInput
from remem.http.tokens import authenticate
from remem.store.open import open_backend


def run(data: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--data", str(data), "tokens", *args])
    return result.exit_code, result.output


def test_create_prints_the_token_once_and_ls_never_shows_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out = run(
        data,
        "create",
        "--name",
        "bot",
        "--agent",
        "yuko",
        "--channel",
        "discord:*",
        "--channel",
        "slack:*",
        "--actor",
        "*",
        "--max-role",
        "admin",
        "--system",
        "cron,sop",
        "--json",
    )
    assert code == 0, out
    token = json.loads(out)["token"]
    code, listing = run(data, "ls", "--json")
    assert code == 0 and token not in listing
    (info,) = json.loads(listing)
    assert info["channels"] == ["discord:*", "slack:*"] and info["system"] == ["cron", "sop"]
    backend = open_backend(data)
    name, principal = authenticate(backend, token)
    assert name == "bot" and isinstance(principal, HostPrincipal)
    assert principal.max_role is Role.ADMIN and principal.system == {Role.CRON, Role.SOP}
    assert principal.channels == ("discord:*", "slack:*")
    assert run(data, "revoke", "bot")[0] == 0
    with pytest.raises(Unauthenticated):
        authenticate(backend, token)
    backend.close()


def test_an_owner_token_has_every_grant_and_takes_no_patterns(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out = run(data, "create", "--name", "ops", "--owner", "--json")
    assert code == 0, out
    backend = open_backend(data)
    assert isinstance(authenticate(backend, json.loads(out)["token"])[1], OwnerPrincipal)
    backend.close()
    assert run(data, "create", "--name", "ops2", "--owner", "--agent", "yuko")[0] == 2


@pytest.mark.parametrize(
    "args",
    [
        ("--name", "bad_name", "--agent", "yuko"),  # '_' separates the name in the token
        ("--name", "nobody"),  # no agent pattern
        ("--name", "x", "--agent", "yuko", "--system", "owner"),
        ("--name", "x", "--agent", "bad agent"),
    ],
)
def test_bad_token_requests_are_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, out = run(tmp_path / "data", "create", *args)
    assert code == 2, out


def test_a_name_in_use_and_an_unknown_revoke(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run(data, "create", "--name", "bot", "--agent", "yuko")[0] == 0
    code, out = run(data, "create", "--name", "bot", "--agent", "yuko")
    assert code == 2 and "revoke it first" in out
    assert run(data, "revoke", "nobody")[0] == 5


def test_memory_open_takes_a_token_only_with_a_url(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        Memory.open("http://127.0.0.1:1")  # no token
    with pytest.raises(InvalidInput):
        Memory.open(tmp_path / "data", token="rmm_x_y")
    with pytest.raises(InvalidInput):
        Memory.open("http://127.0.0.1:1", token="t", embedder=None)  # the server's setting

"""The Memory-level contract suite through the HTTP client, against a real ``remem serve``
process on 127.0.0.1 (started with ``--test-clock`` so each case's clock travels with
its requests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime

import pytest

from http_server import Server, serve
from remem import Memory, Role
from remem.client import RemoteMemory
from remem.errors import Denied
from remem.testing.memory_contract import MemoryContract
from remem.testing.memory_world import DENIED, OK, World, case, raises


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("http") / "data", "--test-clock") as srv:
        yield srv


@pytest.fixture(scope="module")
def owner_token(server: Server) -> str:
    return server.token("--name", "contract-owner", "--owner")


class TestHttpMemory(MemoryContract):
    """Every case's Memory is a client of one server, with an owner token."""

    @pytest.fixture
    def memory_factory(
        self, server: Server, owner_token: str
    ) -> Callable[[Callable[[], datetime]], Memory]:
        return lambda clock: Memory(RemoteMemory(server.url, token=owner_token, test_clock=clock))

    @case("for_principal", OK, DENIED)
    def test_a_principals_view_admits_only_its_grants(
        self, memory_factory: Callable[[Callable[[], datetime]], Memory], server: Server
    ) -> None:
        """A remote Memory is already its token's view: a member-only host token is
        refused an admin's or an owner's envelope (for_principal itself is local only)."""
        with World(memory_factory) as w:
            token = server.token(
                "--name",
                f"h-{w.agent[-12:]}",
                "--agent",
                w.agent,
                "--channel",
                "*",
                "--actor",
                "*",
            )
            view = Memory.open(server.url, token=token)
            note = view.remember(w.dm(), "Prefers tea with lemon.", scope="user")
            assert w.mem.get(w.dm(), note.id) == note  # one store behind both
            assert raises(Denied, view.list, w.admin()).rule == "role_above_grant"
            assert raises(Denied, view.list, w.owner()).rule == "owner_not_granted"
            view.close()
            assert Role.MEMBER  # the token's ceiling (max-role member)

"""Shared by the member page's browser tests: a real ``remem serve`` and Debian's headless chromium
driven by Playwright's Python package.

Without ``/usr/bin/chromium`` the tests are skipped, unless ``REMEM_REQUIRE_BROWSER=1``
(``.ci/run`` sets it after installing chromium), when they fail. ``REMEM_SCREENSHOTS=1``
writes the screenshots into ``docs/`` (the README links them); otherwise they go to a
temporary directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, serve
from remem import Memory, RunContext

CHROMIUM = "/usr/bin/chromium"
AGENT = "yuko"
DOCS = Path(__file__).resolve().parents[2] / "docs"

if not Path(CHROMIUM).exists() and os.environ.get("REMEM_REQUIRE_BROWSER") != "1":
    pytest.skip(
        "no /usr/bin/chromium (apt-get install chromium; .ci/run does)", allow_module_level=True
    )
playwright = pytest.importorskip("playwright.sync_api")


@dataclass
class Pad:
    """The server, a host's client and the browser the tests share."""

    server: Server
    host: Memory
    browser: Any
    shots: Path

    def member(self, name: str) -> RunContext:
        """A DM turn of member ``discord:<name>`` (each test its own members)."""
        return RunContext.dm(AGENT, f"discord:dm-{name}", f"discord:{name}")

    def link(self, ctx: RunContext) -> str:
        """A member link, asked for the way a member asks: ``/memory`` in their DM."""
        reply = self.host.command(ctx, "/memory")
        assert reply is not None
        match = re.search(r"(http://\S+/pad#token=\S+)", reply.text)
        assert match, reply.text
        return match.group(1)

    def open(self, ctx: RunContext, *, width: int = 1000) -> Any:
        """A new browser context (its own cookies) on the member's page, loaded."""
        context = self.browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(self.link(ctx))
        page.wait_for_selector("#app:not([hidden])")
        page.wait_for_selector("#notes li, #empty:not([hidden])")
        return page

    def shot(self, page: Any, name: str) -> None:
        page.screenshot(path=str(self.shots / f"scratchpad-{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def pad(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pad]:
    shots = DOCS if os.environ.get("REMEM_SCREENSHOTS") == "1" else tmp_path_factory.mktemp("s")
    root = tmp_path_factory.mktemp("pad")
    with serve(root / "data") as server:
        token = server.token("--name", "bot", "--agent", AGENT, "--channel", "*", "--actor", "*")
        host = Memory.open(server.url, token=token)
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM)
            try:
                yield Pad(server, host, browser, shots)
            finally:
                browser.close()
                host.close()


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']}"
        for v in results.response["violations"]
        if v.get("impact") in ("serious", "critical")
    ]

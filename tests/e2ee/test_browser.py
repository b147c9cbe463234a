"""The page's side of encrypted DM memory (``remem/web/static/e2ee.js``) in real headless
Chromium (Playwright driving Debian's ``chromium``) against a real ``remem serve``:
interoperability with the bot's side (``remem.e2ee``) both ways on the shared vectors,
a canary written by the bot and by the page never reaching the server's files or logs,
a 409 race between page and bot, and a tampered, moved or replayed slot refused and an
oversized one re-clamped by the browser.

The test page and the module are served to the browser under the service's own origin
by Playwright's request routing (the scratchpad's static serving is another module's),
so the page's ``fetch`` reaches the real service as the scratchpad's would.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from http_server import Server, serve
from remem import Denied, Memory, RunContext
from remem.e2ee import MAX_FACT_CHARS, MAX_FACTS, DmMemory, encode_b64url, open_blob, seal, slot_key

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
AGENT = "yuko"
DM_KEY = bytes(range(100, 132))
HOST_ARGS = ("--agent", AGENT, "--channel", "discord:*", "--actor", "*", "--system", "cron")
MODULE = resources.files("remem").joinpath("web/static/e2ee.js").read_text(encoding="utf-8")
VECTORS: dict[str, Any] = json.loads(
    resources.files("remem").joinpath("e2ee_vectors.json").read_text(encoding="utf-8")
)
# The test page: loads the module and reads the slot key from the fragment at once.
PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>remem e2ee test page</title></head><body><main>e2ee</main>
<script type="module">
import * as e2ee from "/__e2ee__/e2ee.js";
window.e2ee = e2ee;
window.slotKey = e2ee.slotKeyFromFragment();
window.e2eeReady = true;
</script></body></html>"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("e2ee") / "data") as srv:
        yield srv


@pytest.fixture(scope="module")
def host(server: Server) -> Iterator[tuple[str, Memory]]:
    token = server.token("--name", "dm-bot", *HOST_ARGS)
    with Memory.open(server.url, token=token) as mem:
        yield token, mem


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert os.path.exists(CHROMIUM), "install Debian's chromium (.ci/run does)"
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def dm(thread: str, member: str = "discord:alice") -> RunContext:
    return RunContext.dm(AGENT, thread, member)


class Page:
    """One browser page (a fresh profile: its own localStorage) on the service's origin."""

    def __init__(self, browser: Any, server: Server) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.server = server
        self.statuses: list[int] = []
        self.page.on(
            "response", lambda r: self.statuses.append(r.status) if "/dm-slot" in r.url else None
        )
        self.page.route(
            "**/__e2ee__/index.html",
            lambda route: route.fulfill(status=200, content_type="text/html", body=PAGE),
        )
        self.page.route(
            "**/__e2ee__/e2ee.js",
            lambda route: route.fulfill(status=200, content_type="text/javascript", body=MODULE),
        )

    def open(self, fragment: str = "") -> None:
        self.page.goto(f"{self.server.url}/__e2ee__/index.html{fragment}")
        self.page.wait_for_function("window.e2eeReady === true")

    def js(self, code: str, arg: Any = None) -> Any:
        return self.page.evaluate(code, arg)

    def client(self, token: str, ctx: RunContext, key: bytes | None = None) -> None:
        """``window.client``: a DmSlotClient for ``ctx``'s thread with the host's token
        (the scratchpad sends its member session instead)."""
        self.js(
            """([agent, thread, token, run, key]) => {
              const slotKey = key ? window.e2ee.b64urlDecode(key) : window.slotKey;
              const headers = {Authorization: "Bearer " + token, "Remem-Run": run};
              const request = window.e2ee.slotRoute("", agent, headers);
              window.client = new window.e2ee.DmSlotClient({agent, thread, slotKey, request});
            }""",
            [AGENT, ctx.channel, token, json.dumps(ctx.to_json()), key and encode_b64url(key)],
        )

    def call(self, method: str, *args: Any) -> Any:
        """``window.client[method](...args)``: the result, or ``{"error": reason}``."""
        return self.js(
            """async ([method, args]) => {
              try { return await window.client[method](...args); }
              catch (e) { return {error: e.reason || String(e)}; }
            }""",
            [method, list(args)],
        )

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Page]:
    opened = Page(browser, server)
    yield opened
    opened.close()


def test_the_browser_agrees_with_every_vector(page: Page) -> None:
    page.open()
    result = page.js(
        """async (vectors) => {
          const e = window.e2ee, d = e.b64urlDecode, out = {ok: [], refused: [], clamped: []};
          for (const v of vectors.vectors) {
            const key = await e.deriveSlotKey(d(v.dm_key), v.thread);
            const ad = new TextDecoder().decode(e.associatedData(v.agent, v.thread, v.version));
            const blob = await e.seal(key, {...v, nonce: d(v.nonce)});
            const facts = await e.openBlob(key, v.blob, v);
            out.ok.push({slot_key: e.b64urlEncode(key), ad, blob, facts});
          }
          for (const v of vectors.refused) {
            try { await e.openBlob(d(v.slot_key), v.blob, v); out.refused.push("opened"); }
            catch (err) { out.refused.push(err.reason); }
          }
          for (const v of vectors.clamped) {
            out.clamped.push(await e.openBlob(d(v.slot_key), v.blob, v));
          }
          return out;
        }""",
        VECTORS,
    )
    for got, v in zip(result["ok"], VECTORS["vectors"], strict=True):
        assert got == {
            "slot_key": v["slot_key"],
            "ad": v["associated_data"],
            "blob": v["blob"],
            "facts": v["facts"],
        }, v["name"]
    assert result["refused"] == ["unauthentic"] * len(VECTORS["refused"])
    assert result["clamped"] == [v["facts"] for v in VECTORS["clamped"]]
    assert len(result["clamped"][0]) == MAX_FACTS


def test_python_and_the_browser_open_each_others_fresh_writes(page: Page) -> None:
    page.open()
    thread, agent = "matrix:!dm-é:example.org", "yuko"
    key = slot_key(DM_KEY, thread)
    facts = ["Chá ☕ written in the browser.", 'Quotes " and \\ and a\nnewline.']
    blob = page.js(
        """async ([key, agent, thread, facts]) =>
             window.e2ee.seal(window.e2ee.b64urlDecode(key), {agent, thread, version: 4, facts})""",
        [encode_b64url(key), agent, thread, facts],
    )
    assert open_blob(key, blob, agent=agent, thread=thread, version=4) == facts
    sealed = seal(key, agent=agent, thread=thread, version=5, facts=["Written by Python 🐍."])
    opened = page.js(
        """async ([key, blob, agent, thread]) => window.e2ee.openBlob(
             window.e2ee.b64urlDecode(key), blob, {agent, thread, version: 5})""",
        [encode_b64url(key), sealed, agent, thread],
    )
    assert opened == ["Written by Python 🐍."]


def files_text(*roots: Path) -> str:
    texts = []
    for root in roots:
        for path in [root] if root.is_file() else root.rglob("*"):
            if path.is_file():
                texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def test_canaries_by_the_bot_and_the_page_never_reach_the_server(
    page: Page, server: Server, host: tuple[str, Memory]
) -> None:
    token, mem = host
    thread = "discord:dm-canary"
    ctx = dm(thread)
    owner = Memory.open(server.url, token=server.token("--name", "owner", "--owner"))
    owner.set_channel_policy(RunContext.owner(AGENT), thread, e2ee=True)
    bot_canary, page_canary = "Canary-bot-5c1e likes quince.", "Canary-page-9d27 likes figs."
    with pytest.raises(Denied) as refused:  # plaintext is refused in the e2ee DM
        mem.remember(ctx, bot_canary)
    assert refused.value.rule == "e2ee_plaintext"
    bot = DmMemory(mem, ctx, DM_KEY)
    bot.remember(bot_canary)
    key = slot_key(DM_KEY, thread)
    page.open(f"#slot_key={encode_b64url(key)}")
    assert page.js("location.hash") == "" and "#" not in page.page.url  # gone at once
    page.client(token, ctx)
    assert page.call("load") == [bot_canary]
    assert page.call("remember", page_canary) == [bot_canary, page_canary]
    assert bot.facts() == [bot_canary, page_canary]
    assert page.js("localStorage.getItem(window.client.seenKey)") == "2"
    slot = mem.dm_slot(ctx)
    stored = files_text(server.data, server.log)
    assert slot.blob and slot.blob in stored  # the scan reads the slot's own file
    for secret in (bot_canary, page_canary, "Canary-", encode_b64url(key), encode_b64url(DM_KEY)):
        assert secret not in stored, secret
    owner.close()


def test_a_409_race_between_the_page_and_the_bot(
    page: Page, server: Server, host: tuple[str, Memory]
) -> None:
    token, mem = host
    ctx = dm("discord:dm-race")
    bot = DmMemory(mem, ctx, DM_KEY)
    bot.remember("Set by the bot first.")
    page.open()
    page.client(token, ctx, slot_key(DM_KEY, ctx.channel or ""))
    assert page.call("load") == ["Set by the bot first."]  # what the page shows, at v1
    bot.remember("Set by the bot while the page was open.")  # now v2
    assert page.call("remember", "Added on the page.") == [
        "Set by the bot first.",
        "Set by the bot while the page was open.",
        "Added on the page.",
    ]
    assert 409 in page.statuses  # the page's write at v1 lost, reloaded and re-applied
    assert page.js("window.client.version") == 3
    assert bot.facts()[-1] == "Added on the page."
    # The page forgets one (spacing and case aside, as the bot judges); the bot sees it.
    assert page.call("forget", "added on  the PAGE.") == bot.facts()[:2]
    assert bot.facts() == ["Set by the bot first.", "Set by the bot while the page was open."]
    assert page.call("remember", "set by the BOT first.") == bot.facts()  # not added twice
    assert page.js("window.client.version") == 4


def test_the_browser_refuses_tampered_moved_and_replayed_slots(
    page: Page, server: Server, host: tuple[str, Memory]
) -> None:
    token, mem = host
    page.open()
    # Tampered: one character of the ciphertext changed on the server.
    tampered = dm("discord:dm-tampered")
    DmMemory(mem, tampered, DM_KEY).remember("Prefers tea.")
    good = mem.dm_slot(tampered)
    assert good.blob is not None
    flipped = good.blob[:30] + ("A" if good.blob[30] != "A" else "B") + good.blob[31:]
    mem.put_dm_slot(tampered, flipped, if_version=1)
    page.client(token, tampered, slot_key(DM_KEY, tampered.channel or ""))
    assert page.call("load") == {"error": "unauthentic"}
    # Moved: that thread's good slot copied into another thread.
    moved = dm("discord:dm-moved", "discord:bob")
    mem.put_dm_slot(moved, good.blob, if_version=0)
    page.client(token, moved, slot_key(DM_KEY, moved.channel or ""))
    assert page.call("load") == {"error": "unauthentic"}
    # Replayed: the operator restores an older copy after the page saw a newer one.
    replayed = dm("discord:dm-replayed")
    bot = DmMemory(mem, replayed, DM_KEY)
    bot.remember("First.")
    (record,) = [
        p
        for p in (server.data / "config" / "dm_slots").glob("*.json")
        if json.loads(p.read_bytes())["value"]["thread"] == replayed.channel
    ]
    old = record.read_bytes()
    bot.remember("Second.")
    page.client(token, replayed, slot_key(DM_KEY, replayed.channel or ""))
    assert page.call("load") == ["First.", "Second."]
    record.write_bytes(old)
    assert mem.dm_slot(replayed).version == 1
    assert page.call("load") == {"error": "replayed"}
    page.client(token, replayed, slot_key(DM_KEY, replayed.channel or ""))  # a new client,
    assert page.call("load") == {"error": "replayed"}  # the same browser's localStorage


def test_the_browser_reclamps_an_oversized_slot_from_a_hostile_client(
    page: Page, host: tuple[str, Memory]
) -> None:
    token, mem = host
    ctx = dm("discord:dm-hostile")
    key = slot_key(DM_KEY, ctx.channel or "")
    hostile = ["z" * 1000, "🍵" * 500, *[f"fact {i}" for i in range(40)], 7, None]
    blob = seal(key, agent=AGENT, thread=ctx.channel or "", version=1, facts=hostile)
    mem.put_dm_slot(ctx, blob, if_version=0)
    page.open()
    page.client(token, ctx, key)
    facts = page.call("load")
    assert len(facts) == MAX_FACTS
    assert facts[0] == "z" * MAX_FACT_CHARS and facts[1] == "🍵" * MAX_FACT_CHARS
    assert facts == DmMemory(mem, ctx, DM_KEY).facts()  # both readers keep the same

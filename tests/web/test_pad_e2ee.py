"""The scratchpad with an end-to-end encrypted DM: the bot's link carries the slot key in
its fragment beside the token; the page decrypts, adds and forgets facts in the browser
(``e2ee.js``), and the bot (``remem.e2ee``) reads what the page wrote."""

from __future__ import annotations

import os

from remem import Memory, RunContext
from remem.e2ee import DmMemory, encode_b64url, slot_key

from .pad_browser import AGENT, Pad, serious_violations

DM_KEY = os.urandom(32)


def files_text(root: os.PathLike[str]) -> str:
    out = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as f:
                out.append(f.read().decode("utf-8", "replace"))
    return "\n".join(out)


def test_the_page_shows_and_changes_the_encrypted_dm_memory(pad: Pad) -> None:
    ctx = pad.member("max")
    thread = ctx.channel or ""
    owner = Memory.open(pad.server.url, token=pad.server.token("--name", "owner", "--owner"))
    owner.set_channel_policy(RunContext.owner(AGENT), thread, e2ee=True)
    bot = DmMemory(pad.host, ctx, DM_KEY)
    bot.remember("Canary-bot-71f3 prefers oolong.")
    bot.remember("Canary-bot-82a4 walks at dawn.")
    # The host appends the slot key (never the DM key) to the member link it sends.
    key = encode_b64url(slot_key(DM_KEY, thread))
    url = pad.link(ctx) + "&slot_key=" + key
    page = pad.browser.new_context().new_page()
    page.goto(url)
    facts = page.locator("#slot-facts li")
    facts.first.wait_for()
    assert "#" not in page.url and page.evaluate("location.hash") == ""
    assert facts.all_inner_texts()[0].startswith("Canary-bot-71f3 prefers oolong.")
    assert facts.count() == 2
    assert serious_violations(page) == []
    pad.shot(page, "e2ee")

    page.get_by_label("An encrypted note for the bot to remember").fill(
        "Canary-page-93c5 likes figs."
    )
    page.get_by_role("button", name="Add encrypted note").click()
    page.wait_for_selector("#status:has-text('Added (encrypted)')")
    assert bot.facts()[-1] == "Canary-page-93c5 likes figs."
    page.locator("#slot-facts li", has_text="Canary-bot-82a4").get_by_role(
        "button", name="Forget"
    ).click()
    page.wait_for_selector("#status:has-text('Forgotten (encrypted)')")
    assert bot.facts() == ["Canary-bot-71f3 prefers oolong.", "Canary-page-93c5 likes figs."]
    # The server holds ciphertext only: no fact, no key, anywhere under its data or log.
    stored = files_text(pad.server.data) + pad.server.log.read_text(errors="replace")
    for secret in ("Canary-bot-71f3", "Canary-bot-82a4", "Canary-page-93c5", key):
        assert secret not in stored, secret
    assert serious_violations(page) == []
    # Erase everything takes the encrypted notes too.
    page.get_by_role("button", name="Erase everything…").click()
    page.get_by_role("button", name="Yes, erase everything").click()
    page.wait_for_selector("#status:has-text('encrypted notes are forgotten too')")
    assert bot.facts() == []
    assert page.locator("#slot-empty").is_visible()
    owner.close()


def test_without_a_slot_key_the_encrypted_section_stays_hidden(pad: Pad) -> None:
    page = pad.open(pad.member("ned"))
    assert page.locator("#slot").is_hidden()

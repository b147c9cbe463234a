"""The scratchpad page in a real browser against a real ``remem serve``: opening a link,
seeing every note about the member, each change the page offers, and what the bot sees
of them afterwards."""

from __future__ import annotations

from typing import Any

from remem import Status
from remem.errors import NotFound

from .pad_browser import Pad, serious_violations


def note_item(page: Any, text: str) -> Any:
    return page.locator("#notes > li", has_text=text)


def test_a_link_opens_the_members_notes_and_leaves_the_address_bar(pad: Pad) -> None:
    ctx = pad.member("ann")
    host = pad.host
    mine = host.remember(ctx, "Prefers short replies.", scope="user", kind="preference")
    dm = host.remember(ctx, "We are planning the Lisbon trip.", scope="channel", kind="decision")
    guess = host.remember(ctx, "Likes jazz.", scope="user", basis="inferred")
    assert guess.status is Status.PENDING  # inferred notes wait for the member's review
    url = pad.link(ctx)
    context = pad.browser.new_context()
    page = context.new_page()
    response = page.goto(url)
    page.wait_for_selector("#notes li")

    # The token left the address bar (and history) before anything else ran.
    assert "#" not in page.url and "token" not in page.url
    assert page.evaluate("location.hash") == ""
    # Every note about the member, with kind, basis, status and where/when it was learned.
    for note, basis, status in (
        (mine, "explicit", "active"),
        (dm, "explicit", "active"),
        (guess, "inferred", "pending"),
    ):
        item = note_item(page, note.text)
        details = item.locator(".note-meta").inner_text()
        assert f"Kind: {note.kind.value}" in details
        assert f"Basis: {basis}" in details and f"Status: {status}" in details
        assert f"Learned in: {ctx.channel}" in details and "When:" in details
    assert note_item(page, guess.text).get_by_role("button", name="Accept").count() == 1
    # The page, its cookie and its headers.
    headers = response.headers
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-store"
    (cookie,) = context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert page.evaluate("document.cookie") == ""  # no script can read the session
    assert serious_violations(page) == []
    pad.shot(page, "notes")

    # The link worked once: opening it again (another browser) is refused.
    again = pad.browser.new_context().new_page()
    again.goto(url)
    again.wait_for_selector("#signed-out:not([hidden])")
    assert again.locator("#app").is_hidden()
    assert serious_violations(again) == []
    pad.shot(again, "used-link")
    context.close()


def test_edit_add_forget_disable_accept_and_choices_reach_the_bot(pad: Pad) -> None:
    ctx = pad.member("ben")
    host = pad.host
    wrong = host.remember(ctx, "Lives in Porto.", scope="user", kind="fact")
    stale = host.remember(ctx, "Prefers email.", scope="user")
    old = host.remember(ctx, "Works on the billing team.", scope="user")
    guess = host.remember(ctx, "Likes cycling.", scope="user", basis="inferred")
    wrong_guess = host.remember(ctx, "Dislikes mornings.", scope="user", basis="inferred")
    page = pad.open(ctx)

    # Edit (correct): the bot sees the corrected text, at the next version.
    item = note_item(page, wrong.text)
    item.get_by_role("button", name="Edit").click()
    page.get_by_label("Correct this note").fill("Lives in Lisbon.")
    assert serious_violations(page) == []
    pad.shot(page, "editing")
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector("#status:has-text('Corrected')")
    fixed = host.get(ctx, wrong.id)
    assert fixed.text == "Lives in Lisbon." and fixed.version > wrong.version

    # Add: a user note about the member, explicit.
    page.get_by_label("Something the agent should remember about you").fill("Drinks green tea.")
    page.get_by_role("button", name="Add note").click()
    note_item(page, "Drinks green tea.").wait_for()
    added = [n for n in host.list(ctx, scope="user", scope_id=ctx.actor) if "green tea" in n.text]
    assert len(added) == 1 and added[0].basis.value == "explicit"

    # Disable, then enable again.
    note_item(page, stale.text).get_by_role("button", name="Disable").click()
    note_item(page, stale.text).get_by_role("button", name="Enable").wait_for()
    assert host.get(ctx, stale.id).status is Status.DISABLED
    note_item(page, stale.text).get_by_role("button", name="Enable").click()
    note_item(page, stale.text).get_by_role("button", name="Disable").wait_for()
    assert host.get(ctx, stale.id).status is Status.ACTIVE

    # Accept a pending inferred note.
    note_item(page, guess.text).get_by_role("button", name="Accept").click()
    note_item(page, guess.text).get_by_role("button", name="Disable").wait_for()
    assert host.get(ctx, guess.id).status is Status.ACTIVE
    # Reject another: it leaves the page and is never recalled.
    note_item(page, wrong_guess.text).get_by_role("button", name="Reject").click()
    note_item(page, wrong_guess.text).wait_for(state="detached")
    assert host.get(ctx, wrong_guess.id).status is Status.REJECTED

    # Forget: gone from the page and from the bot's memory.
    note_item(page, old.text).get_by_role("button", name="Forget").click()
    note_item(page, old.text).wait_for(state="detached")
    assert all(n.id != old.id for n in host.list(ctx, status="active"))

    # Participant choices.
    page.get_by_label("Let the agent note things it infers about me").uncheck()
    page.wait_for_selector("#status:has-text('Saved')")
    page.get_by_label("Let the agent use what it knows about me in other channels").check()
    page.wait_for_selector("#status:has-text('other channels: on')")
    values = host.effective_policy(ctx)["values"]
    assert values["my_inferred"]["value"] is False
    assert values["my_cross_channel"]["value"] is True
    assert serious_violations(page) == []


def test_what_was_used_in_my_last_reply(pad: Pad) -> None:
    ctx = pad.member("cy")
    host = pad.host
    used = host.remember(ctx, "Prefers answers in French.", scope="user")
    host.remember(ctx, "Owns a bicycle.", scope="user")
    page = pad.open(ctx)
    page.get_by_role("button", name="Show what was used in my last reply").click()
    page.wait_for_selector("#used p")
    assert "haven't used" in page.locator("#used").inner_text()
    host.recall(ctx, "which language do I prefer for answers?")  # the bot's next reply
    page.get_by_role("button", name="Show what was used in my last reply").click()
    page.locator("#used li", has_text=used.text).wait_for()
    assert serious_violations(page) == []
    pad.shot(page, "last-reply")


def test_erase_everything_after_confirming(pad: Pad) -> None:
    ctx = pad.member("dee")
    host = pad.host
    notes = [
        host.remember(ctx, "Prefers tea.", scope="user"),
        host.remember(ctx, "Our trip is in May.", scope="channel", kind="decision"),
    ]
    page = pad.open(ctx, width=390)  # a phone
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert serious_violations(page) == []
    pad.shot(page, "phone")
    page.get_by_role("button", name="Erase everything…").click()
    assert page.get_by_role("button", name="Cancel").evaluate("b => b === document.activeElement")
    assert serious_violations(page) == []
    pad.shot(page, "erase-confirm")
    page.get_by_role("button", name="Cancel").click()
    assert page.locator("#erase-confirm").is_hidden()
    assert len(host.list(ctx, status="active")) >= 2  # nothing happened
    page.get_by_role("button", name="Erase everything…").click()
    page.get_by_role("button", name="Yes, erase everything").click()
    page.wait_for_selector("#empty:not([hidden])")
    assert "forgotten everything" in page.locator("#status").inner_text()
    for note in notes:
        try:
            gone = host.get(ctx, note.id)
        except NotFound:
            continue  # erased from storage
        assert gone.status is Status.FORGOTTEN
    assert serious_violations(page) == []
    pad.shot(page, "erased")


def test_live_updates_from_the_bot(pad: Pad) -> None:
    ctx = pad.member("eve")
    page = pad.open(ctx)
    assert page.locator("#empty").is_visible()
    note = pad.host.remember(ctx, "Is learning the cello.", scope="user")
    note_item(page, note.text).wait_for(timeout=10_000)  # no reload: the change event
    pad.host.correct(ctx, note.id, "Is learning the viola.")
    note_item(page, "Is learning the viola.").wait_for(timeout=10_000)


def test_a_reload_keeps_the_session_and_signing_out_ends_it(pad: Pad) -> None:
    ctx = pad.member("fin")
    note = pad.host.remember(ctx, "Prefers the window seat.", scope="user")
    page = pad.open(ctx)
    page.reload()  # no fragment any more: the cookie carries the session
    note_item(page, note.text).wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_selector("#signed-out:not([hidden])")
    status = page.evaluate("fetch('/v1/agents/yuko/notes').then(r => r.status)")
    assert status == 401
    page.reload()
    page.wait_for_selector("#signed-out:not([hidden])")
    assert page.locator("#app").is_hidden()

"""Opening another member's link in a browser signed in already (a login CSRF: what the
person then types would land in the link owner's memory): the page asks, naming who is
signed in and whose the link is, and only a "yes" switches."""

from __future__ import annotations

from .pad_browser import Pad, serious_violations


def test_another_members_link_asks_before_it_replaces_the_session(pad: Pad) -> None:
    cat, dan = pad.member("cat"), pad.member("dan")
    pad.host.remember(cat, "Prefers tea.", scope="user")
    pad.host.remember(dan, "Prefers coffee.", scope="user")
    page = pad.open(cat)
    context = page.context
    assert "Signed in as discord:cat" in page.locator("#who").inner_text()

    # Dan's link, opened in Cat's browser (a new tab: same cookies).
    dans_link = pad.link(dan)
    crafted = context.new_page()
    crafted.goto(dans_link)
    crafted.wait_for_selector("#switch:not([hidden])")
    question = crafted.locator("#switch-question").inner_text()
    assert "signed in as discord:cat" in question and "signs in discord:dan" in question
    assert crafted.locator("#app").is_hidden()
    assert crafted.evaluate("document.activeElement.id") == "switch-no"  # the safe answer
    assert serious_violations(crafted) == []
    pad.shot(crafted, "switch-question")

    # "Stay": Cat is still signed in, and her notes are what the page shows.
    crafted.get_by_role("button", name="Stay signed in as discord:cat").click()
    crafted.wait_for_selector("#app:not([hidden])")
    assert "Signed in as discord:cat" in crafted.locator("#who").inner_text()
    crafted.wait_for_selector("#notes li")
    assert "Prefers tea." in crafted.locator("#notes").inner_text()
    assert "Prefers coffee." not in crafted.locator("#notes").inner_text()

    # The link was left unused: opened again and accepted, it signs Dan in.
    again = context.new_page()
    again.goto(dans_link)
    again.get_by_role("button", name="Sign in as discord:dan").click()
    again.wait_for_selector("#app:not([hidden])")
    again.wait_for_selector("#notes li")
    assert "Signed in as discord:dan" in again.locator("#who").inner_text()
    assert "Prefers coffee." in again.locator("#notes").inner_text()
    assert "Prefers tea." not in again.locator("#notes").inner_text()
    pad.shot(again, "switched")
    context.close()

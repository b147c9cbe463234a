"""The whole member walk by keyboard alone: ``/memory`` in the DM, open the link, forget
one note, correct one, add one, erase everything; an axe-core scan at every state."""

from __future__ import annotations

import contextlib
from typing import Any

from remem import Status
from remem.errors import NotFound

from .pad_browser import Pad, serious_violations

#: What the focused element is, as the test reads it (reading focus drives nothing).
_FOCUSED = """() => {
    const e = document.activeElement;
    if (!e) return "";
    const note = e.closest("[data-note]");
    const label = e.labels && e.labels.length ? e.labels[0].textContent : "";
    return [e.tagName, e.textContent.trim() || label,
            note ? note.querySelector(".note-text").textContent : ""].join(" | ");
}"""


def tab_to(page: Any, control: str, note: str = "", *, back: bool = False) -> None:
    """Press Tab (Shift+Tab with ``back``) until the focused control's name contains
    ``control`` (and it belongs to the note saying ``note``); fail after 80 presses."""
    seen = []
    for _ in range(80):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        _tag, name, of_note = page.evaluate(_FOCUSED).split(" | ")
        seen.append(name[:30])
        if control in name and note in of_note:
            return
    raise AssertionError(f"never focused {control!r} {note!r}; focus went {seen}")


def assert_accessible(page: Any, state: str) -> None:
    assert serious_violations(page) == [], state


def test_the_whole_member_walk_by_keyboard(pad: Pad) -> None:
    ctx = pad.member("lee")
    host = pad.host
    tea = host.remember(ctx, "Prefers tea.", scope="user")
    city = host.remember(ctx, "Lives in Porto.", scope="user", kind="fact")
    trip = host.remember(ctx, "Our trip is in May.", scope="channel", kind="decision")
    page = pad.open(ctx)  # the link the bot answered "/memory" with, in Lee's DM
    assert_accessible(page, "loaded")

    # Forget one.
    tab_to(page, "Forget", tea.text)
    page.keyboard.press("Enter")
    page.locator("#notes > li", has_text=tea.text).wait_for(state="detached")
    assert "Forgotten" in page.locator("#status").inner_text()
    assert all(n.id != tea.id for n in host.list(ctx))
    # Focus moved to the next note, not lost to the page's top.
    page.wait_for_function("document.activeElement.dataset.action === 'edit'")
    assert page.evaluate(_FOCUSED).startswith("BUTTON | Edit")
    assert_accessible(page, "after forgetting")

    # Correct one.
    tab_to(page, "Edit", city.text)
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.tagName === 'TEXTAREA'")
    assert page.evaluate(_FOCUSED).startswith("TEXTAREA | Correct this note")
    page.keyboard.press("Control+A")
    page.keyboard.type("Lives in Lisbon.")
    assert_accessible(page, "editing")
    tab_to(page, "Save")
    page.keyboard.press("Enter")
    page.wait_for_selector("#status:has-text('Corrected')")
    assert host.get(ctx, city.id).text == "Lives in Lisbon."

    # Add one.
    tab_to(page, "Something the agent should remember about you")
    page.keyboard.type("Plays the piano.")
    tab_to(page, "Add note")
    page.keyboard.press("Enter")
    page.locator("#notes > li", has_text="Plays the piano.").wait_for()
    assert "Plays the piano." in [n.text for n in host.list(ctx)]
    assert_accessible(page, "after adding")

    # Erase everything: confirm, which starts on Cancel.
    tab_to(page, "Erase everything")
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.id === 'erase-no'")
    assert page.evaluate(_FOCUSED).startswith("BUTTON | Cancel")
    assert_accessible(page, "confirming")
    tab_to(page, "Yes, erase everything", back=True)
    page.keyboard.press("Enter")
    page.wait_for_selector("#empty:not([hidden])")
    assert_accessible(page, "erased")
    for note in (city, trip):
        with contextlib.suppress(NotFound):  # erased from storage
            assert host.get(ctx, note.id).status is Status.FORGOTTEN
    assert host.list(ctx) == []

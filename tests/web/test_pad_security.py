"""The member page's walls in a real browser: a 409 race with the bot, another member's
session, the role a session runs with, cross-site requests and the Content Security
Policy."""

from __future__ import annotations

import json
from typing import Any

from remem import Role, RunContext

from .pad_browser import AGENT, Pad, serious_violations


def note_item(page: Any, text: str) -> Any:
    return page.locator("#notes > li", has_text=text)


def fetch(page: Any, method: str, path: str, body: Any = None, **headers: str) -> Any:
    """``fetch`` from inside the page (its origin, its cookie): ``[status, json]``."""
    return page.evaluate(
        """async ([method, path, body, headers]) => {
            const init = {method, headers, credentials: "same-origin"};
            if (body !== null) { init.body = JSON.stringify(body);
                                 headers["Content-Type"] = "application/json"; }
            const r = await fetch(path, init);
            let data = null; try { data = await r.json(); } catch (e) {}
            return [r.status, data];
        }""",
        [method, path, body, headers],
    )


def test_a_409_race_between_the_page_and_the_bot(pad: Pad) -> None:
    ctx = pad.member("fay")
    note = pad.host.remember(ctx, "Lives in Porto.", scope="user")
    page = pad.open(ctx)
    note_item(page, note.text).get_by_role("button", name="Edit").click()
    page.get_by_label("Correct this note").fill("Lives in Faro.")
    # Meanwhile the bot corrects the same note (the page hears of it and reloads the list,
    # keeping the open edit at the version it started from).
    pad.host.correct(ctx, note.id, "Lives in Braga.")
    note_item(page, "Lives in Braga.").wait_for(timeout=10_000)
    assert page.get_by_label("Correct this note").input_value() == "Lives in Faro."
    page.get_by_role("button", name="Save").click()
    conflict = page.locator(".conflict[role=alert]")
    conflict.wait_for()
    text = conflict.inner_text()
    assert "now says: \u201cLives in Braga.\u201d" in text and "not saved" in text
    assert pad.host.get(ctx, note.id).text == "Lives in Braga."  # the bot's write stands
    # The member's words stay in the editor, now at the current version: saving them again
    # replaces the bot's text knowingly.
    assert page.get_by_label("Correct this note").input_value() == "Lives in Faro."
    assert serious_violations(page) == []
    pad.shot(page, "conflict")
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector("#status:has-text('Corrected')")
    assert pad.host.get(ctx, note.id).text == "Lives in Faro."


def test_another_members_link_cannot_reach_this_members_notes(pad: Pad) -> None:
    gil, hal = pad.member("gil"), pad.member("hal")
    secret = pad.host.remember(gil, "Is allergic to penicillin.", scope="user")
    in_dm = pad.host.remember(gil, "Booked the Lisbon hotel.", scope="channel", kind="decision")
    page = pad.open(hal)  # Hal's own link
    assert page.locator("#empty").is_visible()
    notes = f"/v1/agents/{AGENT}/notes"
    for note in (secret, in_dm):
        status, body = fetch(page, "GET", f"{notes}/{note.id}")
        assert status == 404, body
        status, body = fetch(
            page, "POST", f"{notes}/{note.id}/correct", {"text": "x"}, **{"Remem-Pad": "1"}
        )
        assert status == 404, body
        status, body = fetch(page, "DELETE", f"{notes}/{note.id}", **{"Remem-Pad": "1"})
        assert status == 404, body
    for scope, scope_id in (("user", gil.actor), ("channel", gil.channel)):
        status, body = fetch(page, "GET", f"{notes}?scope={scope}&scope_id={scope_id}&status=all")
        assert secret.text not in json.dumps(body) and in_dm.text not in json.dumps(body)
    # Claiming Gil's envelope is refused by the session's grants.
    status, body = fetch(page, "GET", notes, **{"Remem-Run": json.dumps(gil.to_json())})
    assert status == 403 and body["rule"] == "member_session", body
    left = sorted(n.text for n in pad.host.list(gil, status="active"))
    assert left == sorted([secret.text, in_dm.text])


def test_a_session_is_a_member_whatever_the_members_role_elsewhere(pad: Pad) -> None:
    token = pad.server.token(
        "--name", "admin-bot", "--agent", AGENT, "--channel", "*", "--actor", "*",
        "--max-role", "admin",
    )  # fmt: skip
    admin_host = type(pad.host).open(pad.server.url, token=token)
    ivy = RunContext.dm(AGENT, "discord:dm-ivy", "discord:ivy", role=Role.ADMIN)
    admin_pad = Pad(pad.server, admin_host, pad.browser, pad.shots)
    page = admin_pad.open(ivy)
    status, body = fetch(
        page, "PUT", f"/v1/agents/{AGENT}/rules/tone", {"content": "x"}, **{"Remem-Pad": "1"}
    )
    assert status == 403 and body["rule"] == "admin_only", body
    status, body = fetch(
        page, "GET", f"/v1/agents/{AGENT}/policy", **{"Remem-Run": json.dumps(ivy.to_json())}
    )
    assert status == 403 and body["rule"] == "member_session_role", body
    # Nor may a session mint itself a new link (it would never end).
    status, body = fetch(page, "POST", f"/v1/agents/{AGENT}/member-link", {}, **{"Remem-Pad": "1"})
    assert status == 403 and body["rule"] == "member_link_from_session", body
    admin_host.close()


def test_cross_site_requests_are_refused(pad: Pad) -> None:
    ctx = pad.member("jo")
    page = pad.open(ctx)
    origin = pad.server.url
    url = f"{origin}/v1/agents/{AGENT}/notes"
    api = page.context.request  # the page's cookie jar, any headers we choose
    body = {"text": "Planted by another site."}
    for headers in (
        {"Origin": origin},  # no Remem-Pad header (what a cross-site form sends)
        {"Origin": "http://evil.example", "Remem-Pad": "1"},
        {"Remem-Pad": "1"},  # no Origin at all
        {"Origin": "null", "Remem-Pad": "1"},
    ):
        answer = api.post(url, data=body, headers=headers)
        assert answer.status == 401, (headers, answer.text())
    assert pad.host.list(ctx) == []
    # Reads need neither; the same write from the page itself works.
    assert api.get(url).status == 200
    status, _ = fetch(page, "POST", f"/v1/agents/{AGENT}/notes", body, **{"Remem-Pad": "1"})
    assert status == 201
    # The session exchange is guarded the same way.
    answer = api.post(f"{origin}/pad/session", data={"token": "x" * 43}, headers={"Origin": origin})
    assert answer.status == 401


def test_the_content_security_policy_is_enforced_and_notes_stay_text(pad: Pad) -> None:
    ctx = pad.member("kim")
    hostile = '<img src=x onerror="window.__xss=1">Prefers <b>bold</b> replies.'
    pad.host.remember(ctx, hostile, scope="user")
    page = pad.open(ctx)
    violations: list[str] = []
    page.expose_function("__csp", lambda directive: violations.append(directive))
    page.evaluate(
        "document.addEventListener('securitypolicyviolation', e => __csp(e.violatedDirective))"
    )
    item = note_item(page, "Prefers")
    assert item.locator(".note-text").inner_text() == hostile  # shown as the text it is
    assert page.locator("#notes img, #notes b").count() == 0
    page.evaluate(
        """() => {
            const inline = document.createElement('script');
            inline.textContent = 'window.__inline = 1';
            document.body.appendChild(inline);
            const remote = document.createElement('script');
            remote.src = 'https://cdn.example.com/x.js';
            document.body.appendChild(remote);
            const style = document.createElement('link');
            style.rel = 'stylesheet'; style.href = 'https://cdn.example.com/x.css';
            document.head.appendChild(style);
        }"""
    )
    page.wait_for_timeout(300)
    assert page.evaluate("[window.__inline, window.__xss]") == [None, None]
    assert {"script-src-elem", "style-src-elem"} <= set(violations), violations

"""The secret guard through the public API: every path that stores text checks what a
reader will see (invisible characters, fullwidth forms and look-alike letters hide
nothing), and every stored free-text field is checked, not only the note's text."""

from __future__ import annotations

import pytest

from remem import InvalidInput, Memory, Message, Rejected, Role, RunContext

AGENT = "yuko"
ALICE = "discord:100"
DM_ALICE = "discord:dm-alice"
TOKEN = "ghp_R8nq2LkV5xTz1MwY7cHb3JfA9dGs6PeU0iQo"
ZWSP, SHY, TAG_A = "\u200b", "\u00ad", "\U000e0061"


def alice() -> RunContext:
    return RunContext.dm(AGENT, DM_ALICE, ALICE)


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def _spread(value: str, mark: str) -> str:
    """``value`` with an invisible ``mark`` between every two characters."""
    return mark.join(value)


EVASIONS = [
    pytest.param(f"CI pushes with gh{ZWSP}p_{TOKEN[4:]}", id="zero-width-space-in-prefix"),
    pytest.param(f"CI pushes with {_spread(TOKEN, SHY)}", id="soft-hyphen-everywhere"),
    pytest.param(f"CI pushes with {_spread(TOKEN, TAG_A)}", id="tag-characters"),
    pytest.param("CI pushes with ｇｈｐ＿" + TOKEN[4:], id="fullwidth-prefix"),
    pytest.param("CI pushes with gh\u0440_" + TOKEN[4:], id="cyrillic-er-for-p"),
    pytest.param("Her р\u0430ssword is hunter2", id="cyrillic-password-word"),
    pytest.param("Olga's Visa is ４５５６ ７３７５ ８６８９ ９８５５.", id="fullwidth-card"),
    pytest.param(f"The door code is 4{ZWSP}7{ZWSP}2{ZWSP}9#", id="zero-width-in-pin"),
    pytest.param("my pass\u202eword\u202c: tr0ub4dor", id="bidi-override-in-keyword"),
]


@pytest.mark.parametrize("text", EVASIONS)
def test_remember_refuses_a_secret_disguised_with_unicode(mem: Memory, text: str) -> None:
    with pytest.raises(Rejected) as err:
        mem.remember(alice(), text)
    assert err.value.reason == "secret"
    assert mem.list(alice()) == []


@pytest.mark.parametrize("text", EVASIONS)
def test_correct_refuses_a_secret_disguised_with_unicode(mem: Memory, text: str) -> None:
    note = mem.remember(alice(), "Prefers short replies.")
    with pytest.raises(Rejected) as err:
        mem.correct(alice(), note.id, text)
    assert err.value.reason == "secret"
    assert mem.get(alice(), note.id).text == "Prefers short replies."


def test_text_of_invisible_characters_only_is_empty(mem: Memory) -> None:
    for text in (ZWSP * 3, f"{SHY}{ZWSP}\u2060\ufeff", "\u200e\u200f", TAG_A * 4):
        with pytest.raises(Rejected) as err:
            mem.remember(alice(), text)
        assert err.value.reason == "empty", repr(text)


NEW_CLASSES = [
    pytest.param("Uses 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 for gated models.", id="hf-token"),
    pytest.param("The router login is admin/admin.", id="login-pair-joined"),
    pytest.param("username marta password tulips for the printer", id="login-pair-spelled"),
    pytest.param("Logs in to the NAS as jdoe with Winter2024!", id="login-as-with"),
    pytest.param("Rent goes to IBAN DE17 7511 7201 2177 4098 24.", id="iban"),
    pytest.param("Refunds go to NL81ABNA4058470081", id="iban-compact"),
    pytest.param("Sort code 20-00-00, account number 55779911", id="sort-code-account"),
    pytest.param(
        "moon auction permit dove dentist opera absorb first olympic pride force spawn",
        id="seed-phrase-checksummed",
    ),
    pytest.param(
        "Her wallet recovery phrase: abandon ability able about above absent absorb "
        "abstract absurd abuse access accident",
        id="seed-phrase-named",
    ),
]


@pytest.mark.parametrize("text", NEW_CLASSES)
def test_remember_refuses_the_new_credential_classes(mem: Memory, text: str) -> None:
    with pytest.raises(Rejected) as err:
        mem.remember(alice(), text)
    assert err.value.reason == "secret"


NEAR_MISSES = [
    "The old IBAN DE17 7511 7201 2177 4098 25 was mistyped on the invoice.",
    "The AWS account number 123456789012 belongs to the staging org.",
    "abandon ability able about above absent absorb abstract absurd abuse access accident",
    "Login with SSO; the password field is only for the break-glass account.",
    "Set HF_HOME to the shared cache before running hf_transfer.",
    "Спасибо за помощь, пароль пришлю позже.",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_remembered(mem: Memory, text: str) -> None:
    assert mem.remember(alice(), text).text == text


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tags", ["pw:hunter2"]),
        ("tags", ["ops", "pin:4412"]),
        ("tags", [TOKEN.lower()]),
        ("subject", "token." + TOKEN.lower()),
        ("source", TOKEN),
    ],
)
def test_every_stored_field_is_screened(mem: Memory, field: str, value: object) -> None:
    with pytest.raises(Rejected) as err:
        mem.remember(alice(), "Prefers short replies.", **{field: value})  # type: ignore[arg-type]
    assert err.value.reason == "secret"
    assert TOKEN not in str(err.value) and "hunter2" not in str(err.value)
    assert mem.list(alice()) == []


def test_an_id_with_an_invisible_character_is_refused_without_echoing_it(mem: Memory) -> None:
    with pytest.raises(InvalidInput) as err:
        mem.remember(
            alice(), "Prefers short replies.", source={"message_id": f"gh{ZWSP}p_{TOKEN[4:]}"}
        )
    assert "U+200B" in str(err.value) and TOKEN[4:] not in str(err.value)
    assert mem.list(alice()) == []


def test_ids_are_not_card_checked(mem: Memory) -> None:
    """A platform's numeric message id may pass Luhn; ids get only the token detectors."""
    luhn_valid = "4556737586899855"
    note = mem.remember(alice(), "Prefers short replies.", source=luhn_valid)
    assert note.source.message_id == luhn_valid


def test_learn_does_not_store_a_token_given_as_message_id(mem: Memory) -> None:
    report = mem.learn(
        alice(), [Message(ALICE, Role.MEMBER, "Remember that I like tea.", message_id=TOKEN)]
    )
    assert report.learned == [] and report.pending == []
    assert all(TOKEN not in (n.source.message_id or "") for n in mem.list(alice()))


def test_command_remember_refuses_a_disguised_secret(mem: Memory) -> None:
    reply = mem.command(alice(), f"remember that my token is gh{ZWSP}p_{TOKEN[4:]}")
    assert reply is not None and reply.notes == []
    assert "GitHub token" in reply.text and TOKEN[4:] not in reply.text
    assert mem.list(alice()) == []


def test_rules_are_screened_for_credentials(mem: Memory) -> None:
    with pytest.raises(Rejected) as err:
        mem.set_rule(owner(), "deploy", f"Deploy with the token {TOKEN}.")
    assert err.value.reason == "secret" and TOKEN not in str(err.value)
    assert "deploy" not in mem.rules(owner())
    mem.set_rule(owner(), "deploy", "Deploy tokens live in the team vault.")
    assert "deploy" in mem.rules(owner())

"""Review of issue 11, class "secret guard": a credential token broken by whitespace (a
line break, a no-break space) is stored with a plain space there and shown to every
reader, who can glue it back; the guard reads it glued back."""

from __future__ import annotations

import pytest

from remem import Memory, Rejected, RunContext

AGENT = "yuko"
ALICE = "discord:100"
DM = "discord:dm-alice"

TOKENS = {
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "openai": "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90",
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws": "AKIA" + "IOSFODNN7EXAMPL3",
    "huggingface": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
}
BREAKS = {"nbsp": "\u00a0", "newline": "\n", "cr-lf": "\r\n", "space": " ", "ideographic": "\u3000"}


def _broken(token: str, brk: str, at: int = 11) -> str:
    return token[:at] + brk + token[at:]


@pytest.mark.parametrize("brk", BREAKS.values(), ids=BREAKS.keys())
@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_remember_refuses_a_token_broken_by_whitespace(mem: Memory, token: str, brk: str) -> None:
    alice = RunContext.dm(AGENT, DM, ALICE)
    with pytest.raises(Rejected) as caught:
        mem.remember(alice, f"My key is {_broken(token, brk)} for the build.")
    assert caught.value.reason == "secret"
    assert mem.list(alice) == []


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_correct_refuses_a_token_wrapped_over_lines(mem: Memory, token: str) -> None:
    alice = RunContext.dm(AGENT, DM, ALICE)
    note = mem.remember(alice, "The build key is in the vault.")
    wrapped = token[:8] + "\n" + token[8:16] + "\n" + token[16:]
    with pytest.raises(Rejected):
        mem.correct(alice, note.id, f"The build key is {wrapped}")
    assert mem.get(alice, note.id).text == "The build key is in the vault."


def test_rules_and_commands_refuse_a_broken_token(mem: Memory) -> None:
    owner = RunContext.owner(AGENT)
    alice = RunContext.dm(AGENT, DM, ALICE)
    with pytest.raises(Rejected):
        mem.set_rule(owner, "style", f"Sign with {_broken(TOKENS['github'], chr(10))}.")
    assert mem.rules(owner) == {}
    reply = mem.command(alice, f"remember that my key is {_broken(TOKENS['openai'], ' ')}")
    assert reply is not None
    assert mem.list(alice) == []


@pytest.mark.parametrize(
    "text",
    [
        "I use sk- learn for models and pandas for tables every single day.",
        "The AKIA prefix marks AWS access keys in the console.",
        "Ask the hf_ team about the 2024 release plans and the v2 roadmap.",
        "Tokens start with ghp_ followed by letters and digits, 40 in all.",
    ],
)
def test_prose_naming_a_prefix_is_still_stored(mem: Memory, text: str) -> None:
    alice = RunContext.dm(AGENT, DM, ALICE)
    assert mem.remember(alice, text).text == text

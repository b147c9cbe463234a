"""Fuzz every public ``Memory`` method and the CLI with hostile input.

Each public method (found by introspection, so a new one cannot be missed: it fails
``test_every_public_method_has_a_fuzz_entry`` until it has an entry here) is called
with valid arguments except one position, which gets a hostile value: lone
surrogates, NUL, bidi overrides, C0/C1 controls, terminal escapes, a 1 MB string,
wrong types. Nothing may raise outside the ``RememError`` tree, and a fresh
``Memory`` must read the data directory afterwards and see what the first one sees.
"""

from __future__ import annotations

import inspect
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from remem import HostPrincipal, Memory, Message, RememError, Role, RunContext
from remem.errors import InvalidInput, StoreError

AGENT = "yuko"
ALICE = "discord:100"
DM = "discord:dm-alice"
GENERAL = "discord:general"
MB = "x" * 1_000_000

#: Hostile values tried in every argument position.
HOSTILE: list[Any] = [
    "\ud800",
    "ok\udfffok",
    "\x00",
    "note\x00id",
    "\u202egnp.exe\u202c",
    "\x1b[2J\x1b[31mred",
    "\x85\x9b\x07\x7f",
    "\u200b\u2060\ufeff",
    "a\u2028b\u2029c",
    "",
    "   ",
    MB,
    "é" * 300_000 + "\ud83d",
    None,
    0,
    -1,
    2**70,
    1.5,
    float("nan"),
    True,
    b"bytes\xff",
    bytearray(b"x"),
    [],
    ["\ud800"],
    [None, 3],
    {},
    {"text": "\x00"},
    object(),
]


class World:
    """Valid arguments, made fresh where a call could use them up."""

    def __init__(self, mem: Memory, tmp: Path) -> None:
        self.mem = mem
        self.tmp = tmp
        self.owner = RunContext.owner(AGENT)
        self.alice = RunContext.dm(AGENT, DM, ALICE, run_id="run_fuzz_alice")
        self.recall_run = mem.recall(self.alice, "reports").run_id

    def note(self) -> str:
        return self.mem.remember(self.alice, f"Likes tea number {random.random()}.").id

    def pending(self) -> str:
        text = f"Seems to like tea number {random.random()}."
        return self.mem.remember(self.alice, text, basis="inferred").id

    def revised_run(self) -> str:
        """A run that retired one note by another: its id."""
        ctx = RunContext.owner(AGENT)
        old = self.mem.remember(ctx, f"Reports use warehouse {random.random()}.", scope="agent")
        new = self.mem.remember(ctx, f"Reports use warehouse {random.random()}.", scope="agent")
        self.mem.supersede(ctx, old.id, new.id)
        return ctx.run_id

    def revision(self) -> str:
        run_id = self.revised_run()
        return next(r.id for r in self.mem.revisions(self.owner) if r.run_id == run_id)

    def archive(self) -> Path:
        path = self.tmp / "archive.jsonl"
        path.write_text('{"author": "discord:100", "role": "member", "text": "I like tea."}\n')
        return path


Args = tuple[list[Any], dict[str, Any]]
#: method name → valid (positional args after self, keyword args); None: never called
#: (closing the store mid-fuzz would only test "closed").
ENTRIES: dict[str, Callable[[World], Args] | None] = {
    "open": lambda w: ([str(w.tmp / "other")], {}),
    "close": None,
    "limits": lambda w: ([w.alice, DM], {}),
    "effective_policy": lambda w: ([w.alice], {}),
    "set_channel_policy": lambda w: ([w.owner, GENERAL], {"recall_max_notes": 10}),
    "channel_policy": lambda w: ([w.owner, GENERAL], {}),
    "set_channel_kind": lambda w: ([w.owner, "fuzz:kind", "dm"], {"member": ALICE}),
    "channel_kinds": lambda w: ([w.owner], {}),
    "set_my_preferences": lambda w: ([w.alice], {"inferred": True, "cross_channel": False}),
    "pending": lambda w: ([w.owner], {}),
    "approve": lambda w: ([w.owner, w.pending()], {}),
    "reject": lambda w: ([w.owner, w.pending()], {}),
    "remember": lambda w: (
        [w.alice, "Prefers short replies."],
        {
            "scope": "user",
            "scope_id": ALICE,
            "kind": "preference",
            "basis": "explicit",
            "subject": "user.replies",
            "tags": ["style"],
            "pinned": False,
            "expires_at": None,
            "source": "discord:msg1",
            "said_at": "2026-07-01T00:00:00Z",
        },
    ),
    "forget": lambda w: ([w.alice, w.note()], {"if_version": 1}),
    "correct": lambda w: ([w.alice, w.note(), "Likes green tea."], {"if_version": 1}),
    "move": lambda w: ([w.alice, w.note()], {"scope": "channel", "scope_id": DM}),
    "disable": lambda w: ([w.alice, w.note()], {"if_version": 1}),
    "enable": lambda w: ([w.alice, w.note()], {"if_version": 1}),
    "pin": lambda w: ([w.alice, w.note()], {"if_version": 1}),
    "unpin": lambda w: ([w.alice, w.note()], {"if_version": 1}),
    "get": lambda w: ([w.alice, w.note()], {}),
    "list": lambda w: (
        [w.owner],
        {"scope": "user", "scope_id": ALICE, "status": "active", "tag": "style"},
    ),
    "status_of": lambda w: ([w.alice, w.mem.get(w.alice, w.note())], {"now": None}),
    "history": lambda w: ([w.alice, w.note()], {}),
    "compact": lambda w: ([w.owner], {}),
    "recall": lambda w: ([w.alice, "tea"], {"max_chars": 500, "tag": None}),
    "compile": lambda w: (
        [w.alice, "what tea?"],
        {"identity": "I am Yuko.", "purpose": "help", "policy": "be kind", "briefing": "b"},
    ),
    "explain": lambda w: ([w.owner, w.recall_run], {}),
    "writes": lambda w: ([w.alice, "run_fuzz_alice"], {}),
    "tags": lambda w: ([w.alice], {}),
    "tool_specs": lambda w: ([w.alice], {"style": "mcp"}),
    "run_tool": lambda w: ([w.alice, "remember", {"fact": "Prefers green tea."}], {}),
    "subscribe": lambda w: ([w.alice], {"after": 0}),
    "rules": lambda w: ([w.owner], {}),
    "set_rule": lambda w: ([w.owner, "style", "Answer briefly."], {}),
    "learn": lambda w: (
        [w.alice, [Message(ALICE, Role.MEMBER, "I prefer tea.", "discord:m2")]],
        {"summary": None},
    ),
    "relearn": lambda w: ([w.owner, w.archive()], {}),
    "supersede": lambda w: ([w.owner, w.note(), w.note()], {}),
    "revisions": lambda w: ([w.owner], {}),
    "undo": lambda w: ([w.owner, w.revision()], {}),
    "undo_run": lambda w: ([w.owner, w.revised_run()], {}),
    "consolidate": lambda w: ([w.owner], {"dry_run": True}),
    "command": lambda w: ([w.alice, "remember that I like green tea"], {}),
    "member_link": lambda w: ([w.alice], {}),
    "dm_slot": lambda w: ([w.alice], {}),
    "put_dm_slot": lambda w: ([w.alice, "A" * 40], {"if_version": w.mem.dm_slot(w.alice).version}),
    "agents": lambda w: ([], {}),
    "repairs": lambda w: ([], {}),
    "trash_agent": lambda w: ([RunContext.owner("victim"), "victim"], {}),
    "for_principal": lambda w: ([HostPrincipal(("*",), ("*",), ("*",))], {}),
}


def public_methods() -> list[str]:
    return sorted(
        name
        for name, value in vars(Memory).items()
        if not name.startswith("_") and callable(getattr(Memory, name))
    )


def test_every_public_method_has_a_fuzz_entry() -> None:
    missing = set(public_methods()) - set(ENTRIES)
    assert not missing, f"add a fuzz entry for {sorted(missing)}"
    assert not set(ENTRIES) - set(public_methods())


def _call(
    mem: Memory, name: str, args: list[Any], kwargs: dict[str, Any], valid: bool = False
) -> None:
    try:
        result = getattr(mem if name != "open" else Memory, name)(*args, **kwargs)
    except RememError:
        if valid:  # the valid call must work, or the hostile ones test nothing deep
            raise
        return
    except Exception as exc:  # the point of the test: nothing else may escape
        shown = [repr(a)[:60] for a in args]
        raise AssertionError(
            f"{name}({shown}, {list(kwargs)}) raised {type(exc).__name__}: {str(exc)[:200]}"
        ) from exc
    if isinstance(result, Memory):
        result.close()


def _snapshot(mem: Memory) -> set[tuple[str, str, str, str, int]]:
    out = set()
    for agent in mem.agents():
        for note in mem.list(RunContext.owner(agent), status=None):
            out.add((agent, note.id, note.text, note.status.value, note.version))
    return out


def test_hostile_values_in_every_argument_raise_only_remem_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # hostile data locations land here
    random.seed(11)
    started = time.monotonic()
    data = tmp_path / "data"
    mem = Memory.open(data)
    world = World(mem, tmp_path)
    mem.remember(RunContext.owner("victim"), "Victim note.", scope="agent")
    calls = 0
    for name in public_methods():
        entry = ENTRIES[name]
        if entry is None:
            continue
        args, kwargs = entry(world)
        _call(mem, name, list(args), dict(kwargs), valid=True)
        for position in range(len(args)):
            for value in HOSTILE:
                args, kwargs = entry(world)
                args = list(args)
                args[position] = value
                _call(mem, name, args, kwargs)
                calls += 1
        for key in kwargs:
            for value in HOSTILE:
                args, kwargs = entry(world)
                kwargs = dict(kwargs)
                kwargs[key] = value
                _call(mem, name, list(args), kwargs)
                calls += 1
        args, kwargs = entry(world)
        params = inspect.signature(getattr(Memory, name)).parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            for value in HOSTILE[:4]:  # an unknown key where any keyword is taken
                _call(mem, name, list(args), {**kwargs, "bogus": value})
                calls += 1
        if name == "set_channel_policy":
            for value in HOSTILE:
                _call(mem, name, list(args), {"recall_max_chars": value})
                _call(mem, name, list(args), {"stewards": [value]})
                calls += 2
    before = _snapshot(mem)
    mem.close()
    again = Memory.open(data)
    try:
        assert _snapshot(again) == before
        for agent in again.agents():
            again.recall(RunContext.owner(agent), "tea")
    finally:
        again.close()
    assert calls > 2000
    assert time.monotonic() - started < 60


REMEM = Path(sys.executable).parent / "remem"

HOSTILE_ARGV: list[list[bytes]] = [
    [b"remember", b"--agent", b"yuko", b"hi \xff there"],
    [b"remember", b"--agent", b"yu\xffko", b"hello"],
    [b"remember", b"--agent", b"yuko", b"--tag", b"t\xff", b"hello"],
    [b"remember", b"--agent", b"yuko", b"--subject", b"\xc3", b"hello"],
    [b"remember", b"--agent", b"yuko", b"--scope", b"\xff", b"x"],
    [b"remember", b"--agent", b"yuko", b"\x1b[2J\xe2\x80\xae"],
    [b"ls", b"--agent", b"\xff"],
    [b"ls", b"--agent", b"yuko", b"--scope-id", b"\xfe\xff"],
    [b"show", b"note_\xff"],
    [b"history", b"\xff\xfe"],
    [b"correct", b"note_01J00000000000000000000000", b"\xff"],
    [b"recall", b"--agent", b"yuko", b"\xff"],
    [b"recall", b"--agent", b"yuko", b"--dm", b"d\xff", b"--user", b"u", b"q"],
    [b"explain", b"run_\xff"],
    [b"rules", b"set", b"yuko", b"n\xff", b"content"],
    [b"rules", b"set", b"yuko", b"style", b"c\xff"],
    [b"channel", b"set", b"yuko", b"c\xff", b"memory", b"off"],
    [b"channel", b"set", b"yuko", b"discord:1", b"recall-max-notes", b"99999999999999999999"],
    [b"channel", b"show", b"yuko", b"\xff"],
    [b"review", b"--agent", b"\xff"],
    [b"revisions", b"undo", b"--agent", b"yuko", b"rev_\xff"],
    [b"agents", b"trash", b"\xff"],
    [b"\xff"],
]


def test_cli_with_hostile_argv_prints_no_traceback(tmp_path: Path) -> None:
    data = str(tmp_path / "data").encode()
    procs = [
        subprocess.Popen(
            [str(REMEM).encode(), b"--data", data, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for argv in HOSTILE_ARGV
    ]
    for argv, proc in zip(HOSTILE_ARGV, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        assert b"Traceback" not in err + out, (argv, err.decode(errors="replace"))
        assert proc.returncode in (0, 2, 3, 4, 5, 7), (argv, proc.returncode, err)
        if proc.returncode:
            assert err.strip().count(b"\n") <= 3, (argv, err)  # one line (click: usage + 1)
        assert b"\x1b" not in out + err, argv  # output is inert


#: Hostile values holding U+0000 (NUL), tried on every backend: refused where a value is
#: an id, a name, a tag, a policy value, a rule or a slot blob, removed from note text.
NULS: list[Any] = ["\x00", "note\x00id", ["style\x00"], {"k": "a\x00"}]


@contextmanager
def _backend(kind: str, tmp: Path) -> Iterator[str]:
    """A fresh store of ``kind``: a JSONL directory, or a PostgreSQL database."""
    if kind == "jsonl":
        yield str(tmp / "data")
        return
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    from remem.testing import postgres_server

    reason = postgres_server.unavailable()
    if reason is not None:
        pytest.skip(reason)
    with postgres_server.postgres_server() as server, postgres_server.fresh_database(server) as url:
        yield url


@pytest.mark.parametrize("kind", ["jsonl", "postgresql"])
def test_nul_never_reaches_a_backend(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A NUL anywhere is refused with ``InvalidInput`` or removed before any backend sees
    it: no call fails in the store (PostgreSQL refuses NUL in text with a 503), and no
    JSONL file holds one."""
    monkeypatch.chdir(tmp_path)
    random.seed(12)
    with _backend(kind, tmp_path) as location:
        mem = Memory.open(location)
        world = World(mem, tmp_path)
        try:
            for name in public_methods():
                entry = ENTRIES[name]
                if entry is None:
                    continue
                args, kwargs = entry(world)
                slots = [*range(len(args)), *kwargs]
                for slot, value in ((s, v) for s in slots for v in NULS):
                    args, kwargs = entry(world)
                    args = list(args)
                    if isinstance(slot, int):
                        args[slot] = value
                    else:
                        kwargs = {**kwargs, slot: value}
                    _call_without_store_error(mem, name, args, kwargs)
            for value in NULS:
                _call_without_store_error(mem, "set_rule", [world.owner, "style", value], {})
                _call_without_store_error(mem, "set_rule", [world.owner, value, "ok"], {})
        finally:
            mem.close()
    if kind == "jsonl":
        for path in (tmp_path / "data").rglob("*"):
            if path.is_file() and path.suffix in (".jsonl", ".json", ".md", ".toml"):
                raw = path.read_bytes()
                assert b"\x00" not in raw and b"\\u0000" not in raw, path


def _call_without_store_error(
    mem: Memory, name: str, args: list[Any], kwargs: dict[str, Any]
) -> None:
    try:
        _call(mem, name, args, kwargs, valid=True)  # valid: every RememError comes out
    except StoreError as exc:
        raise AssertionError(f"{name} reached the store with a NUL: {exc}") from exc
    except RememError:
        pass


def test_nul_in_a_stored_name_or_document_is_invalid_input_naming_the_field(
    tmp_path: Path,
) -> None:
    mem = Memory.open(tmp_path / "data")
    owner, alice = RunContext.owner(AGENT), RunContext.dm(AGENT, DM, ALICE)
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: mem.set_rule(owner, "style", "Answer\x00briefly."), "rule content"),
        (lambda: mem.set_rule(owner, "st\x00yle", "Answer briefly."), "rule name"),
        (lambda: mem.remember(alice, "Likes tea.", tags=["te\x00a"]), "tag"),
        (lambda: mem.remember(alice, "Likes tea.", subject="user.t\x00"), "subject"),
        (lambda: mem.remember(alice, "Likes tea.", source="m\x001"), "message_id"),
        (lambda: mem.set_channel_policy(owner, GENERAL, stewards=["a\x00"]), "steward"),
        (lambda: mem.set_channel_policy(owner, GENERAL, kinds=["fact\x00"]), "kinds"),
        (lambda: mem.set_channel_policy(owner, "disc\x00ord:1", memory=False), "channel"),
        (lambda: mem.list(RunContext.dm(AGENT, DM, "discord:\x00")), "user"),
        (lambda: mem.put_dm_slot(alice, "A" * 39 + "\x00", if_version=0), "blob"),
    ]
    for call, field in cases:
        with pytest.raises(InvalidInput, match=field):
            call()
    with pytest.raises(InvalidInput, match="U\\+0000"):
        mem.set_rule(owner, "style", "Answer\x00briefly.")
    assert mem.rules(owner) == {}
    # In note text a NUL is removed, as every control character is, on every backend.
    assert mem.remember(alice, "Likes\x00 green tea.").text == "Likes green tea."
    mem.close()

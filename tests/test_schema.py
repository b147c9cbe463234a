"""One JSON form per result type (remem.schema): every public Memory method's result has
one, it round-trips exactly through real JSON text, and it validates against its schema.

The values are real: produced by real Memory calls, plus edge cases (unicode, None
fields, tags, pinned, expires_at, every status)."""

from __future__ import annotations

import builtins
import inspect
import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import remem.service
from remem import Change, Memory, Message, Note, Role, RunContext, Status, Trace
from remem.core.events import EVENT_TYPES, Event
from remem.errors import InvalidInput
from remem.schema import FORMS, from_json, json_schema, to_json
from remem.testing.contract import every_event_type

AGENT = "forms"
ALICE = "discord:900"
BOB = "discord:100"
CHAN = "discord:general"


def owner() -> RunContext:
    return RunContext.owner(AGENT)


def admin() -> RunContext:
    return RunContext.group(AGENT, CHAN, ALICE, role=Role.ADMIN)


def bob() -> RunContext:
    return RunContext.dm(AGENT, "discord:dm-bob", BOB)


def return_annotations() -> dict[str, Any]:
    """Each public Memory method's resolved return annotation."""
    names = {cls.__name__: cls for cls in FORMS} | {"builtins": builtins}
    out = {}
    for name, func in inspect.getmembers(Memory, inspect.isfunction):
        if name.startswith("_") or name in ("open", "close", "for_principal"):  # a Memory
            continue
        if name == "subscribe":  # a stream of Change (each has a form: see gallery)
            continue
        annotation = func.__annotations__["return"]
        try:  # a result type the service names only for type checking must have a form
            out[name] = eval(annotation, vars(remem.service), names)
        except NameError as exc:
            out[name] = f"{annotation} (no JSON form: {exc})"
    return out


def gallery(mem: Memory, clock: Any, data_dir: Path) -> Iterator[tuple[Any, Any]]:
    """(annotation, value) pairs made by real calls, covering every result type."""
    o, a, b = owner(), admin(), bob()
    plain = mem.remember(b, "Prefers tea 🍵 — «strong», 日本語.", scope="user")
    tagged = mem.remember(
        o,
        "Deploys need a green build.",
        scope="agent",
        tags=["ops", "deploy"],
        pinned=True,
        expires_at="2031-01-02T03:04:05.123456Z",
        subject="deploy.rule",
    )
    yield Note, plain
    yield Note, tagged
    yield Note, mem.correct(o, plain.id, "Prefers green tea.")
    yield Note, mem.disable(o, tagged.id)
    yield Note, mem.enable(o, tagged.id)
    yield Note, mem.unpin(o, tagged.id)
    yield builtins.list[Event], mem.history(o, plain.id)
    recall = mem.recall(b, "tea")
    yield type(recall), recall
    yield type(mem.explain(o, recall.run_id)), mem.explain(o, recall.run_id)
    yield type(mem.explain(b, recall.run_id)), mem.explain(b, recall.run_id)
    prompt = mem.compile(b, "What tea?", identity="You are Yuko.", briefing="none")
    yield type(prompt), prompt
    yield return_annotations()["tool_specs"], mem.tool_specs(b, style="mcp")
    told = mem.run_tool(b, "remember", {"fact": "Prefers oolong.", "about": "member"})
    assert told.writes[-1].note.source.via == "tool"  # the form carries the optional key
    yield type(told), told
    yield type(told), mem.run_tool(b, "forget", {"number": 1, "user_id": BOB})
    report = mem.learn(
        a,
        [
            Message(ALICE, Role.ADMIN, "The weekly report pulls from the finance_v2 table.", "m1"),
            Message(BOB, Role.MEMBER, "I prefer short status reports.", "m2"),
            Message(None, Role.MEMBER, "I prefer tabs over spaces.", "m3"),
        ],
    )
    yield type(report), report
    reply = mem.command(b, "what do you remember about me?")
    yield type(reply), reply
    yield type(reply) | None, mem.command(b, "hello there")
    first = mem.remember(b, "Prefers long weekly summaries.", scope="user")
    second = mem.remember(b, "Prefers very long weekly summaries.", scope="user")
    yield type(mem.consolidate(a, dry_run=True)), mem.consolidate(a, dry_run=True)
    consolidation = mem.consolidate(a)
    yield type(consolidation), consolidation
    revisions = mem.revisions(o)
    yield return_annotations()["revisions"], revisions
    undone = mem.undo(o, revisions[0].id)
    yield type(undone), undone
    yield Note, mem.get(o, first.id)
    yield Note, mem.get(o, second.id)
    change = mem.set_channel_policy(o, CHAN, memory=True, kinds=["fact"], stewards=[BOB])
    yield type(change), change
    yield type(change), mem.set_my_preferences(b, inferred=False, cross_channel=True)
    yield type(mem.limits(o)), mem.limits(o)
    yield dict[str, Any], mem.effective_policy(b)
    yield return_annotations()["member_link"], mem.member_link(b)
    yield return_annotations()["writes"], mem.writes(b, b.run_id)
    forgotten = mem.forget(o, plain.id)
    yield Note, forgotten
    yield return_annotations()["writes"], mem.writes(o, o.run_id)
    clock.advance(days=3650)
    compaction = mem.compact(o)
    yield type(compaction), compaction
    yield builtins.list[Note], mem.list(o, status=None)
    yield dict[str, int], mem.tags(o)
    with mem.subscribe(o, after=0) as changes:
        yield builtins.list[Change], changes.poll()
    yield return_annotations()["dm_slot"], mem.dm_slot(b)
    yield return_annotations()["put_dm_slot"], mem.put_dm_slot(b, "A" * 40, if_version=0)
    yield return_annotations()["dm_slot"], mem.dm_slot(b)
    yield return_annotations()["repairs"], torn_tail_repairs(data_dir, clock)


def torn_tail_repairs(data_dir: Path, clock: Any) -> builtins.list[Any]:
    """What ``repairs()`` reports after a crash cut a write short (a real torn tail)."""
    with open(data_dir / "agents" / AGENT / "memory.jsonl", "ab") as log:
        log.write(b'{"op":"remember","id":"note_01J')
    with Memory.open(data_dir, clock=clock) as reopened:
        reopened.remember(owner(), "Written after the crash.", scope="agent")
        repairs = reopened.repairs()
    assert len(repairs) == 1 and repairs[0].size == 31, repairs
    return repairs


def every_status_note(base: Note) -> Iterator[Note]:
    for status in Status:
        yield base.evolve(status=status, expires_at=None, subject=None, created_by=None)


@pytest.fixture
def values(mem: Memory, clock: Any, data_dir: Path) -> list[tuple[Any, Any]]:
    return list(gallery(mem, clock, data_dir))


def roundtrip(annotation: Any, value: Any) -> Any:
    text = json.dumps(to_json(value), ensure_ascii=False)
    data = json.loads(text)
    jsonschema.Draft202012Validator(json_schema(annotation)).validate(data)
    return from_json(annotation, data)


def test_every_public_memory_result_has_a_json_form() -> None:
    missing = {}
    for name, annotation in return_annotations().items():
        try:
            json_schema(annotation)
        except TypeError as exc:
            missing[name] = str(exc)
    assert missing == {}


def test_every_schema_is_a_valid_draft_2020_12_schema() -> None:
    for cls in FORMS:
        jsonschema.Draft202012Validator.check_schema(json_schema(cls))
    for annotation in return_annotations().values():
        jsonschema.Draft202012Validator.check_schema(json_schema(annotation))


def forms_named(annotation: Any) -> set[type]:
    """The registered types an annotation names (``list[Note] | None`` → {Note})."""
    if isinstance(annotation, type) and annotation in FORMS:
        return {annotation}
    return {t for arg in typing.get_args(annotation) for t in forms_named(arg)}


def test_real_results_round_trip_exactly_and_validate(values: list[tuple[Any, Any]]) -> None:
    produced: set[type] = set()
    for annotation, value in values:
        assert roundtrip(annotation, value) == value, annotation
        for item in value if isinstance(value, list) else [value]:
            produced.add(type(item))
    # Every form a public method returns was produced for real above (an event's is Event).
    named = {t for a in return_annotations().values() for t in forms_named(a)}
    produced |= {Event for t in produced if issubclass(t, Event)}
    assert named - produced == set()


def test_the_gallery_reaches_nested_forms(values: list[tuple[Any, Any]]) -> None:
    """Dropped items, merge groups and notes inside reports are real too."""
    by_name = {type(v).__name__: v for _, v in values}
    assert by_name["LearnReport"].dropped and by_name["LearnReport"].learned
    assert by_name["ConsolidationReport"].groups
    assert by_name["Reply"].notes and by_name["CompactionReport"].notes_erased


def test_every_status_and_none_field_round_trips(mem: Memory) -> None:
    base = mem.remember(owner(), "Uses metric units.", scope="agent")
    for note in every_status_note(base):
        assert roundtrip(Note, note) == note
    odd = base.evolve(tags=("ß", "日本"), text="", superseded_by="note_x", version=7, evidence=3)
    assert roundtrip(Note, odd) == odd


def test_every_event_type_round_trips_through_its_own_schema() -> None:
    events = every_event_type("note_01A", "note_01B")
    assert {type(e) for e in events} == set(EVENT_TYPES.values())
    for event in events:
        assert roundtrip(Event, event) == event
        assert roundtrip(type(event), event) == event


def test_cli_json_is_the_schema_form(tmp_path: Path, mem: Memory) -> None:
    from click.testing import CliRunner

    from remem.cli import main

    note = mem.remember(owner(), "Uses metric units.", scope="agent", tags=["units"])
    recall = mem.recall(owner(), "metric")
    mem.close()
    data = str(tmp_path / "data")
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(main, ["--data", data, *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert run("show", note.id, "--json") == to_json(mem_get(data, note.id))
    assert from_json(list[Note], run("ls", "--agent", AGENT, "--json"))[0].id == note.id
    events = from_json(list[Event], run("history", note.id, "--json"))
    assert [e.op for e in events] == ["remember"]
    out = run("recall", "--agent", AGENT, "--json", "metric")
    assert {"run_id", "retrieval", "notes", "text", "rules"} <= set(out)
    jsonschema.validate(out, json_schema(type(recall)))
    trace = run("explain", recall.run_id, "--json")
    jsonschema.validate(trace, json_schema(Trace))
    assert from_json(Trace, trace).run_id == recall.run_id


def mem_get(data: str, note_id: str) -> Note:
    with Memory.open(data) as fresh:
        return fresh.get(owner(), note_id)


def test_from_json_refuses_what_is_not_the_form() -> None:
    with pytest.raises(InvalidInput):
        from_json(Note, {"id": "note_1"})
    with pytest.raises(InvalidInput):
        from_json(list[Note], {"id": "note_1"})
    with pytest.raises(InvalidInput):
        from_json(Note, "a string")


def test_a_type_without_a_form_is_named() -> None:
    with pytest.raises(TypeError, match="no JSON form"):
        json_schema(Path)
    with pytest.raises(TypeError, match="no JSON form"):
        to_json(Path("/"))

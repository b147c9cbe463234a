"""What ``remem doctor`` checks besides its round trip: each agent's log end to end, the
derived caches, and the configured LLM and embedding endpoints.

Each check yields :class:`Finding`\\ s. ``fail`` is damage (the store refuses the
log, or would): doctor exits non-zero. ``warn`` is something the owner should
know that does not stop the store: a torn tail that was (or will be) cut and its
saved bytes, a stale or damaged cache (rebuilt from the log), an unreachable
endpoint (remem runs in a degraded mode, named). A store that survived a crash
is "clean but repaired", not "damaged".
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from remem.core.events import Erased, NoteEvent, Remembered, from_dict, unseal
from remem.errors import StoreError
from remem.store.durable import read_all, reason
from remem.store.jsonl import JsonlEventLog
from remem.store.scrub import cleanup_flag

if TYPE_CHECKING:
    from remem.formation.classify import Classifier

Level = Literal["ok", "warn", "fail"]
PROBE_SECONDS = 3.0
#: How many channels without a recorded kind a doctor line names (the rest are counted).
UNRECORDED_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Finding:
    level: Level
    name: str
    detail: str


def check_agent(root: Path, agent: str) -> Iterator[Finding]:
    """The agent's log (every line's checksum and schema, unique event ids, no event
    for a note before it was remembered), its saved tails and its caches."""
    folder = root / "agents" / agent
    path = folder / "memory.jsonl"
    yield from _check_log(root, agent, path)
    for saved in sorted(folder.glob("memory.jsonl.torn-*")):
        yield Finding(
            "warn",
            f"{agent}: torn tail",
            f"{saved} ({saved.stat().st_size} bytes) was cut from the log after an "
            "interrupted write; look at it and delete it when done",
        )
    for saved in sorted(folder.glob("memory.jsonl.damaged-*")):
        yield Finding(
            "warn",
            f"{agent}: damaged lines",
            f"{saved} holds lines cut by remem repair; delete it when done",
        )
    if cleanup_flag(path).exists():
        yield Finding(
            "warn",
            f"{agent}: compaction",
            "a compaction's clean-up is unfinished; the next open of the store finishes it",
        )
    yield from _check_catalog(folder, path, agent)
    yield from _check_side_files(folder, agent)


def _check_side_files(folder: Path, agent: str) -> Iterator[Finding]:
    """The files beside the log that recall reads: ``traces.jsonl`` and each rule (a
    directory or an unreadable file there makes every recall of the agent fail), the
    ``rules`` folder (a file there hides every rule) and ``vectors.cache`` (ignored:
    recall rebuilds the vectors each time)."""
    traces = folder / "traces.jsonl"
    if traces.exists() and not traces.is_file():
        yield Finding(
            "fail", f"{agent}: traces", f"{traces} is not a file: every recall fails; move it"
        )
    rules = folder / "rules"
    if rules.exists() and not rules.is_dir():
        yield Finding(
            "fail", f"{agent}: rules", f"{rules} is not a folder: no rule reaches a prompt"
        )
    elif rules.is_dir():
        for rule in sorted(rules.glob("*.md")):
            try:
                rule.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                yield Finding(
                    "fail",
                    f"{agent}: rules",
                    f"cannot read rule {rule} ({exc}): every recall fails",
                )
    vectors = folder / "vectors.cache"
    if vectors.exists() and not vectors.is_file():
        yield Finding(
            "warn",
            f"{agent}: vector cache",
            f"{vectors} is not a file: vectors are recomputed at every open; move it",
        )


def _check_log(root: Path, agent: str, path: Path) -> Iterator[Finding]:
    name = f"{agent}: log"
    if path.is_dir():
        yield Finding("fail", name, f"{path} is a directory, not a log file; move it away")
        return
    try:
        data = read_all(path)
    except FileNotFoundError:
        yield Finding("ok", name, "no log yet")
        return
    except OSError as exc:
        yield Finding("fail", name, f"cannot read {path}: {reason(exc)}")
        return
    lines = data.split(b"\n")
    tail = lines.pop()
    problems, oddities = _line_problems(path, lines)
    repair = f"remem --data {root} repair --agent {agent}"
    for problem in problems[:5]:
        yield Finding("fail", name, f"{problem}; to cut damaged lines: {repair}")
    if len(problems) > 5:
        yield Finding("fail", name, f"... and {len(problems) - 5} more damaged lines")
    for oddity in oddities[:5]:
        yield Finding("warn", name, f"{oddity} (the store reads past it)")
    if len(oddities) > 5:
        yield Finding("warn", name, f"... and {len(oddities) - 5} more")
    if tail:
        yield Finding(
            "warn",
            name,
            f"{path} ends with {len(tail)} bytes of an interrupted write (a torn tail): "
            "the next write cuts it and saves it aside",
        )
    if not problems:
        verified = "checksums verified" if oddities else "checksums and order verified"
        yield Finding("ok", name, f"{len(lines)} events, {verified}")


def _line_problems(path: Path, lines: list[bytes]) -> tuple[list[str], list[str]]:
    """Damaged lines (checksum, schema: the store refuses the log), and oddities the
    store reads past (a repeated event id is skipped; an event of a note whose
    remember is missing, e.g. cut by ``remem repair``, changes nothing)."""
    problems: list[str] = []
    oddities: list[str] = []
    eids: set[str] = set()
    notes: set[str] = set()
    for lineno, line in enumerate(lines, 1):
        where = f"{path} line {lineno}"
        try:
            event = from_dict(unseal(line, where), where)
        except StoreError as exc:  # CorruptLog, or UnsupportedLog (a newer remem)
            problems.append(exc.message)
            continue
        if event.eid in eids:
            oddities.append(f"{where}: event id {event.eid} appears twice")
        eids.add(event.eid)
        if isinstance(event, (Remembered, Erased)):
            notes.add(event.note_id)
        elif isinstance(event, NoteEvent) and event.note_id not in notes:
            oddities.append(f"{where}: {event.op} of note {event.note_id} before it exists")
    return problems, oddities


def _check_catalog(folder: Path, path: Path, agent: str) -> Iterator[Finding]:
    from remem.app.agent_state import CATALOG_VERSION

    cache = folder / "catalog.cache"
    if not cache.exists():
        return
    name = f"{agent}: catalog cache"
    try:
        data = orjson.loads(read_all(cache))
        usable = data.get("v") == CATALOG_VERSION and JsonlEventLog(path).resume(data["log"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, StoreError) as exc:
        yield Finding("warn", name, f"{cache} is damaged ({exc}); it is rebuilt from the log")
        return
    if usable:
        yield Finding("ok", name, "matches the log")
    else:
        yield Finding("warn", name, f"{cache} is stale; the next open rebuilds it from the log")


def check_channel_kinds(agent: str, report: dict[str, Any]) -> Iterator[Finding]:
    """Channel kinds an admin should look at (``warn``), from ``Memory.channel_kinds``'s
    ``report``: those first recorded by a member-capped principal (a host token limited
    to members asserted them), and channels the log names with no recorded kind (the
    next call naming one records it)."""
    for channel in report["unconfirmed"]:
        fact = report["recorded"][channel]
        who = f" of {fact['member']}" if fact["member"] else ""
        yield Finding(
            "warn",
            f"{agent}: channel kind",
            f"{channel} was recorded as a {fact['kind']}{who} by a member-capped host; if "
            f"that is right, confirm it: remem channel set-kind {agent} {channel} "
            f"{fact['kind']}{' --member ' + fact['member'] if fact['member'] else ''}",
        )
    unrecorded = report["unrecorded"]
    if unrecorded:
        shown = ", ".join(unrecorded[:UNRECORDED_SHOWN])
        more = (
            f" and {len(unrecorded) - UNRECORDED_SHOWN} more"
            if len(unrecorded) > UNRECORDED_SHOWN
            else ""
        )
        yield Finding(
            "warn",
            f"{agent}: channel kind",
            f"{len(unrecorded)} channel(s) have no recorded kind yet: {shown}{more} (the next "
            f"call naming one records it); set one now: remem channel set-kind {agent} "
            "CHANNEL dm --member U (or group)",
        )


def check_endpoints(classifier: Classifier) -> Iterator[Finding]:
    """The LLM classifier and the embedder as configured, and what remem does without."""
    base = getattr(classifier, "base_url", None)
    if not isinstance(base, str):
        yield Finding("ok", "llm", "none configured: learn() labels with the rule classifier")
    else:
        problem = _probe(base)
        if problem:
            detail = f"{base} unreachable ({problem}): learn() falls back to the rule classifier"
            yield Finding("warn", "llm", detail)
        else:
            yield Finding("ok", "llm", f"{base} reachable")
    yield _check_embedder()


def _check_embedder() -> Finding:
    from remem.providers.embed import embedder_from_env

    choice = os.environ.get("REMEM_EMBEDDINGS", "static").strip().lower() or "static"
    embedder = embedder_from_env()  # what the command line opens with
    if embedder is None:
        if choice in ("off", "none", "0", "false", "no"):
            return Finding("ok", "embeddings", "off (REMEM_EMBEDDINGS): recall is lexical")
        return Finding("warn", "embeddings", f"{choice} unavailable: recall runs lexically")
    url = os.environ.get("REMEM_EMBEDDINGS_URL", "") if choice == "http" else ""
    if url:
        problem = _probe(url)
        if problem:
            return Finding(
                "warn",
                "embeddings",
                f"{url} unreachable ({problem}): recall runs lexically until it answers",
            )
    return Finding("ok", "embeddings", f"{embedder.name} available")


def _probe(base_url: str) -> str:
    """Empty when something answers HTTP at ``base_url`` (any status), else why not."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models", method="GET")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_SECONDS):
            return ""
    except urllib.error.HTTPError:
        return ""  # it answered: reachable (the status is about this probe, not the API)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return str(getattr(exc, "reason", exc))

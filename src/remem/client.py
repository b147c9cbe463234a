"""The HTTP client: :class:`RemoteMemory`, a :class:`~remem.app.memory_impl.MemoryImpl`
that sends each call to a ``remem serve`` service.

>>> mem = Memory.open("http://127.0.0.1:8700", token="rmm_bot_...")   # doctest: +SKIP

``Memory.open`` with an ``http://`` or ``https://`` URL and a ``token`` returns a
``Memory`` over this client, so a host switches between embedded and remote by URL.
Each call sends the envelope's JSON form (``ctx.to_json()``) in ``Remem-Run`` and the
token as ``Authorization: Bearer``; results are read back from their JSON form
(:mod:`remem.schema`) and error bodies become the same :class:`~remem.errors.RememError`
classes (:func:`remem.error_table.error_from_body`), a ``Conflict`` with its ``current``
note. A connection failure is ``StoreError`` (the store cannot be reached now).

It uses only the standard library (``http.client``, one keep-alive connection per
thread), so a host needs no extra to use a service. ``relearn`` with a path reads the
archive here and sends its rows: the server never opens a path a client names.
"""

from __future__ import annotations

import builtins
import http.client
import json
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from remem.app.subscription import Change
from remem.context import RunContext
from remem.core.model import Basis, Kind, Note, Scope, Source, Status, format_ts
from remem.error_table import error_from_body
from remem.errors import (
    BodyTooLarge,
    HeadersTooLarge,
    InvalidInput,
    StoreError,
    TooManyRequests,
    Unauthenticated,
)
from remem.http.routes import BY_NAME, MAX_CHANGES_WAIT
from remem.schema import from_json, to_json

if TYPE_CHECKING:
    from remem.app.commands import Reply
    from remem.app.compaction import CompactionReport
    from remem.app.dm_slot import DmSlot
    from remem.app.member_links import MemberLink
    from remem.core.events import Event
    from remem.core.projection import Revision
    from remem.formation.consolidate import ConsolidationReport
    from remem.formation.extract import LearnReport, Message
    from remem.policy.channel import PolicyChange
    from remem.policy.config import Limits
    from remem.prompt import Prompt
    from remem.recall.engine import Recall
    from remem.recall.trace import Trace
    from remem.runwrites import Written
    from remem.store.base import TornTail
    from remem.tools.result import ToolResult

__all__ = ["RemoteMemory"]


def _plain(value: Any) -> Any:
    """An argument as JSON: enums by value, times as text, sources as their form."""
    if value is None or isinstance(value, str | bool | int | float):
        return value.value if isinstance(value, Scope | Kind | Basis | Status) else value
    if isinstance(value, datetime):
        return format_ts(value)
    if isinstance(value, Source):
        return value.to_dict()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    return to_json(value)


class RemoteMemory:
    """``Memory``'s methods over HTTP (see the module docstring).

    ``test_clock``: sent as each request's ``Remem-Test-Now``; only a server started
    with ``remem serve --test-clock`` reads it (the contract suite moves time by hand)."""

    def __init__(
        self,
        url: str,
        *,
        token: str,
        timeout: float = 60.0,
        test_clock: Callable[[], datetime] | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInput(f"{url[:100]!r} is not an http:// or https:// service URL")
        if not isinstance(token, str) or not token:
            raise InvalidInput("a remote Memory needs token=: one from `remem tokens create`")
        self._parts = parts
        self._base = parts.path.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._test_clock = test_clock
        self._local = threading.local()

    # -- transport ------------------------------------------------------------------------

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            cls = (
                http.client.HTTPSConnection
                if self._parts.scheme == "https"
                else http.client.HTTPConnection
            )
            conn = cls(self._parts.hostname or "", self._parts.port, timeout=self._timeout)
            self._local.conn = conn
        return conn

    def request(
        self, verb: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, Any]:
        """One request (retried once on a connection the server closed): status, JSON."""
        status, _, data = self._exchange(verb, path, headers, body)
        return status, data

    def _exchange(
        self, verb: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, http.client.HTTPMessage, Any]:
        """:meth:`request`, with the response's headers."""
        headers = {"Authorization": f"Bearer {self._token}", **headers}
        if self._test_clock is not None:
            headers["Remem-Test-Now"] = format_ts(self._test_clock())
        if body is not None:
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(verb, self._base + path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, OSError) as exc:
                conn.close()
                self._local.conn = None
                if attempt == 2 or not isinstance(exc, ConnectionError | http.client.BadStatusLine):
                    raise StoreError(
                        f"cannot reach the remem service at {self._parts.netloc}: {exc}",
                        applied=None,
                    ) from None
        return response.status, response.headers, orjson.loads(data) if data else None

    def _call(self, method: str, ctx: RunContext | None, /, **values: Any) -> Any:
        route = BY_NAME[method]
        if not isinstance(ctx, RunContext):
            raise InvalidInput("the first argument is the run's RunContext")
        values.setdefault("agent", ctx.agent)
        path = route.full_path
        for param in route.path_params:
            path = path.replace("{" + param + "}", urllib.parse.quote(str(values[param]), safe=""))
        query = {k: values[k] for k in route.query if values.get(k) is not None}
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {"Remem-Run": json.dumps(ctx.to_json())}
        if route.idempotent:  # one key a call: the retry after a dropped connection reuses it
            headers["Idempotency-Key"] = secrets.token_hex(16)
        version = values.get("if_version")
        if route.if_match and version is not None:
            if type(version) is not int:
                raise InvalidInput(f"if_version is a note's version (an int), not {version!r:.40}")
            headers["If-Match"] = f'"{version}"'
        body = {k: _plain(values[k]) for k in route.body if k in values}
        raw = json.dumps(body).encode() if route.body or route.writes else None
        status, response_headers, data = self._exchange(route.verb, path, headers, raw)
        if status >= 400:
            raise self._error(status, data, response_headers.get("Retry-After"))
        return from_json(route.returns, data)

    @staticmethod
    def _error(status: int, data: Any, retry_after: str | None = None) -> Exception:
        if status == 401:
            message = data.get("message") if isinstance(data, dict) else None
            return Unauthenticated(str(message or "the service refused the token (401)"))
        if status == 429:
            seconds = float(retry_after) if retry_after and retry_after.isdigit() else 1.0
            return error_from_body(data, retry_after=seconds)
        if status in (413, 431) and not (isinstance(data, dict) and "code" in data):
            # A proxy's answer, not the service's error body: the same class all the same.
            if status == 413:
                return BodyTooLarge("the request body is over the service's size limit (413)")
            return HeadersTooLarge("the request's headers are over the service's limits (431)")
        return error_from_body(data)

    # -- MemoryImpl -----------------------------------------------------------------------

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def repairs(self) -> builtins.list[TornTail]:
        """Always empty here: torn tails are the server's (``remem doctor`` there)."""
        return []

    def limits(self, ctx: RunContext, channel: str | None = None) -> Limits:
        result: Limits = self._call("limits", ctx, channel=channel)
        return result

    def effective_policy(self, ctx: RunContext) -> dict[str, Any]:
        result: dict[str, Any] = self._call("effective_policy", ctx)
        return result

    def set_channel_policy(self, ctx: RunContext, channel: str, **values: Any) -> PolicyChange:
        result: PolicyChange = self._call("set_channel_policy", ctx, channel=channel, values=values)
        return result

    def channel_policy(self, ctx: RunContext, channel: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("channel_policy", ctx, channel=channel)
        return result

    def set_channel_kind(
        self, ctx: RunContext, channel: str, kind: str, *, member: str | None = None
    ) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            "set_channel_kind", ctx, channel=channel, kind=kind, member=member
        )
        return result

    def channel_kinds(self, ctx: RunContext) -> dict[str, Any]:
        result: dict[str, Any] = self._call("channel_kinds", ctx)
        return result

    def set_my_preferences(
        self,
        ctx: RunContext,
        *,
        inferred: bool | None = None,
        cross_channel: bool | None = None,
        tool_writes: str | None = None,
    ) -> PolicyChange:
        result: PolicyChange = self._call(
            "set_my_preferences",
            ctx,
            inferred=inferred,
            cross_channel=cross_channel,
            tool_writes=tool_writes,
        )
        return result

    def pending(self, ctx: RunContext) -> builtins.list[Note]:
        result: builtins.list[Note] = self._call("pending", ctx)
        return result

    def approve(self, ctx: RunContext, note_id: str) -> Note:
        result: Note = self._call("approve", ctx, note_id=note_id)
        return result

    def reject(self, ctx: RunContext, note_id: str) -> Note:
        result: Note = self._call("reject", ctx, note_id=note_id)
        return result

    def remember(
        self,
        ctx: RunContext,
        text: str,
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        kind: Kind | str | None = None,
        basis: Basis | str = Basis.EXPLICIT,
        subject: str | None = None,
        tags: Iterable[str] = (),
        pinned: bool = False,
        expires_at: datetime | str | None = None,
        source: Source | dict[str, Any] | str | None = None,
        said_at: datetime | str | None = None,
    ) -> Note:
        values: dict[str, Any] = dict(scope=scope, scope_id=scope_id, kind=kind, basis=basis)
        values.update(subject=subject, pinned=pinned, expires_at=expires_at)
        values.update(source=source, said_at=said_at)
        values["tags"] = [tags] if isinstance(tags, str) else builtins.list(tags)
        return self._note("remember", ctx, text=text, **values)

    def _note(self, method: str, ctx: RunContext, /, **values: Any) -> Note:
        note: Note = self._call(method, ctx, **values)
        return note

    def _change(self, method: str, ctx: RunContext, note_id: str, /, **values: Any) -> Note:
        return self._note(method, ctx, note_id=note_id, **values)

    def forget(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return self._change("forget", ctx, note_id, if_version=if_version)

    def correct(
        self, ctx: RunContext, note_id: str, text: str, *, if_version: int | None = None
    ) -> Note:
        return self._change("correct", ctx, note_id, text=text, if_version=if_version)

    def move(
        self,
        ctx: RunContext,
        note_id: str,
        *,
        scope: Scope | str,
        scope_id: str | None = None,
        if_version: int | None = None,
    ) -> Note:
        return self._change(
            "move", ctx, note_id, scope=scope, scope_id=scope_id, if_version=if_version
        )

    def disable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return self._change("disable", ctx, note_id, if_version=if_version)

    def enable(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return self._change("enable", ctx, note_id, if_version=if_version)

    def pin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return self._change("pin", ctx, note_id, if_version=if_version)

    def unpin(self, ctx: RunContext, note_id: str, *, if_version: int | None = None) -> Note:
        return self._change("unpin", ctx, note_id, if_version=if_version)

    def get(self, ctx: RunContext, note_id: str) -> Note:
        result: Note = self._call("get", ctx, note_id=note_id)
        return result

    def list(
        self,
        ctx: RunContext,
        *,
        scope: Scope | str | None = None,
        scope_id: str | None = None,
        status: Status | str | None = "active",
        tag: str | None = None,
    ) -> builtins.list[Note]:
        wanted = "all" if status is None else _plain(status)
        result: builtins.list[Note] = self._call(
            "list", ctx, scope=_plain(scope), scope_id=scope_id, status=wanted, tag=tag
        )
        return result

    def status_of(self, ctx: RunContext, note: Note, now: datetime | None = None) -> Status:
        result: Status = self._call("status_of", ctx, note=to_json(note), now=now)
        return result

    def history(self, ctx: RunContext, note_id: str) -> builtins.list[Event]:
        result: builtins.list[Event] = self._call("history", ctx, note_id=note_id)
        return result

    def compact(self, ctx: RunContext) -> CompactionReport:
        result: CompactionReport = self._call("compact", ctx)
        return result

    def recall(
        self,
        ctx: RunContext,
        query: str = "",
        *,
        max_chars: int | None = None,
        tag: str | None = None,
    ) -> Recall:
        result: Recall = self._call("recall", ctx, query=query, max_chars=max_chars, tag=tag)
        return result

    def compile(
        self,
        ctx: RunContext,
        message: str,
        *,
        identity: str = "",
        purpose: str = "",
        policy: str = "",
        briefing: str = "",
    ) -> Prompt:
        result: Prompt = self._call(
            "compile",
            ctx,
            message=message,
            identity=identity,
            purpose=purpose,
            policy=policy,
            briefing=briefing,
        )
        return result

    def explain(self, ctx: RunContext, run_id: str) -> Trace:
        result: Trace = self._call("explain", ctx, run_id=run_id)
        return result

    def writes(self, ctx: RunContext, run_id: str) -> builtins.list[Written]:
        result: builtins.list[Written] = self._call("writes", ctx, run_id=run_id)
        return result

    def tool_specs(
        self, ctx: RunContext, *, style: str = "openai"
    ) -> builtins.list[dict[str, Any]]:
        result: builtins.list[dict[str, Any]] = self._call("tool_specs", ctx, style=style)
        return result

    def run_tool(
        self, ctx: RunContext, name: str, arguments: dict[str, Any] | None = None
    ) -> ToolResult:
        try:
            sent = _plain(arguments)
        except TypeError:
            raise InvalidInput("tool arguments are JSON values (the model's parsed call)") from None
        result: ToolResult = self._call("run_tool", ctx, name=name, arguments=sent)
        return result

    def tags(self, ctx: RunContext) -> dict[str, int]:
        result: dict[str, int] = self._call("tags", ctx)
        return result

    def rules(self, ctx: RunContext) -> dict[str, str]:
        result: dict[str, str] = self._call("rules", ctx)
        return result

    def set_rule(self, ctx: RunContext, name: str, content: str) -> None:
        self._call("set_rule", ctx, name=name, content=content)

    def learn(
        self,
        ctx: RunContext,
        messages: Sequence[Message | dict[str, Any]],
        *,
        summary: str | None = None,
    ) -> LearnReport:
        rows = [_plain(m) for m in messages]
        result: LearnReport = self._call("learn", ctx, messages=rows, summary=summary)
        return result

    def relearn(
        self, ctx: RunContext, archive: str | Path | Iterable[dict[str, Any]]
    ) -> LearnReport:
        rows = _archive_rows(archive)
        result: LearnReport = self._call("relearn", ctx, rows=rows)
        return result

    def supersede(self, ctx: RunContext, old_id: str, new_id: str) -> Note:
        result: Note = self._call("supersede", ctx, note_id=old_id, new_id=new_id)
        return result

    def revisions(self, ctx: RunContext) -> builtins.list[Revision]:
        result: builtins.list[Revision] = self._call("revisions", ctx)
        return result

    def undo(self, ctx: RunContext, revision_id: str) -> Revision:
        result: Revision = self._call("undo", ctx, revision_id=revision_id)
        return result

    def undo_run(self, ctx: RunContext, run_id: str) -> builtins.list[Revision]:
        result: builtins.list[Revision] = self._call("undo_run", ctx, run_id=run_id)
        return result

    def consolidate(self, ctx: RunContext, dry_run: bool = False) -> ConsolidationReport:
        result: ConsolidationReport = self._call("consolidate", ctx, dry_run=dry_run)
        return result

    def dm_slot(self, ctx: RunContext) -> DmSlot:
        result: DmSlot = self._call("dm_slot", ctx)
        return result

    def put_dm_slot(self, ctx: RunContext, blob: str, *, if_version: int) -> DmSlot:
        if type(if_version) is not int:  # If-Match carries it: checked before it is sent
            raise InvalidInput(
                f"if_version is the slot version read (an int), not {if_version!r:.40}"
            )
        result: DmSlot = self._call("put_dm_slot", ctx, blob=blob, if_version=if_version)
        return result

    def command(self, ctx: RunContext, text: str) -> Reply | None:
        result: Reply | None = self._call("command", ctx, text=text)
        return result

    def member_link(self, ctx: RunContext) -> MemberLink:
        result: MemberLink = self._call("member_link", ctx)
        return result

    def agents(self) -> builtins.list[str]:
        status, data = self.request("GET", "/v1/agents", {}, None)
        if status >= 400:
            raise self._error(status, data)
        return [str(a) for a in data]

    def trash_agent(self, ctx: RunContext, agent: str) -> str:
        result: str = self._call("trash_agent", ctx, target=agent)
        return result

    def subscribe(self, ctx: RunContext, *, after: int | None = None) -> RemoteSubscription:
        return RemoteSubscription(self, ctx, after)


class RemoteSubscription:
    """:meth:`remem.Memory.subscribe` over HTTP: long polls of ``GET …/changes`` from the
    position read up to (fixed at once when subscribing "from now on", ``after=None``).
    :meth:`close` ends iteration after the request in flight (at most ``wait`` seconds);
    a :meth:`poll` waits at most ``MAX_CHANGES_WAIT`` seconds a request. A 429 (the
    token holds all the waits the server allows it) is no failure: the poll sleeps the
    response's ``Retry-After`` and asks again while its ``timeout`` lasts."""

    def __init__(self, remote: RemoteMemory, ctx: RunContext, after: int | None) -> None:
        if after is not None and (type(after) is not int or after < 0):
            raise InvalidInput("after is a change's seq (an int ≥ 0) or None")
        self._remote, self._ctx, self._closed = remote, ctx, False
        self.after = after if after is not None else self._fetch(None, 0)[0]

    def _fetch(self, after: int | None, wait: int) -> tuple[int, builtins.list[Change]]:
        data = self._remote._call("subscribe", self._ctx, after=after, wait=wait)
        return int(data["after"]), [from_json(Change, c) for c in data["changes"]]

    def poll(self, timeout: float = 0.0) -> builtins.list[Change]:
        deadline = time.monotonic() + timeout
        while not self._closed:
            left = deadline - time.monotonic()
            wait = max(0, min(MAX_CHANGES_WAIT, int(left + 0.999)))
            try:
                self.after, changes = self._fetch(self.after, wait)
                return changes
            except TooManyRequests as exc:
                # Back off as the server asks (never past this poll's timeout, and at
                # least a moment, so a loop of polls cannot hammer it).
                time.sleep(max(0.05, min(exc.retry_after, deadline - time.monotonic())))
                if time.monotonic() >= deadline:
                    return []
        return []

    def __iter__(self) -> Iterator[Change]:
        while not self._closed:
            yield from self.poll(MAX_CHANGES_WAIT)

    def close(self) -> None:
        self._closed = True

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> RemoteSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _archive_rows(archive: str | Path | Iterable[dict[str, Any]]) -> builtins.list[Any]:
    """The archive's rows: a path is read here, line by line (the server never opens it)."""
    if not isinstance(archive, str | Path):
        if isinstance(archive, bytes | dict) or not isinstance(archive, Iterable):
            raise InvalidInput("an archive is a path to a JSONL file or a list of message dicts")
        return builtins.list(archive)
    try:
        lines = Path(archive).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"cannot read archive {str(archive)[:200]!r}: {exc}") from None

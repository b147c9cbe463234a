"""The owner's command line: a thin shell over :class:`remem.Memory`.

Every command runs as the owner (``RunContext.owner``) on the data directory
given by ``--data`` or ``$REMEM_DATA``. Errors print one line and exit with the
code from :data:`EXIT_CODES`; there are no tracebacks for user mistakes.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from remem.context import RunContext
from remem.core.events import Event, to_dict
from remem.core.model import Note
from remem.core.text import display
from remem.error_table import ERROR_TABLE
from remem.error_table import exit_code as _table_exit_code
from remem.errors import InvalidInput, NotFound, RememError, StoreError
from remem.providers.embed import embedder_setting_from_env
from remem.schema import to_json
from remem.service import Memory

#: Error class → exit code, most specific first: read from the one table every adapter
#: shares (:data:`remem.error_table.ERROR_TABLE`).
EXIT_CODES: list[tuple[type[RememError], int]] = [
    (cls, row.exit_code)
    for cls, row in sorted(ERROR_TABLE.items(), key=lambda item: -len(item[0].__mro__))
]

F = TypeVar("F", bound=Callable[..., Any])


def exit_code(error: RememError) -> int:
    return _table_exit_code(error)


def handle_errors(func: F) -> F:
    """Turn remem errors into one line on stderr and the table's exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except RememError as exc:
            # A store's detail names where (host and database, never a password): the
            # operator's own terminal may see it, a service's callers never do.
            text = exc.detail if isinstance(exc, StoreError) and exc.detail else str(exc)
            click.echo(f"remem: {exc.code}: {display(text)}", err=True)
            sys.exit(exit_code(exc))
        finally:
            warn_repairs()

    return wrapper  # type: ignore[return-value]


def warn_repairs() -> None:
    """Say on stderr which torn tails this command cut from a log (after a crash)."""
    click_ctx = click.get_current_context(silent=True)
    obj = click_ctx.find_object(Ctx) if click_ctx is not None else None
    if obj is None or obj._mem is None:
        return
    for tail in obj._mem.repairs():
        click.echo(
            f"remem: warning: cut a torn tail of {tail.size} bytes (an interrupted write) "
            f"from {tail.log}; saved in {tail.saved_to} (remem doctor lists it)",
            err=True,
        )


def awaiting_lines(mem: Memory, agents: list[str]) -> list[str]:
    """One line per agent with forgotten notes whose content is still on disk (compaction,
    or a member's erasure, has not removed it yet), saying how to erase it (for
    ``remem ls`` and ``remem doctor``)."""
    lines = []
    for name in agents:
        waiting = mem.list(RunContext.owner(name), status="forgotten")
        if waiting:
            lines.append(
                f"{len(waiting)} forgotten note(s) of agent {name} still on disk, waiting for "
                f"physical erasure: run `remem compact --agent {name}`"
            )
    return lines


def emit_json(value: Any) -> None:
    """Print a result's JSON form (:mod:`remem.schema`); plain JSON values as they are."""
    click.echo(json.dumps(to_json(value), indent=2, ensure_ascii=False))


def note_line(note: Note) -> str:
    """One line per note for people: every control or invisible character escaped (output
    is inert: a note cannot move the cursor, recolour the terminal or reorder text)."""
    where = note.scope.value + (f":{display(note.scope_id)}" if note.scope_id else "")
    flags = " pinned" if note.pinned else ""
    status = "" if note.status.value == "active" else f" [{note.status.value}]"
    text = display(note.text) or "(forgotten)"
    return (
        f"{note.id}  {where:<28} {note.kind.value:<11} {note.basis.value:<8}{flags}{status}  {text}"
    )


def event_line(event: Event) -> str:
    data = to_dict(event)
    detail = {k: v for k, v in data.items() if k not in ("op", "v", "eid", "ts", "run_id")}
    return display(f"{data['ts']}  {event.op:<10} {json.dumps(detail, ensure_ascii=False)}")


class Ctx:
    """The opened data directory, shared by subcommands."""

    def __init__(self, data: str | None) -> None:
        self.data = data
        self._mem: Memory | None = None

    @property
    def mem(self) -> Memory:
        if self._mem is None:
            if not self.data:
                raise InvalidInput(
                    "no data directory: pass --data DIR or set REMEM_DATA "
                    "(e.g. export REMEM_DATA=~/remem-data)"
                )
            # The environment is the command line's default for embeddings (REMEM_EMBEDDINGS*).
            self._mem = Memory.open(self.data, embedder=embedder_setting_from_env())
        return self._mem

    def owner(self, agent: str) -> RunContext:
        return RunContext.owner(agent)

    def locate(self, note_id: str) -> tuple[RunContext, Note]:
        """Find which agent holds ``note_id``."""
        for agent in self.mem.agents():
            ctx = self.owner(agent)
            try:
                return ctx, self.mem.get(ctx, note_id)
            except NotFound:
                continue
        raise NotFound(f"no note {note_id} in any agent under {self.data}")


pass_ctx = click.make_pass_decorator(Ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data",
    envvar="REMEM_DATA",
    metavar="DIR",
    help="Data directory (default: $REMEM_DATA).",
)
@click.version_option(package_name="remem")
@click.pass_context
def main(click_ctx: click.Context, data: str | None) -> None:
    """remem: governed interaction memory for AI agents (owner tools).

    \b
    Example:
      remem --data ./remem-data ls --agent yuko
    """
    click_ctx.obj = Ctx(data)

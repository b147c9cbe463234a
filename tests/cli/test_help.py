"""Every CLI command and subcommand has ``--help`` with an example (DESIGN §8).

The commands are found by walking the click group, so a new command without an
example fails here until it has one.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

import click
from click.testing import CliRunner

from remem.cli import main


def commands(group: click.Command = main, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command under ``group`` (``()`` is ``remem`` itself)."""
    yield path
    if isinstance(group, click.Group):
        for name, command in sorted(group.commands.items()):
            if not command.hidden:
                yield from commands(command, (*path, name))


def examples(help_text: str) -> list[list[str]]:
    """The command lines under the help's ``Example:`` / ``Examples:`` heading, as words."""
    lines = help_text.splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip() in ("Example:", "Examples:")]
    found = []
    for head in heads:
        for line in lines[head + 1 :]:
            if not line.strip():
                break
            found.append(shlex.split(line.strip()))
    return found


def runs_command(words: list[str], path: tuple[str, ...]) -> bool:
    """Whether an example line is ``remem [--data DIR] <path> …``."""
    if words[:1] != ["remem"]:
        return False
    rest = words[1:]
    if rest[:1] == ["--data"]:
        rest = rest[2:]
    return tuple(rest[: len(path)]) == path


def test_every_command_has_help_with_an_example_of_itself() -> None:
    runner = CliRunner()
    missing = []
    paths = list(commands())
    for path in paths:
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        if not any(runs_command(words, path) for words in examples(result.output)):
            missing.append(" ".join(("remem", *path)))
    assert missing == [], f"--help without an 'Example:' of the command itself: {missing}"
    assert len(paths) > 30 and ("rules", "set") in paths  # subcommands are walked too


def test_the_check_sees_a_command_without_an_example() -> None:
    """Not vacuous: a command whose help has no example, or an example of another
    command, is reported."""

    @click.group()
    def group() -> None:
        """A group.

        \b
        Example:
          remem tool sub --flag
        """

    @group.command("sub")
    def sub() -> None:
        """A subcommand with no example."""

    runner = CliRunner()
    assert ("sub",) in list(commands(group))
    plain = runner.invoke(group, ["sub", "--help"]).output
    assert examples(plain) == []
    listed = examples(runner.invoke(group, ["--help"]).output)
    assert listed == [["remem", "tool", "sub", "--flag"]]
    assert not runs_command(listed[0], ("sub",)) and runs_command(listed[0], ("tool", "sub"))

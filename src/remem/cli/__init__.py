"""The owner's command line (``remem …``): a thin shell over :class:`remem.Memory`.

:mod:`remem.cli.main` holds the ``main`` group, its options and the helpers every command
shares (errors → exit codes, the opened data directory, one-line renderings). Each command
module (:mod:`~remem.cli.notes`, :mod:`~remem.cli.recall`, :mod:`~remem.cli.formation`,
:mod:`~remem.cli.tools`, :mod:`~remem.cli.doctor`, :mod:`~remem.cli.server`) adds its
commands to ``main`` when imported; importing this package imports them all, so
``remem.cli:main`` (the console script) has every command.
"""

# Command registration: each command module adds its commands to ``main`` on import. They
# import ``remem.cli.main``, never this package, so the registration is no import cycle.
from remem.cli import database, doctor, formation, mcp_server, notes, recall, server, tools
from remem.cli.main import EXIT_CODES, exit_code, main

__all__ = [
    "EXIT_CODES",
    "database",
    "doctor",
    "exit_code",
    "formation",
    "main",
    "mcp_server",
    "notes",
    "recall",
    "server",
    "tools",
]

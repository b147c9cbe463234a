"""``python -m remem.cli``: the same as the ``remem`` command."""

from remem.cli import main

main(prog_name="remem")

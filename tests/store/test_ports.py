"""The storage ports are not file-shaped: nothing outside ``remem.store`` probes a backend
or gets a path from it, and no port member takes or returns a path."""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import remem
from remem.store import base

SRC = Path(remem.__file__).parent


def test_no_module_outside_store_probes_a_backend_with_getattr() -> None:
    probes = []
    for path in SRC.rglob("*.py"):
        if path.parent.name == "store":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
                target = ast.unparse(node.args[0]) if node.args else ""
                if "backend" in target:
                    probes.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
    assert probes == []


def test_no_port_member_takes_or_returns_a_path() -> None:
    ports = [base.Backend, base.EventStore, base.EventLog, base.TraceLog, base.LogTransaction]
    ports += [base.ConfigStore, base.Cache]
    for port in ports:
        for name, member in inspect.getmembers(port, inspect.isfunction):
            hints = typing.get_type_hints(member, vars(base))
            assert Path not in [*hints.values(), *typing.get_args(hints.get("return"))], (
                f"{port.__name__}.{name}"
            )

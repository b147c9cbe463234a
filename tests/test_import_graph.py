"""The package's import graph (DESIGN §3): no cycles, and nothing below the facade
imports it.

The graph is built with ``ast`` from every ``import`` in the package, including those
inside functions and under ``TYPE_CHECKING``: a deferred import is still a dependency.
One kind of edge is left out: a package's ``__init__`` importing its own submodules
(that is how a package re-exports). The CLI's command registration is such an edge:
``remem.cli`` (the package) imports its command modules, each of which imports
``remem.cli.main`` and adds its commands to the group there, so no CLI module imports
another that imports it back.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import remem

PACKAGE = Path(remem.__file__).parent
#: Modules allowed to import ``Memory`` / ``remem.service``: the facade's users.
ABOVE_THE_FACADE = ("remem", "remem.service", "remem.cli", "remem.demo", "remem.testing")
ADAPTERS = ("remem.http", "remem.mcp", "remem.web", "remem.e2ee")
FACADE = "remem.service"


def module_name(path: Path) -> str:
    parts = ["remem", *path.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(tree: ast.AST, name: str, is_package: bool) -> Iterator[tuple[str, list[str]]]:
    """(module, names imported from it) for every import statement, resolved."""
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            yield base, [alias.name for alias in node.names]


def graph() -> dict[str, set[str]]:
    """Each module of the package → the package modules it imports."""
    known = modules()
    edges: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for base, names in _imports(tree, name, path.name == "__init__.py"):
            if base != "remem" and not base.startswith("remem."):
                continue
            targets = [f"{base}.{n}" for n in names if f"{base}.{n}" in known]
            if len(targets) < len(names) or not names:
                targets.append(base)  # names from the module itself (or `import base`)
            for target in targets:
                if target in known and target != name and not _left_out(name, target):
                    edges[name].add(target)
    return edges


def _left_out(source: str, target: str) -> bool:
    return target.startswith(source + ".")  # a package re-exporting its submodules


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(edges.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles(graph()) == []


def test_nothing_below_the_facade_imports_it() -> None:
    edges = graph()
    offenders = sorted(
        name for name, targets in edges.items() if FACADE in targets and not _facade_user(name)
    )
    assert offenders == [], f"modules below Memory that import remem.service: {offenders}"


def _facade_user(name: str) -> bool:
    if name == "remem":
        return True
    return any(
        name == top or name.startswith(top + ".") for top in (*ABOVE_THE_FACADE[1:], *ADAPTERS)
    )


def test_the_checks_see_a_cycle_and_a_climb() -> None:
    """The checks are not vacuous: a two-module loop is a cycle; an import of the
    facade from a use case is found."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    tree = ast.parse("def f():\n    from remem.service import Memory\n")
    assert ("remem.service", ["Memory"]) in list(_imports(tree, "remem.app.change", False))
    assert not _facade_user("remem.app.change")

"""Every refusal is a rule of ``remem.policy.authz``: no module but that one raises or
builds a ``Denied`` (the others call ``authz.require(decision)``)."""

from __future__ import annotations

import ast
from pathlib import Path

import remem

PACKAGE = Path(remem.__file__).parent
HOME = PACKAGE / "policy" / "authz.py"
DEFINED = PACKAGE / "errors.py"  # where the class is declared


def denied_sites(tree: ast.AST) -> set[int]:
    """Lines that raise or construct ``Denied`` (by name or as an attribute)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name == "Denied":
                lines.add(node.lineno)
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc
            name = exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", None)
            if name == "Denied":
                lines.add(node.lineno)
    return lines


def test_denied_is_raised_only_in_policy_authz() -> None:
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in (HOME, DEFINED):
            continue
        for line in sorted(denied_sites(ast.parse(path.read_text(encoding="utf-8")))):
            outside.append(f"{path.relative_to(PACKAGE)}:{line}")
    assert not outside, f"Denied raised outside policy/authz.py: {outside}"
    assert denied_sites(ast.parse(HOME.read_text(encoding="utf-8")))


def test_the_check_sees_a_denied_raised_elsewhere() -> None:
    """The walker finds both spellings, so the test above cannot pass vacuously."""
    code = "from remem import errors\nraise Denied('x', rule='r')\nerrors.Denied('y')\n"
    assert denied_sites(ast.parse(code)) == {2, 3}

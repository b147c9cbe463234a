"""Dependencies point inward (DESIGN §3): the core knows nothing of files, CLIs or models."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import remem

PACKAGE = Path(remem.__file__).parent
BLOCKED = ("click", "numpy", "wordllama")
LIGHT_MODULES = (
    "remem.core.model",
    "remem.core.events",
    "remem.core.projection",
    "remem.context",
    "remem.policy.authz",
    "remem.recall.rank",
)
#: What ``remem.core`` may never import: outer layers and adapters.
FORBIDDEN_FOR_CORE = (
    "remem.store",
    "remem.cli",
    "remem.service",
    "remem.providers",
    "remem.http",
    "remem.mcp",
    "remem.web",
)

_PROBE = textwrap.dedent(
    """
    import importlib
    import importlib.abc
    import sys

    BLOCKED = {blocked!r}

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())
    for name in BLOCKED:
        sys.modules.pop(name, None)

    for module in {modules!r}:
        importlib.import_module(module)
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
    assert not leaked, leaked
    print("ok")
    """
)


def test_light_modules_import_without_heavy_dependencies() -> None:
    code = _PROBE.format(blocked=BLOCKED, modules=LIGHT_MODULES)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_the_blocker_really_blocks() -> None:
    """Guard against a vacuous pass: the probe must fail for a module that needs click."""
    code = _PROBE.format(blocked=BLOCKED, modules=("remem.cli",))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode != 0
    assert "blocked in this test" in proc.stderr


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against remem.core
                base = ["remem", "core"][: max(0, 2 - (node.level - 1))]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return found


def test_core_imports_no_outer_layer() -> None:
    sources = sorted((PACKAGE / "core").glob("*.py"))
    assert sources, "remem/core has no modules?"
    violations = []
    for path in sources:
        for lineno, module in _imported_modules(path):
            if any(module == f or module.startswith(f + ".") for f in FORBIDDEN_FOR_CORE):
                violations.append(f"{path.name}:{lineno} imports {module}")
            if module.split(".")[0] in BLOCKED:
                violations.append(f"{path.name}:{lineno} imports {module}")
    assert violations == []


def test_the_ast_check_sees_violations(tmp_path: Path) -> None:
    """The checker itself catches each import form (so an empty result means something)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import remem.store.jsonl\n"
        "from remem.service import Memory\n"
        "from remem import cli\n"
        "from ..providers import x\n"
        "def f():\n    import click\n",
        encoding="utf-8",
    )
    modules = [m for _, m in _imported_modules(sample)]
    assert "remem.store.jsonl" in modules
    assert "remem.service" in modules
    assert "remem.cli" in modules
    assert "remem.providers" in modules
    assert "click" in modules


#: The server extra's libraries: only remem.http.app (what `remem serve` runs) needs them.
SERVER_LIBRARIES = ("fastapi", "uvicorn", "starlette", "pydantic", "httpx")
#: Importable with the core install alone: the library, the HTTP client (standard library
#: only), the token logic and the command line (which imports uvicorn only inside serve).
WITHOUT_SERVER_EXTRA = (
    "remem",
    "remem.client",
    "remem.http",
    "remem.http.tokens",
    "remem.http.routes",
    "remem.http.openapi",
    "remem.cli",
)


def test_the_core_client_and_cli_import_without_the_server_extra() -> None:
    code = _PROBE.format(blocked=SERVER_LIBRARIES, modules=WITHOUT_SERVER_EXTRA)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_the_server_app_is_what_needs_the_extra() -> None:
    """Not vacuous: the app module itself needs FastAPI."""
    code = _PROBE.format(blocked=SERVER_LIBRARIES, modules=("remem.http.app",))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode != 0
    assert "blocked in this test" in proc.stderr

"""The JSONL backend's rules: one hand-editable markdown file per rule,
``<data>/agents/<agent>/rules/<name>.md``, each written by an atomic replace (0600)."""

from __future__ import annotations

import os
from pathlib import Path

from remem.errors import StoreError
from remem.store.atomic import replace_file
from remem.store.durable import ensure_dir, reason
from remem.store.rules import check_rule_name


def read_rule_files(rules_dir: Path) -> dict[str, str]:
    """Every rule in ``rules_dir`` by name (none when the directory does not exist)."""
    if not os.path.isdir(rules_dir):
        return {}
    out = {}
    for path in sorted(rules_dir.glob("*.md")):
        try:
            out[path.stem] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read rule {path}: {exc}") from None
    return out


def write_rule_file(rules_dir: Path, name: str, content: str) -> None:
    """Replace rule ``name`` with ``content`` (empty content removes the rule)."""
    check_rule_name(name)
    path = rules_dir / f"{name}.md"
    try:
        if not content:
            path.unlink(missing_ok=True)
            return
        ensure_dir(rules_dir)
        replace_file(path, [content.encode("utf-8")])
    except OSError as exc:
        raise StoreError(
            f"cannot write rule {path}: {reason(exc)} (the rule was not changed)"
        ) from None

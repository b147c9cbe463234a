"""The lazily folded catalog state answers exactly as the pure fold it extends."""

from __future__ import annotations

import ast
from pathlib import Path

import remem
from remem.core.events import Event
from remem.core.ids import new_id
from remem.core.projection import State
from remem.store.catalog import CatalogState
from remem.store.memory import MemoryBackend
from remem.testing.contract import every_event_type, remembered


def _events() -> list[Event]:
    first, second, third = new_id("note"), new_id("note"), new_id("note")
    return [
        *every_event_type(first, second),
        remembered("Another one, in another scope.", note_id=third, scope_id="discord:7"),
    ]


def _view(state: State) -> object:
    state.ensure_all()
    return (
        sorted(
            (n.id, n.text, n.status, n.version, n.scope, n.scope_id) for n in state.notes.values()
        ),
        {k: sorted(v) for k, v in state.scopes.items()},
        state.channel_policies,
        state.preferences,
        sorted((r.id, r.undone) for r in state.revisions.values()),
        state.erased,
    )


def test_the_catalog_state_folds_what_the_pure_fold_folds() -> None:
    events = _events()
    pure = State("yuko")
    for ev in events:
        pure.apply(ev)

    log = MemoryBackend().event_log("yuko")
    with log.transaction() as txn:
        txn.append(events)
    lazy = CatalogState("yuko", loader=log.read_at)
    log.restart()
    log.scan_new(lazy.observe, lambda: None)
    assert not lazy.loaded  # nothing folded yet: only cataloged
    assert _view(lazy) == _view(pure)


def test_the_pure_fold_knows_no_storage() -> None:
    """core/ imports nothing from store/, and the fold takes no loader."""
    core = Path(remem.__file__).parent / "core"
    for path in core.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("remem.store"), path.name
    assert "loader" not in State.__init__.__code__.co_varnames

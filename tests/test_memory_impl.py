"""``Memory`` is a facade over a :class:`~remem.app.memory_impl.MemoryImpl`: a second
implementation plugged into it receives every public call, unchanged.

The public methods are found by introspection, so a method added to ``Memory``
without its delegation (or without its line in the protocol) fails here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from remem import InvalidInput, Memory, Role
from remem.app.local import LocalMemory
from remem.app.memory_impl import MemoryImpl

#: Methods that build or narrow a local Memory rather than delegate: ``open`` builds the
#: local implementation; ``for_principal`` makes a view of the local engine (a remote
#: Memory is already bound to the principal its token names).
LOCAL_ONLY = frozenset({"open", "for_principal"})


def facade_methods() -> list[str]:
    """Every public method of ``Memory`` that delegates to its implementation."""
    return sorted(
        name
        for name, member in vars(Memory).items()
        if not name.startswith("_") and callable(member) and name not in LOCAL_ONLY
    )


def protocol_methods() -> list[str]:
    return sorted(
        name
        for name, member in vars(MemoryImpl).items()
        if not name.startswith("_") and callable(member)
    )


class Recording:
    """An implementation that records each call and returns a token naming it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []


def _recorder(name: str) -> Callable[..., Any]:
    def method(self: Recording, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((name, args, kwargs))
        return f"result of {name}"

    return method


for _name in protocol_methods():
    setattr(Recording, _name, _recorder(_name))


def arguments(name: str) -> tuple[list[Any], dict[str, Any]]:
    """A distinct value for every parameter of ``Memory.<name>``, as the caller passes it."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for param in list(inspect.signature(getattr(Memory, name)).parameters.values())[1:]:
        value = object()
        if param.kind is param.KEYWORD_ONLY:
            kwargs[param.name] = value
        elif param.kind is param.VAR_KEYWORD:
            kwargs["some_setting"] = value
        else:
            args.append(value)
    return args, kwargs


def test_the_protocol_lists_every_public_method_with_its_signature() -> None:
    assert protocol_methods() == facade_methods()
    for name in facade_methods():
        facade = inspect.signature(getattr(Memory, name))
        assert inspect.signature(getattr(MemoryImpl, name)) == facade, name
        assert inspect.signature(getattr(LocalMemory, name)) == facade, name


def test_every_public_call_reaches_the_implementation_unchanged() -> None:
    impl = Recording()
    assert isinstance(impl, MemoryImpl)
    mem = Memory(impl)
    for name in facade_methods():
        args, kwargs = arguments(name)
        result = getattr(mem, name)(*args, **kwargs)
        assert impl.calls[-1] == (name, tuple(args), kwargs), name
        returns = inspect.signature(getattr(Memory, name)).return_annotation
        assert result == (None if returns == "None" else f"result of {name}"), name
    assert [call[0] for call in impl.calls] == facade_methods()
    with mem:
        pass
    assert impl.calls[-1][0] == "close"


def test_a_method_without_its_delegation_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: a facade method that does not reach the implementation fails."""

    def brand_new(self: Memory) -> str:
        return "answered by the facade"

    monkeypatch.setattr(Memory, "brand_new", brand_new, raising=False)
    assert "brand_new" in facade_methods()
    assert protocol_methods() != facade_methods()
    with pytest.raises(AssertionError):
        test_every_public_call_reaches_the_implementation_unchanged()


def test_local_settings_belong_to_the_local_implementation(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="configure a local Memory"):
        Memory(Recording(), max_role=Role.MEMBER)
    with pytest.raises(InvalidInput, match="configure a local Memory"):
        Memory(Recording(), clock=lambda: None)  # type: ignore[arg-type,return-value]
    remote = Memory(Recording())
    for attribute in ("backend", "clock", "max_role", "classifier", "recognizer"):
        with pytest.raises(InvalidInput, match="not on a local backend"):
            getattr(remote, attribute)
    with Memory.open(tmp_path / "data") as local:
        assert local.max_role is Role.OWNER and local.backend.agents() == []


def test_a_principals_view_is_local_only() -> None:
    from remem import HostPrincipal, InvalidInput, Role

    host = HostPrincipal(("yuko",), ("*",), ("*",), Role.MEMBER)
    with pytest.raises(InvalidInput, match="not on a local backend"):
        Memory(Recording()).for_principal(host)

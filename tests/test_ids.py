"""Note and event ids: sortable by creation, unique, also across a fork."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from remem.core import ids
from remem.core.ids import is_id, new_id


def test_ids_are_well_formed_unique_and_sorted_by_creation() -> None:
    ids = [new_id("note") for _ in range(5000)]
    assert all(is_id(i, "note") for i in ids)
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert new_id("ev", now_ms=0) < new_id("ev", now_ms=10**12)


def _ids_in_child(out: mp.Queue) -> None:  # type: ignore[type-arg]
    out.put([new_id("note", now_ms=2_000_000_000_000 + i) for i in range(50)])


def test_a_forked_child_never_repeats_its_parents_random_bits() -> None:
    new_id("note")  # the parent has read random bytes ahead
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_ids_in_child, args=(out,))
    child.start()
    theirs = out.get(timeout=20)
    child.join(20)
    ours = [new_id("note", now_ms=2_000_000_000_000 + i) for i in range(50)]
    # Same milliseconds on both sides: only the random part can tell them apart.
    assert not set(theirs) & set(ours)
    assert all(a[-16:] != b[-16:] for a, b in zip(theirs, ours, strict=True))


def _decode(body: str) -> int:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    value = 0
    for char in body:
        value = value * 32 + alphabet.index(char)
    return value


def test_the_body_is_the_ulid_layout_time_then_random_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for ms in (0, 1, 1023, 1_764_600_000_123, 2**48 - 1):
        # Ids never go back in time within a process: start each case afresh (and put
        # the module's clock back afterwards).
        monkeypatch.setattr(ids, "_last_ms", -1)
        first = new_id("ev", now_ms=ms)
        second = new_id("ev", now_ms=ms)  # same millisecond: the random part counts up
        assert _decode(first[3:13]) == ms and _decode(second[3:13]) == ms
        assert _decode(second[13:]) == (_decode(first[13:]) + 1) % 2**80
        assert 0 <= _decode(first[13:]) < 2**80

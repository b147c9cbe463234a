"""The wire format of end-to-end encrypted DM memory, on the vectors shipped in the
package (``remem/e2ee_vectors.json``, the same the browser test checks)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from remem import Rejected
from remem.e2ee import (
    MAX_FACT_CHARS,
    MAX_FACTS,
    associated_data,
    clamp,
    decode_b64url,
    encode_b64url,
    open_blob,
    seal,
    slot_key,
)

VECTORS: dict[str, Any] = json.loads(
    resources.files("remem").joinpath("e2ee_vectors.json").read_text(encoding="utf-8")
)


def test_the_vectors_are_shipped_and_name_the_format() -> None:
    assert VECTORS["format"] == "remem/dm-memory/v1"
    assert len(VECTORS["vectors"]) >= 3 and VECTORS["refused"] and VECTORS["clamped"]


@pytest.mark.parametrize("v", VECTORS["vectors"], ids=lambda v: v["name"])
def test_python_reproduces_every_vector(v: dict[str, Any]) -> None:
    key = slot_key(decode_b64url(v["dm_key"]), v["thread"])
    assert encode_b64url(key) == v["slot_key"]
    ad = associated_data(v["agent"], v["thread"], v["version"])
    assert ad.decode("utf-8") == v["associated_data"]
    blob = seal(
        key,
        agent=v["agent"],
        thread=v["thread"],
        version=v["version"],
        facts=v["facts"],
        nonce=decode_b64url(v["nonce"]),
    )
    assert blob == v["blob"]
    assert "=" not in blob and "+" not in blob and "/" not in blob
    assert decode_b64url(blob)[:12] == decode_b64url(v["nonce"])
    facts = open_blob(key, v["blob"], agent=v["agent"], thread=v["thread"], version=v["version"])
    assert facts == v["facts"]


@pytest.mark.parametrize("v", VECTORS["refused"], ids=lambda v: v["name"])
def test_python_refuses_every_refused_vector(v: dict[str, Any]) -> None:
    with pytest.raises(Rejected) as caught:
        open_blob(
            decode_b64url(v["slot_key"]),
            v["blob"],
            agent=v["agent"],
            thread=v["thread"],
            version=v["version"],
        )
    assert caught.value.reason == "unauthentic"


def test_the_refused_vectors_differ_from_a_good_one_in_one_thing_only() -> None:
    """Each refusal is for the reason its name gives: the good vector opens."""
    good = VECTORS["vectors"][0]
    key = decode_b64url(good["slot_key"])
    for v in VECTORS["refused"]:
        assert v["slot_key"] == good["slot_key"]
        changed = [k for k in ("agent", "thread", "version", "blob") if v[k] != good[k]]
        assert len(changed) == 1, v["name"]
    assert open_blob(key, good["blob"], agent="yuko", thread="discord:dm-alice", version=1)


@pytest.mark.parametrize("v", VECTORS["clamped"], ids=lambda v: v["name"])
def test_python_reclamps_an_oversized_slot(v: dict[str, Any]) -> None:
    facts = open_blob(
        decode_b64url(v["slot_key"]),
        v["blob"],
        agent=v["agent"],
        thread=v["thread"],
        version=v["version"],
    )
    assert facts == v["facts"]
    assert len(facts) == MAX_FACTS
    assert max(len(f) for f in facts) == MAX_FACT_CHARS
    # Counted in code points: 280 emoji, not 140 (JavaScript's UTF-16 length).
    assert facts[1] == "🍵" * MAX_FACT_CHARS


def test_a_fresh_nonce_for_every_write() -> None:
    key = bytes(32)
    blobs = {seal(key, agent="a", thread="t", version=1, facts=["x"]) for _ in range(20)}
    assert len(blobs) == 20


def test_clamp_refuses_what_is_not_a_list() -> None:
    with pytest.raises(Rejected) as caught:
        clamp({"facts": []})
    assert caught.value.reason == "not_a_slot"
    assert clamp(["a", 1, None, " ", "b"]) == ["a", "b"]

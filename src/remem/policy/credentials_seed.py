"""Wallet recovery phrases (BIP-39 mnemonics) in note text.

A BIP-39 seed phrase is 12, 15, 18, 21 or 24 words from a fixed list of 2,048
English words; whoever reads it owns the wallet. :func:`has_seed_phrase`
finds a run of at least 12 consecutive list words (separated by anything but
letters: spaces, commas, line breaks, "1." numbering) and flags it when

* the note names what it is (seed, mnemonic, recovery or backup phrase, wallet
  words ...), or
* some 12 to 24-word window of the run carries a valid BIP-39 checksum (its
  last word encodes the first bits of the SHA-256 of the others), which an
  ordinary list of words passes one time in 16 (12 words) to 256 (24 words).

Ordinary prose rarely holds 12 list words in a row: "the", "a", "is", "to",
"of", "and", "for", "with" are not on the list.

The word list is the standard one (``bip39_english.txt``, vendored from
python-mnemonic under the MIT licence in ``bip39_english.LICENSE``; BIP-39 fixes
the list, so there is nothing to keep up to date). It is read on first use.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources

__all__ = ["has_seed_phrase", "may_hold_seed_phrase"]

_LENGTHS = (12, 15, 18, 21, 24)
_NAMED = re.compile(
    r"\b(?:seed|mnemonic|recovery|backup|secret|wallet|metamask|ledger|trezor|phantom"
    r"|exodus|trust ?wallet|coinbase|bip-?39)\b"
)


@cache
def _word_index() -> dict[bytes, int]:
    """The BIP-39 English list, word to its position (0 to 2047)."""
    text = resources.files("remem.policy").joinpath("bip39_english.txt").read_text("ascii")
    words = text.split()
    assert len(words) == 2048, "the BIP-39 English list has 2048 words"
    return {word.encode("ascii"): i for i, word in enumerate(words)}


#: Byte table that keeps a-z, lowercases A-Z and turns every other byte into a space:
#: the words of a text in one C-level pass (``bytes.translate`` + ``split``).
_LETTERS_ONLY = bytes(c if 97 <= c <= 122 else c + 32 if 65 <= c <= 90 else 32 for c in range(256))
_MIN_CHARS = 12 * 3 + 11  # 12 words of at least 3 letters, with separators


def _checksum_ok(indices: list[int]) -> bool:
    """Whether list positions ``indices`` form a BIP-39 mnemonic with a valid checksum."""
    bits = len(indices) * 11
    checksum_bits = bits // 33
    number = 0
    for index in indices:
        number = (number << 11) | index
    entropy = (number >> checksum_bits).to_bytes((bits - checksum_bits) // 8, "big")
    expected = hashlib.sha256(entropy).digest()[0] >> (8 - checksum_bits)
    return number & ((1 << checksum_bits) - 1) == expected


def _runs(words: list[bytes], index: dict[bytes, int]) -> list[list[int]]:
    """Maximal runs of consecutive list words (as list positions), 12 words or longer."""
    runs: list[list[int]] = []
    current: list[int] = []
    for word in words:
        position = index.get(word)
        if position is not None:
            current.append(position)
            continue
        if len(current) >= _LENGTHS[0]:
            runs.append(current)
        current = []
    if len(current) >= _LENGTHS[0]:
        runs.append(current)
    return runs


def may_hold_seed_phrase(text: str) -> bool:
    """Cheap gate: long enough for 12 words."""
    return len(text) >= _MIN_CHARS


def has_seed_phrase(text: str) -> bool:
    """A BIP-39 recovery phrase: 12+ list words in a row, named as such or checksummed."""
    words = text.encode("utf-8", "ignore").translate(_LETTERS_ONLY).split()
    if len(words) < _LENGTHS[0]:
        return False
    index = _word_index()
    # Any 12 consecutive words include two at positions 6 apart that are multiples of 6:
    # look at those first, which rules out ordinary prose in a handful of lookups.
    previous = False
    for word in words[::6]:
        hit = word in index
        if hit and previous:
            break
        previous = hit
    else:
        return False
    runs = _runs(words, index)
    if not runs:
        return False
    if _NAMED.search(text.lower()):
        return True
    return any(
        _checksum_ok(run[start : start + n])
        for run in runs
        for n in _LENGTHS
        for start in range(len(run) - n + 1)
    )

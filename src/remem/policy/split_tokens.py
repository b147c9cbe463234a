"""Credential tokens broken by whitespace: ``ghp_abc`` + a line break or a no-break space
+ ``def…``.

The store keeps a note's text with its spacing normalized (a no-break space becomes a
space, a line break in ``correct`` becomes a space), so a token broken that way is shown
to every reader as two words that anyone can glue back together. The provider detectors
match a token as one run of characters and miss it.

:func:`rejoined` returns, for each token prefix that only credentials use (``ghp_``,
``sk-``, ``xoxb-``, ``AKIA`` …) followed by whitespace-separated pieces, that token glued
back from its first two, three … pieces, for the detectors to read on their own. It is a
prefilter plus string joins: text without such a prefix followed by a break costs one
regex search.
"""

from __future__ import annotations

import re

#: Prefixes of credentials recognisable by format (see ``remem.policy.secrets``), factored
#: by common prefixes so that a note without one costs one fast search (every note
#: written is checked). A prose word almost never starts with one; the detectors still
#: decide on the glued token (length, character mix, checksum where there is one).
_PREFIX = re.compile(
    r"(?:A(?:3T|BIA|CCA|Iza|KIA|SIA)|GOCSPX-|SG\.|api_org_|eyJ"
    r"|g(?:h[oprsu]_|ithub_pat_|l(?:dt-|ft-|pat-|rt-|s(?:a_|oat-))|sk_)|hf_|lin_api_|npm_"
    r"|p(?:plx-|ypi-)|rk_(?:live_|test_)|s(?:k(?:-|_(?:live_|test_))|q0(?:atp-|csp-))"
    r"|whsec_|x(?:a(?:i-|pp-)|ox[abeoprs]-)|ya29\.)"
)
#: A prefixed token that whitespace follows, from the prefix's start.
_BROKEN = re.compile(r"[A-Za-z0-9_\-.]+\s")
#: One piece of a token and the single whitespace character before the next piece.
_PIECE = re.compile(r"([A-Za-z0-9_\-.=+/]+)(\s?)")
#: At most this many breaks are glued (a token wrapped over a few lines).
MAX_BREAKS = 4


def rejoined(text: str) -> list[str]:
    """Each prefixed token in ``text`` that whitespace broke, glued back from its first
    2 … ``MAX_BREAKS + 1`` pieces (shortest first); empty when there is none."""
    out: list[str] = []
    for start in _PREFIX.finditer(text):
        pos = start.start()
        if (pos and (text[pos - 1].isascii() and text[pos - 1].isalnum())) or not (
            _BROKEN.match(text, pos)
        ):
            continue  # inside a longer word, or not followed by a break
        pieces: list[str] = []
        while len(pieces) <= MAX_BREAKS:
            piece = _PIECE.match(text, pos)
            if piece is None:
                break
            pieces.append(piece.group(1))
            if not piece.group(2):
                break
            pos = piece.end()
        out.extend("".join(pieces[: n + 1]) for n in range(1, len(pieces)))
    return out

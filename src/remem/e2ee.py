"""End-to-end encrypted DM memory, the bot's side (see ``docs/e2ee.md``).

A DM whose messages are end-to-end encrypted keeps its memory in one small slot per
(agent, DM thread) that the server stores as ciphertext: :meth:`remem.Memory.dm_slot`
and :meth:`remem.Memory.put_dm_slot`. Only the member and the bot hold the DM key; the
server keeps the ciphertext, its version and the thread id.

The wire format (version 1), fixed here and by the test vectors shipped beside this
module (``e2ee_vectors.json``, checked by the tests in Python and in the browser):

- slot key = HKDF-SHA256(DM key, salt = UTF-8 of the thread id,
  info = ``remem/dm-memory/v1``, 32 bytes) (:func:`slot_key`);
- AES-256-GCM under the slot key, a fresh random 12-byte nonce per write;
- associated data = the canonical JSON (keys sorted, no spaces, UTF-8, non-ASCII
  unescaped) of ``{"agent", "thread", "version"}`` (:func:`associated_data`), so a
  slot moved to another thread or agent, or shown under another version, fails to
  authenticate;
- blob = base64url without padding of nonce ‖ ciphertext ‖ tag;
- the version written is the version read + 1;
- plaintext = the UTF-8 JSON list of facts; every reader re-clamps it to at most
  :data:`MAX_FACTS` facts of at most :data:`MAX_FACT_CHARS` characters (code points),
  since the slot is shared and unsigned (:func:`clamp`).

:class:`DmMemory` is the bot's handle: it opens the slot with the DM key, refuses a
version lower than one it has seen, writes whole slots at the version read (reloading
and re-applying its change after a ``Conflict``), runs the secret and sensitive-data
guard before anything is encrypted, and renders the facts into the same inert memory
block as ``recall``. Needs the ``e2ee`` extra (the ``cryptography`` package).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import TYPE_CHECKING, Any

from remem.errors import Conflict, InvalidInput, Rejected, RememError
from remem.policy.guard import check_note_text, find_sensitive
from remem.recall.render import BEGIN, EMPTY, END, HEADER, new_nonce, quote

if TYPE_CHECKING:
    from remem.context import RunContext
    from remem.service import Memory

__all__ = [
    "INFO",
    "MAX_FACTS",
    "MAX_FACT_CHARS",
    "DmMemory",
    "associated_data",
    "clamp",
    "decode_b64url",
    "encode_b64url",
    "open_blob",
    "render_facts",
    "seal",
    "slot_key",
]

#: HKDF's ``info``: names the format and its version.
INFO = b"remem/dm-memory/v1"
MAX_FACTS = 24
MAX_FACT_CHARS = 280
NONCE_BYTES = 12
TAG_BYTES = 16
KEY_BYTES = 32
_ASCII_SPACE = " \t\n\r\x0b\x0c"
#: How many times :class:`DmMemory` reloads and re-applies a change after a ``Conflict``.
WRITE_ATTEMPTS = 5


def _crypto() -> Any:
    """The ``cryptography`` primitives, or a clear error naming the extra to install."""
    try:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    except ImportError:
        raise RememError(
            "end-to-end encrypted DM memory needs the cryptography package: "
            "pip install 'remem[e2ee]'"
        ) from None
    return InvalidTag, hashes, AESGCM, HKDF


def _bytes(value: object, what: str, size: int | None = None) -> bytes:
    if not isinstance(value, bytes | bytearray) or (size is not None and len(value) != size):
        need = f"{size} bytes" if size is not None else "bytes"
        raise InvalidInput(f"{what} must be {need}, not {type(value).__name__}")
    if not value:
        raise InvalidInput(f"{what} is empty")
    return bytes(value)


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{what} must be a non-empty string")
    return value


def slot_key(dm_key: bytes, thread: str) -> bytes:
    """The 32-byte slot key of DM thread ``thread`` under the DM key (HKDF-SHA256, salt
    = the thread id's UTF-8, info = :data:`INFO`). The page's link carries this key,
    never the DM key: a leaked link exposes the memory slot, not the conversation."""
    _, hashes, _, hkdf = _crypto()
    salt = _text(thread, "thread").encode("utf-8")
    kdf = hkdf(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, info=INFO)
    derived: bytes = kdf.derive(_bytes(dm_key, "the DM key"))
    return derived


def associated_data(agent: str, thread: str, version: int) -> bytes:
    """The canonical JSON of ``{"agent", "thread", "version"}``: keys sorted, no spaces,
    non-ASCII characters as themselves, UTF-8 (what the page's ``JSON.stringify`` of the
    same object in that key order gives)."""
    if type(version) is not int or version < 1:
        raise InvalidInput(f"a slot version is a whole number from 1, not {version!r:.40}")
    data = {"agent": _text(agent, "agent"), "thread": _text(thread, "thread"), "version": version}
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def clamp(items: object) -> list[str]:
    """The facts a reader keeps from a decrypted list: its strings that are not blank
    (ASCII whitespace only: a definition the page's reader shares exactly), the first
    :data:`MAX_FACTS`, each cut to :data:`MAX_FACT_CHARS` code points.
    ``Rejected`` (reason ``not_a_slot``) when the plaintext is not a list."""
    if not isinstance(items, list):
        raise Rejected(
            "the DM memory slot does not hold a list of facts; it was written by a broken "
            "or hostile client (nothing of it is used)",
            reason="not_a_slot",
        )
    facts = [item for item in items if isinstance(item, str) and item.strip(_ASCII_SPACE)]
    return [fact[:MAX_FACT_CHARS] for fact in facts[:MAX_FACTS]]


def encode_b64url(data: bytes) -> str:
    """``data`` as base64url without padding (the form of blobs, keys and nonces)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode_b64url(text: str) -> bytes:
    """The bytes of base64url text, with or without padding (``binascii.Error`` else)."""
    if not isinstance(text, str) or not text.isascii():
        raise binascii.Error("not base64url text")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(
    key: bytes,
    *,
    agent: str,
    thread: str,
    version: int,
    facts: list[str],
    nonce: bytes | None = None,
) -> str:
    """The blob of ``facts`` written as ``version`` of ``thread``'s slot under the slot
    key. ``nonce``: for test vectors only; every real write takes a fresh random one."""
    _, _, aesgcm, _ = _crypto()
    nonce = os.urandom(NONCE_BYTES) if nonce is None else _bytes(nonce, "nonce", NONCE_BYTES)
    plaintext = json.dumps(list(facts), ensure_ascii=False, separators=(",", ":")).encode()
    sealed = aesgcm(_bytes(key, "the slot key", KEY_BYTES)).encrypt(
        nonce, plaintext, associated_data(agent, thread, version)
    )
    return encode_b64url(nonce + sealed)


def open_blob(key: bytes, blob: str, *, agent: str, thread: str, version: int) -> list[str]:
    """The facts of a slot blob read as ``version`` of ``thread``'s slot, authenticated
    and re-clamped (:func:`clamp`). ``Rejected`` with reason ``unauthentic`` when the
    blob was altered, belongs to another agent, thread or version, or is under another
    key."""
    invalid_tag, _, aesgcm, _ = _crypto()
    ad = associated_data(agent, thread, version)
    try:
        raw = decode_b64url(blob)
        if len(raw) < NONCE_BYTES + TAG_BYTES:
            raise ValueError("too short")
        cipher = aesgcm(_bytes(key, "the slot key", KEY_BYTES))
        plaintext = cipher.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], ad)
        items = json.loads(plaintext.decode("utf-8"))
    except (invalid_tag, ValueError, binascii.Error, UnicodeDecodeError):
        raise Rejected(
            f"the DM memory slot of {thread!r} (version {version}) does not authenticate: "
            "it was altered, moved from another thread or version, or written under "
            "another key (nothing of it is used)",
            reason="unauthentic",
        ) from None
    return clamp(items)


def render_facts(facts: list[str]) -> str:
    """The facts as the inert memory block ``recall`` renders (the same delimiters with
    a fresh nonce, header and quoting: one JSON string a line, never instructions)."""
    nonce = new_nonce()
    lines = [BEGIN.format(nonce=nonce), HEADER if facts else EMPTY]
    lines += [f"{i}. [dm · e2ee] {quote(fact)}" for i, fact in enumerate(facts, 1)]
    lines.append(END.format(nonce=nonce))
    return "\n".join(lines)


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class DmMemory:
    """The bot's handle on one DM's encrypted memory slot (see the module docstring).

    ``memory``: a :class:`remem.Memory` (local or over HTTP); ``ctx``: a run in the DM
    (its channel is the thread); ``dm_key``: the DM's key, which never leaves the bot.
    ``highest_seen``: the highest slot version this bot has read or written before (the
    host keeps :attr:`highest_seen` between runs); a slot below it is a replay and is
    refused (``Rejected``, reason ``replayed``)."""

    def __init__(
        self, memory: Memory, ctx: RunContext, dm_key: bytes, *, highest_seen: int = 0
    ) -> None:
        if ctx.channel is None:
            raise InvalidInput("a DM's encrypted memory needs a run in that DM (it has no channel)")
        if type(highest_seen) is not int or highest_seen < 0:
            raise InvalidInput("highest_seen is a slot version: a whole number from 0")
        self._memory = memory
        self._ctx = ctx
        self._key = slot_key(dm_key, ctx.channel)
        self.highest_seen = highest_seen

    @property
    def thread(self) -> str:
        assert self._ctx.channel is not None
        return self._ctx.channel

    def _read(self) -> tuple[int, list[str]]:
        """The slot's version and facts, authenticated, not older than seen, re-clamped."""
        slot = self._memory.dm_slot(self._ctx)
        if slot.version < self.highest_seen:
            raise Rejected(
                f"the server returned version {slot.version} of the DM memory slot, older "
                f"than version {self.highest_seen} already seen: a replay (nothing of it is "
                "used)",
                reason="replayed",
            )
        if slot.blob is None:
            facts: list[str] = []
        else:
            facts = open_blob(
                self._key,
                slot.blob,
                agent=self._ctx.agent,
                thread=self.thread,
                version=slot.version,
            )
        self.highest_seen = slot.version
        return slot.version, facts

    def facts(self) -> list[str]:
        """The facts in the slot now (see :meth:`_read`)."""
        return self._read()[1]

    def render(self) -> str:
        """The facts as the inert memory block a prompt's input carries."""
        return render_facts(self.facts())

    def remember(self, fact: str, *, inferred: bool = False) -> list[str]:
        """Add ``fact`` (one statement, at most :data:`MAX_FACT_CHARS` characters) and
        return the facts written. The guard runs first, before anything is encrypted:
        ``Rejected`` for a blank or too long fact or one carrying a credential, and for
        an ``inferred`` one touching a sensitive topic; ``Rejected`` (``slot_full``)
        when the slot holds :data:`MAX_FACTS` facts. A fact already there is not
        added twice."""
        if not isinstance(fact, str):
            raise InvalidInput("a fact is a string")
        check_note_text(fact, max_chars=MAX_FACT_CHARS)
        if inferred:
            finding = find_sensitive(fact)
            if finding is not None:
                raise Rejected(finding.message, reason="sensitive")

        def add(facts: list[str]) -> list[str] | None:
            if any(_same(fact, f) for f in facts):
                return None
            if len(facts) >= MAX_FACTS:
                raise Rejected(
                    f"this DM's memory holds {MAX_FACTS} facts, its limit; forget one first",
                    reason="slot_full",
                )
            return [*facts, fact]

        return self._write(add)

    def forget(self, fact: str) -> list[str]:
        """Remove every fact saying ``fact`` (spacing and case aside); returns the facts
        written (unchanged, and nothing written, when none matched)."""
        if not isinstance(fact, str):
            raise InvalidInput("a fact is a string")

        def remove(facts: list[str]) -> list[str] | None:
            kept = [f for f in facts if not _same(fact, f)]
            return None if len(kept) == len(facts) else kept

        return self._write(remove)

    def _write(self, change: Any) -> list[str]:
        """Read, apply ``change`` (facts → new facts, or None: nothing to write), write the
        whole slot at the version read; on ``Conflict`` reload and re-apply."""
        for _ in range(WRITE_ATTEMPTS):
            version, facts = self._read()
            new = change(facts)
            if new is None:
                return facts
            blob = seal(
                self._key,
                agent=self._ctx.agent,
                thread=self.thread,
                version=version + 1,
                facts=new,
            )
            try:
                written = self._memory.put_dm_slot(self._ctx, blob, if_version=version)
            except Conflict:
                continue
            self.highest_seen = written.version
            return list(new)
        raise Conflict(
            f"the DM memory slot kept changing under {WRITE_ATTEMPTS} attempts to write it; "
            "try again"
        )

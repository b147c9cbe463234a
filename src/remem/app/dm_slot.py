"""The server's side of end-to-end encrypted DM memory: one slot per (agent, DM thread)
in the config store's versioned records, holding ciphertext only.

The server never sees a key: it stores the blob a client sealed (see :mod:`remem.e2ee`
for the wire format), its version and the thread id, and writes a whole slot only at
the version the writer read (``Conflict`` carrying the current slot otherwise), so two
writers never silently lose each other's change. Who may read and write a slot is
:mod:`remem.policy.e2ee_rules`' ``dm_slot`` rule.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from remem.app.kernel import Kernel
from remem.errors import Conflict, InvalidInput
from remem.policy.authz import Action

#: The config store collection of the slots.
COLLECTION = "dm_slots"
#: The longest blob stored: room for 24 facts of 280 characters at their longest JSON
#: (every character escaped), sealed and base64url-encoded.
MAX_BLOB_CHARS = 65_536
#: The shortest blob: a 12-byte nonce and a 16-byte tag, base64url without padding.
MIN_BLOB_CHARS = 38
_BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True, slots=True)
class DmSlot:
    """One DM's encrypted memory slot as the server holds it: the thread id, the version
    (0: never written) and the sealed blob (``None`` before the first write)."""

    thread: str
    version: int
    blob: str | None


def _thread(k: Kernel) -> str:
    """The run's DM thread (its channel), once the ``dm_slot`` rule allows the run."""
    thread = k.ctx.channel
    k.state()  # the channel's policy as of now
    k.require_e2ee_rule(Action.DM_SLOT)
    assert thread is not None  # the rule admits only runs in a channel
    return thread


def _key(agent: str, thread: str) -> str:
    """The record key: a digest, since agent and thread ids are not record-key names."""
    return hashlib.sha256(f"{agent}\n{thread}".encode()).hexdigest()


def _read(k: Kernel, thread: str) -> DmSlot:
    record = k.backend.read_record(COLLECTION, _key(k.ctx.agent, thread))
    if record is None or record.value.get("thread") != thread:
        return DmSlot(thread, 0, None)
    return DmSlot(thread, record.version, str(record.value["blob"]))


def dm_slot(k: Kernel) -> DmSlot:
    """``Memory.dm_slot``: the slot of the run's DM thread."""
    return _read(k, _thread(k))


def put_dm_slot(k: Kernel, blob: str, *, if_version: int) -> DmSlot:
    """``Memory.put_dm_slot``: replace the slot with ``blob`` at version ``if_version``
    + 1; ``Conflict`` (with the current slot) when it is no longer at ``if_version``."""
    if not isinstance(blob, str) or not MIN_BLOB_CHARS <= len(blob) <= MAX_BLOB_CHARS:
        raise InvalidInput(
            f"blob must be the sealed slot as base64url text of {MIN_BLOB_CHARS} to "
            f"{MAX_BLOB_CHARS:_} characters (see remem.e2ee)"
        )
    if not _BASE64URL.fullmatch(blob):
        raise InvalidInput("blob must be base64url text without padding (A-Z a-z 0-9 - _)")
    if type(if_version) is not int or if_version < 0:
        raise InvalidInput(
            "if_version is the slot version the write is based on (0 for a new slot; over "
            "HTTP the If-Match header), "
            f"not {if_version!r:.40}"
        )
    thread = _thread(k)
    key = _key(k.ctx.agent, thread)
    try:
        version = k.backend.write_record(
            COLLECTION, key, {"thread": thread, "blob": blob}, if_version=if_version
        )
    except Conflict:
        current = _read(k, thread)
        raise Conflict(
            f"the DM memory slot is at version {current.version}, not {if_version}: read "
            "it again, re-apply the change and write at that version (nothing was written)",
            current=current,
        ) from None
    return DmSlot(thread, version, blob)


__all__ = ["COLLECTION", "MAX_BLOB_CHARS", "DmSlot", "dm_slot", "put_dm_slot"]

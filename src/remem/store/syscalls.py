"""The system calls the JSONL store makes on its logs and directories, in one place.

The store calls them as attributes of this module (``syscalls.write(fd, data)``),
so that a test can make any one of them fail (``tests/store/test_faults.py``
sweeps every call of a scenario with ``EIO`` and ``ENOSPC``). They *are* the
``os`` and ``fcntl`` functions, not wrappers: the write path pays one module
attribute lookup per call and nothing else.

Every ``OSError`` one of them raises is turned into a
:class:`~remem.errors.StoreError` by the store, saying whether the change it was
making was applied (see ``StoreError.applied``).
"""

from __future__ import annotations

import fcntl
import os

open_fd = os.open
close = os.close
read = os.read
pread = os.pread
write = os.write
fsync = os.fsync
ftruncate = os.ftruncate
flock = fcntl.flock
replace = os.replace
unlink = os.unlink
mkdir = os.mkdir
listdir = os.listdir

#: The names a fault-injection test may replace (every call above but ``close``: a
#: failing ``close`` still releases the descriptor, and what it reports (a delayed
#: write error on NFS) is caught by the ``fsync`` before it).
FALLIBLE = (
    "open_fd",
    "read",
    "pread",
    "write",
    "fsync",
    "ftruncate",
    "flock",
    "replace",
    "unlink",
    "mkdir",
    "listdir",
)

"""Who may read a JSONL data directory: finding and fixing files that others can reach.

The stores create every file 0600 and every directory 0700 (:mod:`remem.store.private`),
owned by the user running remem. Files made by an older remem (0644, 0755), by hand,
or by root are found here: any group or world permission bit, or an owner other than
the data directory's (the service's user, who must be able to read and replace every
file). ``remem doctor`` reports them; ``remem repair --permissions`` fixes them.

``remem.toml`` at the top of the data directory is the operator's file: it is neither
reported nor changed. Symbolic links are never followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from remem.store.private import DIR_MODE, FILE_MODE

#: The operator's files in the data directory, left as they are.
OPERATOR_FILES = ("remem.toml",)


@dataclass(frozen=True, slots=True)
class Exposure:
    """One path whose mode or owner is wrong, and what is wrong with it."""

    path: Path
    is_dir: bool
    #: Set when its permission bits reach group or others (the bits as they are).
    mode: int | None
    #: Set when another user than the data directory's owner owns it (its uid).
    uid: int | None

    def describe(self, owner: int) -> str:
        what = "directory" if self.is_dir else "file"
        problems = []
        if self.mode is not None:
            problems.append(f"readable or writable by group or others (mode {self.mode:04o})")
        if self.uid is not None:
            problems.append(
                f"owned by {_user(self.uid)}, not the data directory's owner {_user(owner)}"
            )
        return f"{what} {self.path} is {' and '.join(problems)}"


def data_owner(root: Path) -> int:
    """The uid that owns the data directory: the user the service runs as."""
    return os.stat(root).st_uid


def find_exposed(root: Path | None, extra: tuple[Path, ...] = ()) -> list[Exposure]:
    """Every path at and under the data directory ``root`` (none: a database holds the
    data) and each of ``extra`` (such as the PostgreSQL key file) that group or others
    can reach, or, under ``root``, that ``root``'s owner does not own. Raises
    ``OSError`` when ``root`` cannot be read."""
    owner = None if root is None else data_owner(root)
    found = []
    for path, st in [*(_walk(root) if root is not None else ()), *_extra(extra)]:
        mode = stat.S_IMODE(st.st_mode)
        wide = mode if mode & 0o077 else None
        foreign = st.st_uid if owner is not None and st.st_uid != owner else None
        if wide is not None or foreign is not None:
            found.append(Exposure(path, stat.S_ISDIR(st.st_mode), wide, foreign))
    return found


def fix_exposed(root: Path | None, found: list[Exposure]) -> list[str]:
    """Give each of ``found`` mode 0600 (a file) or 0700 (a directory) and, when running
    as root, ``root``'s owner and group. Returns what could not be fixed, one line each."""
    left = []
    for item in found:
        try:
            if item.uid is not None and root is not None:
                st = os.stat(root)
                if os.geteuid() != 0:
                    left.append(
                        f"{item.path} is owned by {_user(item.uid)}: run this command as root "
                        f"to give it to {_user(st.st_uid)}, or run `chown {_login(st.st_uid)} "
                        f"{item.path}` as root"
                    )
                else:
                    os.chown(item.path, st.st_uid, st.st_gid, follow_symlinks=False)
            if item.mode is not None:
                os.chmod(item.path, DIR_MODE if item.is_dir else FILE_MODE)
        except OSError as exc:
            left.append(f"cannot fix {item.path}: {exc.strerror}")
    return left


def _walk(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    yield root, os.stat(root)
    for top, dirs, files in os.walk(root):
        base = Path(top)
        for name in [*dirs, *files]:
            if base == root and name in OPERATOR_FILES:
                continue
            path = base / name
            try:
                st = os.lstat(path)
            except OSError:
                continue  # removed meanwhile
            if not stat.S_ISLNK(st.st_mode):
                yield path, st


def _extra(extra: tuple[Path, ...]) -> Iterator[tuple[Path, os.stat_result]]:
    for path in extra:
        try:
            yield path, os.stat(path)
        except FileNotFoundError:
            continue


def _login(uid: int) -> str:
    """The user's login name (its number when it has none)."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def _user(uid: int) -> str:
    return f"{_login(uid)} (uid {uid})"

"""Giving folders to an agent's OS identity without the server ever following a path the agent can change.

The server (root, when agents run as other users) prepares every folder before an agent can touch it and works
only through descriptors: each step opens one name relative to a folder already held open, with `O_NOFOLLOW`,
and changes the inode it opened (`fchown`, `fchmod`), never a path. A tree is given away children first, so
by the time the agent owns a folder nothing below it is left to do; a link is changed as a link, never its
target; the walk stays on the tree's file system and leaves alone a file with a second hard link, which could
be someone else's. Standard library only: the domain prepares working trees with it and the runtime its
package cache."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path the server was about to work in is a link, not a folder of its own, or belongs to the wrong owner."""


@dataclass(frozen=True, slots=True)
class Owner:
    """Numeric ids a folder is given to."""

    uid: int
    gid: int


@contextmanager
def opened_dir(path: Path | str, *, dir_fd: int | None = None, follow: bool = False) -> Iterator[int]:
    """A descriptor of the folder `path` (relative to `dir_fd` when given); UnsafePath when its last component
    is a link (unless `follow`: an operator's own setting may be one) or not a folder. Its parents are trusted:
    callers open the agent-reachable part name by name."""
    flags = _DIR_FLAGS & ~os.O_NOFOLLOW if follow else _DIR_FLAGS
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePath(error.errno, f"{path} is a link or not a folder") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def make_dir(parent_fd: int, name: str, mode: int, owner: Owner | None = None) -> bool:
    """Create the folder `name` in the folder held by `parent_fd` (or keep the one there) with exactly `mode`,
    given to `owner` (the server's own when None); True when it was created. UnsafePath when `name` is a link
    or not a folder."""
    _plain_name(name)
    created = True
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:
        created = False
    with opened_dir(name, dir_fd=parent_fd) as fd:
        _set(fd, mode, owner)
    return created


def ensure_dir(path: Path, mode: int, owner: Owner | None = None) -> Path:
    """`make_dir` for a folder whose parent only the server or its operator can change (a root of the work dir,
    a task's directory)."""
    with opened_dir(path.parent, follow=True) as parent:
        make_dir(parent, path.name, mode, owner)
    return path


def _set(fd: int, mode: int, owner: Owner | None) -> None:
    info = os.fstat(fd)
    uid, gid = (owner.uid, owner.gid) if owner is not None else (os.geteuid(), os.getegid())
    if (info.st_uid, info.st_gid) != (uid, gid):
        os.fchown(fd, uid, gid)
    if stat.S_IMODE(info.st_mode) != mode:
        os.fchmod(fd, mode)


def give_tree(path: Path, owner: Owner, *, top_mode: int | None = None, previous: Owner | None = None) -> None:
    """Give the folder `path` and everything below it to `owner`, children first; the folder itself last, with
    `top_mode` when given. Only entries owned by the server or by `previous` change hands (a tree that belonged
    to another identity is re-owned; anything else found in it is left as it is)."""
    allowed = {os.geteuid(), owner.uid} | ({previous.uid} if previous is not None else set())
    with opened_dir(path) as top:
        device = os.fstat(top).st_dev
        _give_children(top, owner, allowed, device)
        info = os.fstat(top)
        if info.st_uid in allowed:
            os.fchown(top, owner.uid, owner.gid)
        if top_mode is not None:
            os.fchmod(top, top_mode)


def _give_children(folder: int, owner: Owner, allowed: set[int], device: int) -> None:
    with os.scandir(folder) as entries:
        names = [entry.name for entry in entries]
    for name in names:
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            if info.st_uid in allowed:
                os.chown(name, owner.uid, owner.gid, dir_fd=folder, follow_symlinks=False)
            continue
        try:
            fd = os.open(name, _DIR_FLAGS if stat.S_ISDIR(info.st_mode) else _FILE_FLAGS, dir_fd=folder)
        except OSError as error:
            # Swapped for a link or a folder since the stat, a socket, or gone: never followed, left alone.
            if error.errno not in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO, errno.ENOENT, errno.EOPNOTSUPP):
                raise
            continue
        try:
            opened = os.fstat(fd)
            if opened.st_dev != device or opened.st_uid not in allowed:
                continue
            if stat.S_ISDIR(opened.st_mode):
                _give_children(fd, owner, allowed, device)
            elif opened.st_nlink > 1:
                log.warning("left a file with %d hard links as it was while handing over a folder", opened.st_nlink)
                continue
            os.fchown(fd, owner.uid, owner.gid)
        finally:
            os.close(fd)


def remove_tree(path: Path) -> bool:
    """Remove `path` and everything below it without following a link out of it (a link at `path` itself goes
    as a link); True when anything was there."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        path.unlink(missing_ok=True)
        return True
    if not shutil.rmtree.avoids_symlink_attacks:
        raise UnsafePath(errno.EPERM, "this platform cannot remove a folder without following links")
    shutil.rmtree(path, onerror=_gone_is_fine)
    return True


def _gone_is_fine(function: object, path: str, exc_info: tuple[type[BaseException], BaseException, object]) -> None:
    """An entry someone else removed first is what we wanted; anything else fails the removal."""
    if not isinstance(exc_info[1], FileNotFoundError):
        raise exc_info[1]


def _plain_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise UnsafePath(errno.EINVAL, f"not a plain folder name: {name!r}")

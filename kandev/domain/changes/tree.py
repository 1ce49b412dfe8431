"""A working tree the agent owns, read by the server one name at a time: every folder on a path is opened relative
to the one before it with O_NOFOLLOW, so no link (planted before or swapped in during the read) is ever followed;
a link is read as a link (its target text), and when agents run as their own identity only that identity's own
files are read (a hard link to anyone else's file is not). Folders are opened once per read of the tree."""

from __future__ import annotations

import errno
import os
import stat
from types import TracebackType

from kandev.domain.workspace.confined import read_at_most

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class WorkTree:
    def __init__(self, root: str, owner_uid: int | None = None) -> None:
        self._owner = owner_uid
        self._folders: dict[str, int | None] = {}
        try:
            # The top is the server's choice (its entry sits in a folder the agent cannot change): followed.
            self._folders[""] = os.open(root, _DIR & ~os.O_NOFOLLOW)
        except OSError:
            self._folders[""] = None

    def __enter__(self) -> WorkTree:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for fd in self._folders.values():
            if fd is not None:
                os.close(fd)
        self._folders.clear()

    def _folder(self, folder: str) -> int | None:
        """The descriptor of a folder of the tree ('' is the top), or None when it is not a plain folder."""
        if folder in self._folders:
            return self._folders[folder]
        parent, _, name = folder.rpartition("/")
        above = self._folder(parent)
        fd = None
        if above is not None and name not in ("", ".", ".."):
            try:
                fd = os.open(name, _DIR, dir_fd=above)
            except OSError:
                fd = None
        self._folders[folder] = fd
        return fd

    def _place(self, path: str) -> tuple[int, str] | None:
        folder, _, name = path.rpartition("/")
        fd = self._folder(folder)
        return None if fd is None or name in ("", ".", "..") else (fd, name)

    def lstat(self, path: str) -> os.stat_result | None:
        """The entry itself (a link's own, never its target's)."""
        found = self._place(path)
        if found is None:
            return None
        try:
            return os.stat(found[1], dir_fd=found[0], follow_symlinks=False)
        except OSError:
            return None

    def read_link(self, path: str) -> str | None:
        """A link's target text; None when `path` is no link."""
        found = self._place(path)
        if found is None:
            return None
        try:
            return os.readlink(found[1], dir_fd=found[0])
        except OSError:
            return None

    def open_file(self, path: str) -> tuple[int, os.stat_result] | None:
        """A descriptor of a regular file (the owner's own, when there is one); None otherwise."""
        found = self._place(path)
        if found is None:
            return None
        try:
            fd = os.open(found[1], _FILE, dir_fd=found[0])
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOENT, errno.EACCES, errno.ENOTDIR, errno.ENXIO):
                raise
            return None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (self._owner is not None and info.st_uid != self._owner):
            os.close(fd)
            return None
        return fd, info

    def read(self, path: str, limit: int) -> bytes | None:
        """A link's target text, or up to `limit` bytes of a regular file."""
        target = self.read_link(path)
        if target is not None:
            return target.encode("utf-8", "surrogateescape")
        opened = self.open_file(path)
        if opened is None:
            return None
        fd, _ = opened
        try:
            return read_at_most(fd, limit)
        finally:
            os.close(fd)

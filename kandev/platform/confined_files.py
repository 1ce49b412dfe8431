"""Reading a file by a relative path under a folder the agent owns without ever leaving it through a link:
the one rule behind rich-output CSV charts and file previews."""

from __future__ import annotations

import errno
import os
from enum import Enum
from pathlib import Path


class Escape(Enum):
    OUTSIDE = "outside"  # the path, or a link on its way, leads outside the folder
    LOOP = "loop"  # links on the way lead back to themselves


class LinkEscape(Exception):
    """The path left the folder (or looped); each caller words it for its own field."""

    def __init__(self, kind: Escape) -> None:
        super().__init__(kind.value)
        self.kind = kind


def open_inside(base: Path, relative: str) -> tuple[int, Path] | None:
    """A read-only descriptor of `relative` (already free of '..' and absolute parts) under `base`, and the
    path it resolved to relative to the resolved `base`; None when there is no such entry. The caller closes
    the descriptor and checks what it is (a folder or a FIFO opens too: O_NONBLOCK keeps a FIFO from hanging
    the server)."""
    folder = base.resolve()
    try:
        target = (folder / relative).resolve()
    except RuntimeError:  # Python < 3.13 raises on a link loop; 3.13 returns the path and open() says ELOOP
        raise LinkEscape(Escape.LOOP) from None
    if not target.is_relative_to(folder):
        raise LinkEscape(Escape.OUTSIDE)
    try:
        # O_NOFOLLOW: a link swapped in after the resolve above is refused.
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LinkEscape(Escape.LOOP) from None
        return None
    # Checked again on the opened file: the agent owns the tree and could swap a folder for a link.
    if os.path.isdir("/proc/self/fd") and not Path(os.path.realpath(f"/proc/self/fd/{fd}")).is_relative_to(folder):
        os.close(fd)
        raise LinkEscape(Escape.OUTSIDE)
    return fd, target.relative_to(folder)


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the descriptor (fewer only at its end)."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)

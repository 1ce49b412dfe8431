"""Handing a prompt's attachments to its agent: inside the ACP prompt when the agent's promptCapabilities take
them (an image as image content, other files as embedded resources), else written into its working directory
and named in the prompt. The working directory is the agent's: the server writes there only through
descriptors, each name opened without following a link (kandev.platform.handover), so a link the agent planted
in `.kandev/attachments` is refused, never written through."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kandev.domain.attachments.content import IMAGES
from kandev.domain.attachments.service import AttachmentFile
from kandev.platform.handover import Owner, UnsafePath, make_dir, opened_dir

FOLDER = (".kandev", "attachments")
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class InPrompt:
    """An attachment the prompt carries: ACP image content (`as_image`), else an embedded resource at `uri`."""

    name: str
    content_type: str
    data: bytes
    uri: str
    as_image: bool


@dataclass
class HandOver:
    """What the prompt carries (ACP content) and the text appended to it (paths of files written)."""

    files: list[InPrompt] = field(default_factory=list)
    note: str = ""
    # Why some could not be written into the working directory (the turn still runs; the transcript says so).
    refused: str | None = None


def hand_over(
    attachments: Sequence[AttachmentFile],
    *,
    image_prompts: bool,
    embedded_context: bool,
    cwd: str,
    owner: Owner | None,
) -> HandOver:
    """Each attachment in the prompt when the agent takes its kind, else into `cwd` with its path named."""
    result, written = HandOver(), []
    for item in attachments:
        record = item.record
        image = record.content_type in IMAGES
        if (image and image_prompts) or embedded_context:
            uri = f"kandev://attachments/{record.id}/{record.name}"
            result.files.append(InPrompt(record.name, record.content_type, item.data, uri, image and image_prompts))
        else:
            written.append(item)
    if written:
        try:
            paths = write_into(Path(cwd), written, owner)
        except OSError as error:
            result.refused = f"the attachments could not be written into the working directory: {_reason(error)}"
        else:
            listed = "\n".join(f"- {path}" for path in paths)
            result.note = f"Attached files (saved in your working directory):\n{listed}"
    return result


def file_name(item: AttachmentFile) -> str:
    """Unique per attachment, recognisable by its uploaded name."""
    return f"{item.record.id[:8]}-{item.record.name}"


def write_into(cwd: Path, items: Sequence[AttachmentFile], owner: Owner | None) -> list[str]:
    """Write each file under `cwd`/.kandev/attachments, given to `owner`; their paths relative to `cwd`."""
    with opened_dir(cwd) as top, _folder(top, owner) as folder:
        paths = []
        for item in items:
            name = file_name(item)
            try:  # whatever sits there (a link the agent planted included) goes as a name, never followed
                os.unlink(name, dir_fd=folder)
            except FileNotFoundError:
                pass
            fd = os.open(name, _CREATE, 0o600, dir_fd=folder)
            try:
                view = memoryview(item.data)
                while view:
                    view = view[os.write(fd, view) :]
                if owner is not None:
                    os.fchown(fd, owner.uid, owner.gid)
            finally:
                os.close(fd)
            paths.append("/".join((*FOLDER, name)))
        return paths


class _folder:
    """The attachments folder, made (or kept) name by name under `top`, each level refused when it is a link."""

    def __init__(self, top: int, owner: Owner | None) -> None:
        self.top, self.owner = top, owner
        self.fds: list[int] = []

    def __enter__(self) -> int:
        parent = self.top
        try:
            for name in FOLDER:
                make_dir(parent, name, 0o700, self.owner)
                parent = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
                self.fds.append(parent)
        except OSError:
            self.__exit__()
            raise
        return parent

    def __exit__(self, *_: object) -> None:
        for fd in reversed(self.fds):
            os.close(fd)
        self.fds.clear()


def _reason(error: OSError) -> str:
    if isinstance(error, UnsafePath) or error.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a link or a file is in the way of .kandev/attachments"
    return error.strerror or type(error).__name__

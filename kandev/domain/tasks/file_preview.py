"""File previews for rich output: one file of a task's repository as text or an image, or why not.

The root is the folder the task works in for that repository: its worktree with the worktree executor,
the repository itself with the local one, the scratch directory when the task has no repository (or the
scratch executor). The path is checked like a rich-output file block's, resolved through links, and
refused when it leads outside the root. The bytes decide what a file is, never its name: PNG, JPEG, GIF
and WebP are images; UTF-8 without NUL bytes is text (SVG and HTML too: their source, never rendered);
anything else is binary. Files over MAX_PREVIEW_BYTES are not read.
"""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext
from kandev.domain.errors import NotFoundError, ValidationError
from kandev.domain.scope import load_task
from kandev.domain.sessions.rich_output import relative_path
from kandev.domain.workspace.workdirs import executor_kind, scratch_directory, task_directory
from kandev.models import Repository, Task, TaskRepository
from kandev.models.enums import ExecutorKind
from kandev.platform.confined_files import Escape, LinkEscape, open_inside, read_at_most

MAX_PREVIEW_BYTES = 1024 * 1024
FIELD = "path"
# Magic numbers of the image formats a client may draw inline; SVG (markup) is deliberately not one.
_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class PreviewUnavailableReason(Enum):
    MISSING = "missing"
    NOT_A_FILE = "not_a_file"
    TOO_LARGE = "too_large"
    BINARY = "binary"


@dataclass(frozen=True)
class TextPreview:
    path: str
    size: int
    text: str


@dataclass(frozen=True)
class ImagePreview:
    path: str
    size: int
    mime_type: str
    data: bytes


@dataclass(frozen=True)
class PreviewUnavailable:
    path: str
    reason: PreviewUnavailableReason
    message: str


FilePreview = TextPreview | ImagePreview | PreviewUnavailable


def image_type(data: bytes) -> str | None:
    """The MIME type of a PNG, JPEG, GIF or WebP image told by its first bytes; None for anything else."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _IMAGES if data.startswith(magic)), None)


_TOO_LARGE = f"the file is larger than {MAX_PREVIEW_BYTES // (1024 * 1024)} MiB"


def _git_files() -> ValidationError:
    # Never shown: a repository's config can hold a remote URL with credentials.
    return ValidationError(f"{FIELD} names git's own files, which are never previewed", field=FIELD)


def read_preview(root: Path, relative: str) -> FilePreview:
    """The preview of `relative` (already checked by relative_path) under `root`; blocking, run in a thread."""

    def unavailable(reason: PreviewUnavailableReason, message: str) -> PreviewUnavailable:
        return PreviewUnavailable(relative, reason, message)

    try:
        base = root.resolve(strict=True)
    except (OSError, RuntimeError):
        base = None
    if base is None or not base.is_dir():
        return unavailable(
            PreviewUnavailableReason.MISSING, "the task's files are not there (not created yet, or removed)"
        )
    if ".git" in relative.split("/"):
        raise _git_files()
    try:
        opened = open_inside(base, relative)
    except LinkEscape as escape:
        if escape.kind == Escape.LOOP:
            raise ValidationError(f"{FIELD} goes through a link that leads back to itself", field=FIELD) from None
        raise ValidationError(f"{FIELD} leads outside the task's files (through a link)", field=FIELD) from None
    if opened is None:
        return unavailable(PreviewUnavailableReason.MISSING, "there is no such file in the task's files")
    fd, inside = opened
    try:
        if ".git" in inside.parts:  # reached through a link
            raise _git_files()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return unavailable(PreviewUnavailableReason.NOT_A_FILE, "the path names a folder or a special file")
        if info.st_size > MAX_PREVIEW_BYTES:
            return unavailable(PreviewUnavailableReason.TOO_LARGE, _TOO_LARGE)
        data = read_at_most(fd, MAX_PREVIEW_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_PREVIEW_BYTES:  # it grew after the fstat
        return unavailable(PreviewUnavailableReason.TOO_LARGE, _TOO_LARGE)
    mime_type = image_type(data)
    if mime_type is not None:
        return ImagePreview(relative, len(data), mime_type, data)
    try:
        text = data.decode("utf-8") if b"\0" not in data else None
    except UnicodeDecodeError:
        text = None
    if text is None:
        return unavailable(
            PreviewUnavailableReason.BINARY, "the file is neither UTF-8 text nor a PNG, JPEG, GIF or WebP image"
        )
    return TextPreview(relative, len(data), text.removeprefix("\ufeff"))


async def files_root(db: AsyncSession, work_path: Path, task: Task, repository: str | None) -> Path:
    """The folder `task` works in for `repository` (one of its repositories, by id or by name; None: the
    first one), as prepare_workdir lays it out."""
    links = list(
        await db.scalars(
            select(TaskRepository).where(TaskRepository.task_id == task.id).order_by(TaskRepository.position)
        )
    )
    repositories = [r for r in [await db.get(Repository, link.repository_id) for link in links] if r is not None]
    if repository is None:
        chosen = repositories[0] if repositories else None
    else:
        chosen = next((r for r in repositories if repository in (r.id, r.name)), None)
        if chosen is None:
            raise NotFoundError("task repository", repository)
    kind = await executor_kind(db, task.executor_profile_id)
    if chosen is None or kind == ExecutorKind.SCRATCH:
        return scratch_directory(work_path, task.id)
    if kind == ExecutorKind.LOCAL:
        return Path(chosen.path)
    return task_directory(work_path, task.id) / chosen.name


class FilePreviewService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def preview(self, task_id: str, path: str, repository: str | None = None) -> FilePreview:
        """A file of a task the caller may read, as text or an image, or why it can't be shown."""
        relative = relative_path(path, FIELD)
        async with self.ctx.read() as db:
            task = await load_task(db, self.ctx.principal, task_id)
            root = await files_root(db, self.ctx.settings.work_path, task, repository)
        return await asyncio.to_thread(read_preview, root, relative)

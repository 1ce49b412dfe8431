"""Reclaiming a task's directories: its worktrees' task directory and its scratch directory, both derived from
the task's id under the work dir (never from a name someone typed), removed without following any link out
of them (an attached folder is a link in the task directory: the link goes, its target stays). Branches are
kept, so no commit is ever lost; a later turn checks the branch out again (workdirs.materialize_repository)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.workspace.workdirs import prune_worktrees, scratch_directory, task_directory
from kandev.models import Repository, TaskRepository
from kandev.platform.handover import remove_tree

# Ids are ours (uuid4); anything else never names a directory to delete.
_TASK_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class ReclaimError(OSError):
    """A directory of the task could not be removed (the cleanup is retried)."""


async def repository_paths(db: AsyncSession, task_id: str) -> list[str]:
    """The paths of the task's repositories: where reclaiming prunes the worktrees whose directories went."""
    rows = await db.scalars(
        select(Repository.path)
        .join(TaskRepository, TaskRepository.repository_id == Repository.id)
        .where(TaskRepository.task_id == task_id)
    )
    return list(rows)


def task_directories(work_path: Path, task_id: str) -> list[Path]:
    """The directories of the task that reclaiming removes: its worktrees' directory and its scratch one."""
    if not _TASK_ID.match(task_id):
        raise ReclaimError(f"not a task id: {task_id!r}")
    return [task_directory(work_path, task_id), scratch_directory(work_path, task_id)]


def reclaim_task_directories(work_path: Path, task_id: str, repository_paths: Iterable[str]) -> bool:
    """Remove the task's directories and forget their worktrees in the task's repositories (`git worktree
    prune`: the branches stay). True when anything was there to remove; safe to repeat."""
    removed = False
    for folder in task_directories(work_path, task_id):
        removed = _remove(folder) or removed
    for path in repository_paths:
        if Path(path).is_dir():
            # Forget the worktrees whose directories went (the branch is then free to be checked out again).
            prune_worktrees(path)
    return removed


def _remove(folder: Path) -> bool:
    if folder.is_symlink():
        # Never ours (we create real directories here): drop the link, never what it points at.
        folder.unlink()
        return True
    if not folder.exists():
        return False
    if not folder.is_dir() or folder.resolve().parent != folder.parent.resolve():
        raise ReclaimError(f"{folder} is not a directory of its own")
    for entry in folder.iterdir():
        # Attached folders are links: removed as links, first, so nothing below walks into their targets.
        if entry.is_symlink():
            entry.unlink()
    try:
        remove_tree(folder)
    except OSError as error:
        raise ReclaimError(f"could not remove {folder}: {error.strerror or error}") from None
    return True

"""Where an agent works, prepared on the worker that runs the session: a scratch directory when the
task has no repository, a git worktree on a new branch for the worktree executor, or the repository
itself for the local executor."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import ConflictError
from kandev.domain.repositories import git
from kandev.models import ExecutorProfile, Repository, Task, TaskRepository
from kandev.models.enums import ExecutorKind


def branch_name(task: Task) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", task.title.lower()).strip("-")[:40] or "task"
    return f"kandev/{task.id[:8]}-{slug}"


async def prepare_workdir(session: AsyncSession, data_dir: Path, task: Task, executor_id: str | None) -> Path:
    """Create (or reuse) the task's working directory; records the branch a worktree created."""
    link = await session.scalar(
        select(TaskRepository).where(TaskRepository.task_id == task.id).order_by(TaskRepository.position).limit(1)
    )
    executor = await session.get(ExecutorProfile, executor_id) if executor_id else None
    kind = ExecutorKind(executor.kind) if executor else ExecutorKind.WORKTREE
    if link is None or kind == ExecutorKind.SCRATCH:
        folder = data_dir / "scratch" / task.id
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    repository = await session.get(Repository, link.repository_id)
    assert repository is not None
    if kind == ExecutorKind.LOCAL:
        return Path(repository.path)
    folder = data_dir / "worktrees" / task.id / repository.name
    if folder.exists():
        return folder
    branch = link.branch or branch_name(task)
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        exists = (
            subprocess.run(
                ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                cwd=repository.path,
                capture_output=True,
            ).returncode
            == 0
        )
        if exists:
            git("worktree", "add", str(folder), branch, cwd=repository.path)
        else:
            git(
                "worktree",
                "add",
                "-b",
                branch,
                str(folder),
                link.base_branch or repository.default_branch,
                cwd=repository.path,
            )
    except subprocess.CalledProcessError as error:
        raise ConflictError(f"git could not create the worktree: {(error.stderr or '').strip()[:500]}") from None
    link.branch = branch
    return folder

"""Where an agent works, prepared on the worker that runs the session: a scratch directory when the
task has no repository, git worktrees on new branches for the worktree executor, or the repositories
themselves for the local executor.

With the worktree executor every repository of a task is a sibling under the task directory
(`<data>/worktrees/<task id>/<repository name>`), and attached folders appear there as links: that
directory is the task's Files root, while the agent works in the first repository's worktree."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.agent_host import AgentUser, AgentUserError, hand_over, resolve_agent_user
from kandev.config import Settings
from kandev.domain.errors import ConflictError
from kandev.domain.workspace.git import git, run_git
from kandev.models import ExecutorProfile, Repository, Task, TaskFolder, TaskRepository
from kandev.models.enums import ExecutorKind


def branch_name(task: Task) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", task.title.lower()).strip("-")[:40] or "task"
    return f"kandev/{task.id[:8]}-{slug}"


def task_directory(data_dir: Path, task_id: str) -> Path:
    """The worktree executor's per-task directory: the Files root its repositories sit under."""
    return data_dir / "worktrees" / task_id


def scratch_directory(data_dir: Path, task_id: str) -> Path:
    """The working directory of a task without repositories (or with the scratch executor)."""
    return data_dir / "scratch" / task_id


async def executor_kind(db: AsyncSession, executor_id: str | None) -> ExecutorKind:
    executor = await db.get(ExecutorProfile, executor_id) if executor_id else None
    return ExecutorKind(executor.kind) if executor else ExecutorKind.WORKTREE


def branch_exists(repository_path: str, branch: str) -> bool:
    return run_git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=repository_path).returncode == 0


def agent_owner(settings: Settings) -> AgentUser | None:
    """The OS user that owns agents' working trees (KANDEV_AGENT_USER), or None: the server's own."""
    try:
        return resolve_agent_user(settings.agent_user)
    except AgentUserError as error:
        raise ConflictError(str(error)) from None


def add_worktree(repository: Repository, folder: Path, branch: str, base: str, owner: AgentUser | None = None) -> bool:
    """Check `branch` out at `folder` (owned by `owner` when given), created from `base` when it does
    not exist yet; True when it was created here."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    created = not branch_exists(repository.path, branch)
    try:
        if created:
            git("worktree", "add", "-b", branch, str(folder), base, cwd=repository.path)
        else:
            git("worktree", "add", str(folder), branch, cwd=repository.path)
    except subprocess.CalledProcessError as error:
        raise ConflictError(f"git could not create the worktree: {(error.stderr or '').strip()[:500]}") from None
    if owner is not None:
        hand_over(folder, owner)
        hand_over(_worktree_admin_dir(folder), owner)  # its index and HEAD live in the repository
        os.chown(folder.parent, owner.uid, owner.gid)
    return created


def _worktree_admin_dir(folder: Path) -> Path:
    pointer = (folder / ".git").read_text().strip()
    return (folder / pointer.removeprefix("gitdir:").strip()).resolve()


def remove_worktree(repository: Repository, folder: Path, created_branch: str | None) -> None:
    """Undo add_worktree (best effort: used to roll back a batch that failed later)."""
    run_git("worktree", "remove", "--force", str(folder), cwd=repository.path)
    shutil.rmtree(folder, ignore_errors=True)
    if created_branch:
        run_git("branch", "-D", created_branch, cwd=repository.path)


def link_folder(task_dir: Path, folder: TaskFolder) -> Path:
    link = task_dir / folder.name
    if not link.is_symlink():
        task_dir.mkdir(parents=True, exist_ok=True)
        link.symlink_to(folder.path, target_is_directory=True)
    return link


def materialize_repository(
    data_dir: Path, task: Task, repository: Repository, link: TaskRepository, owner: AgentUser | None = None
) -> Path:
    """The repository's worktree for this task, created when missing; records the branch it is on."""
    folder = task_directory(data_dir, task.id) / repository.name
    if not folder.exists():
        branch = link.branch or branch_name(task)
        add_worktree(repository, folder, branch, link.base_branch or repository.default_branch, owner)
        link.branch = branch
    return folder


async def prepare_workdir(
    db: AsyncSession, data_dir: Path, task: Task, executor_id: str | None, owner: AgentUser | None = None
) -> Path:
    """Create (or reuse) the task's working directory and its sibling sources, owned by `owner` when
    agents run as another user; records the branches worktrees created. The agent's directory is the
    first repository's."""
    links = list(
        await db.scalars(
            select(TaskRepository).where(TaskRepository.task_id == task.id).order_by(TaskRepository.position)
        )
    )
    kind = await executor_kind(db, executor_id)
    if not links or kind == ExecutorKind.SCRATCH:
        folder = scratch_directory(data_dir, task.id)
        folder.mkdir(parents=True, exist_ok=True)
        hand_over(folder, owner)
        return folder
    repositories = [await db.get(Repository, link.repository_id) for link in links]
    if kind == ExecutorKind.LOCAL:
        assert repositories[0] is not None
        return Path(repositories[0].path)
    workdirs = []
    for repository, link in zip(repositories, links, strict=True):
        assert repository is not None
        workdirs.append(materialize_repository(data_dir, task, repository, link, owner))
    for row in await db.scalars(select(TaskFolder).where(TaskFolder.task_id == task.id)):
        link_folder(task_directory(data_dir, task.id), row)
    return workdirs[0]

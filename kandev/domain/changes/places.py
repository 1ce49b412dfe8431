"""Where a task's repositories are checked out and whether this process can read them: the working tree laid out
by kandev.domain.workspace.workdirs, its git folders found without trusting what the agent wrote, the OS identity
git reads them as, and the worker that last ran the task's turns (which holds its working trees)."""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.changes.git_reader import GitPlace, RunAs
from kandev.domain.changes.reading import Checkout
from kandev.domain.workspace.confined import LinkEscape, open_inside, read_at_most
from kandev.domain.workspace.git import git
from kandev.domain.workspace.workdirs import executor_kind, task_directory
from kandev.models import AgentIdentity, Repository, Session, Task, TaskRepository, Turn, Workspace
from kandev.models.enums import ExecutorKind
from kandev.platform.agent_host import AgentUserError, resolve_agent_user
from kandev.platform.settings import Settings

NOT_STARTED = "the task's worktree is not created yet: its agent has not started"
MOVED = "the worktree's .git no longer points into its repository, so its changes can't be read"


@dataclass(frozen=True)
class Located:
    """One repository of a task: its names and branches, and `checkout` when this process can read it (else
    `note` says why, and `worker` names the worker holding it, if any)."""

    repository_id: str
    name: str
    branch: str | None
    base_branch: str
    checkout: Checkout | None
    worker: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class TaskPlaces:
    repositories: list[Located]
    # Why the task has no repository to show, when it has none.
    reason: str | None = None


async def locate(db: AsyncSession, settings: Settings, task: Task) -> TaskPlaces:
    """Every repository of `task`, in order, with what it takes to read its changes here."""
    rows = (
        await db.execute(
            select(TaskRepository, Repository)
            .join(Repository, Repository.id == TaskRepository.repository_id)
            .where(TaskRepository.task_id == task.id)
            .order_by(TaskRepository.position)
        )
    ).all()
    if not rows:
        return TaskPlaces([], reason="the task works in no repository")
    kind = await executor_kind(db, task.executor_profile_id)
    if kind == ExecutorKind.SCRATCH:
        return TaskPlaces([], reason="the task runs on the scratch executor, which works in no repository")
    run_as, usable = await _identity(db, settings, task)
    worker = await last_worker(db, task.id)
    found = []
    for link, repository in rows:
        base = link.base_branch or repository.default_branch
        if kind == ExecutorKind.LOCAL:
            folder = Path(repository.path)
        elif link.branch is None:
            found.append(Located(repository.id, repository.name, None, base, None, None, NOT_STARTED))
            continue
        else:
            folder = task_directory(settings.work_path, task.id) / repository.name
        place, note = (None, None) if not usable else _place(repository.path, folder, run_as)
        checkout = Checkout(place, base) if place is not None else None
        found.append(Located(repository.id, repository.name, link.branch, base, checkout, worker, note))
    return TaskPlaces(found)


async def last_worker(db: AsyncSession, task_id: str) -> str | None:
    """The worker that ran the task's newest turn: it holds the task's working trees."""
    return await db.scalar(
        select(Turn.worker_name)
        .join(Session, Session.id == Turn.session_id)
        .where(Session.task_id == task_id, Turn.worker_name.is_not(None))
        .order_by(Turn.started_at.desc())
        .limit(1)
    )


async def _identity(db: AsyncSession, settings: Settings, task: Task) -> tuple[RunAs | None, bool]:
    """The identity the task's agents ran as (never allocating one: reading is no reason to), and whether this
    process can act as it."""
    if settings.agent_uid_range is not None:
        owner = select(Workspace.owner_id).where(Workspace.id == task.workspace_id).scalar_subquery()
        uid = await db.scalar(select(AgentIdentity.uid).where(AgentIdentity.user_id == owner))
        run_as = None if uid is None else RunAs(uid, uid)
    elif settings.agent_user:
        try:
            user = resolve_agent_user(settings.agent_user)
        except AgentUserError:
            return None, False
        run_as = None if user is None else RunAs(user.uid, user.gid)
    else:
        run_as = None
    return run_as, run_as is None or os.geteuid() == 0


def _place(repository_path: str, folder: Path, run_as: RunAs | None) -> tuple[GitPlace | None, str | None]:
    """The checkout at `folder` as git is told it, or why it can't be read here."""
    if not folder.is_dir():
        return None, "the worktree is not on this machine"
    common = common_dir(repository_path)
    if common is None:
        return None, "the repository is not on this machine"
    git_dir = _git_dir(folder, common)
    if git_dir is None:
        return None, MOVED
    return GitPlace(str(folder), git_dir, common, run_as), None


@lru_cache(maxsize=256)
def _cached_common_dir(repository_path: str) -> str | None:
    try:
        found = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository_path)
    except (subprocess.CalledProcessError, OSError):
        return None
    return os.path.realpath(found)


def common_dir(repository_path: str) -> str | None:
    """The registered repository's own git folder (the server's to trust: the user registered it)."""
    found = _cached_common_dir(repository_path)
    if found is None or not os.path.isdir(found):
        _cached_common_dir.cache_clear()
        return None
    return found


def _git_dir(folder: Path, common: str) -> str | None:
    """The checkout's git folder: the repository's own when `folder` holds it, else the worktree's folder its
    `.git` file names, accepted only when that is one of the repository's worktree folders (read inside the
    working tree, never through a link out of it)."""
    own = folder / ".git"
    info = os.lstat(own) if os.path.lexists(own) else None
    if info is not None and stat.S_ISDIR(info.st_mode):
        return str(own) if os.path.realpath(own) == common else None
    try:
        opened = open_inside(folder, ".git")
    except LinkEscape:
        return None
    if opened is None:
        return None
    fd, _ = opened
    try:
        text = read_at_most(fd, 4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    if not text.startswith("gitdir:"):
        return None
    admin = Path(os.path.realpath(folder / text.removeprefix("gitdir:").strip()))
    if admin.parent != Path(common) / "worktrees" or os.path.islink(admin) or not admin.is_dir():
        return None
    return str(admin)

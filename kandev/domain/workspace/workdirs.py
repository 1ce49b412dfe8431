"""Where an agent works, prepared on the worker that runs the session: a scratch directory when the
task has no repository, git worktrees on new branches for the worktree executor, or the repositories
themselves for the local executor.

With the worktree executor every repository of a task is a sibling under the task directory
(`<work>/worktrees/<task id>/<repository name>`), and attached folders appear there as links: that
directory is the task's Files root, while the agent works in the first repository's worktree.

When agents run as other OS identities the server makes everything before an agent can reach it and hands
it over through descriptors (kandev.platform.handover): the work dir's roots are the server's and not listable
(0711), a task directory is the server's and listable only by the task's agent identity (0750, its group),
and each worktree, scratch directory and home is that identity's alone (0700). The worktree's own
folder in the repository (its HEAD and index) is found before the hand-over, never through the `.git` file
the agent may rewrite, and removed by the server without following a link (git's own prune would)."""

from __future__ import annotations

import errno
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import ConflictError
from kandev.domain.workspace.git import git, run_git
from kandev.models import ExecutorProfile, Repository, Task, TaskFolder, TaskRepository
from kandev.models.enums import ExecutorKind
from kandev.platform.agent_host import HOMES, AgentUser
from kandev.platform.handover import Owner, UnsafePath, ensure_dir, give_tree, make_dir, opened_dir, remove_tree

ROOT_MODE = 0o711  # worktrees/, scratch/, repositories/, homes/: reachable by name, listable by nobody else
SHARED_MODE = 0o750  # a task directory, a workspace's clones: its agent identity (the group) may look in
OWN_MODE = 0o700  # a worktree, a scratch directory, a home: its agent identity's alone
WORKTREES, SCRATCH, CLONES = "worktrees", "scratch", "repositories"


def branch_name(task: Task) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", task.title.lower()).strip("-")[:40] or "task"
    return f"kandev/{task.id[:8]}-{slug}"


def task_directory(work_path: Path, task_id: str) -> Path:
    """The worktree executor's per-task directory: the Files root its repositories sit under."""
    return work_path / WORKTREES / task_id


def scratch_directory(work_path: Path, task_id: str) -> Path:
    """The working directory of a task without repositories (or with the scratch executor)."""
    return work_path / SCRATCH / task_id


async def executor_kind(db: AsyncSession, executor_id: str | None) -> ExecutorKind:
    executor = await db.get(ExecutorProfile, executor_id) if executor_id else None
    return ExecutorKind(executor.kind) if executor else ExecutorKind.WORKTREE


def branch_exists(repository_path: str, branch: str) -> bool:
    return run_git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=repository_path).returncode == 0


def _work_root(work_path: Path, name: str, confined: bool) -> Path:
    """A root of the work dir; the server's and not listable when agents run as other identities."""
    path = work_path / name
    if confined:
        work_path.mkdir(parents=True, exist_ok=True)
        return ensure_dir(path, ROOT_MODE)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _owned_by(user: AgentUser) -> Owner:
    return Owner(user.uid, user.gid)


def _shared_with(user: AgentUser) -> Owner:
    """The server's, with the identity's group: it may look in, never add, rename or remove an entry."""
    return Owner(os.geteuid(), user.gid)


def prepare_task_directory(work_path: Path, task_id: str, owner: AgentUser | None) -> Path:
    """The task directory, created when missing; the server's (a directory an earlier version gave the agent
    is taken back)."""
    folder = task_directory(work_path, task_id)
    root = _work_root(work_path, WORKTREES, owner is not None)
    if owner is None:
        folder.mkdir(exist_ok=True)
        return folder
    with opened_dir(root) as parent:
        make_dir(parent, task_id, SHARED_MODE, _shared_with(owner))
    return folder


def clone_folder(work_path: Path, workspace_id: str, clone_id: str, owner: AgentUser | None) -> Path:
    """Where a repository cloned for the workspace goes: its folder is left for git to create, under a
    workspace folder only the workspace owner's agent identity may look in."""
    root = _work_root(work_path, CLONES, owner is not None)
    if owner is None:
        (root / workspace_id).mkdir(exist_ok=True)
    else:
        with opened_dir(root) as parent:
            make_dir(parent, workspace_id, SHARED_MODE, _shared_with(owner))
    return root / workspace_id / clone_id


@contextmanager
def _refused_as_conflict(what: str) -> Iterator[None]:
    """A folder the server would have had to reach through a link (or could not make) fails the launch with a
    reason, not a traceback."""
    try:
        yield
    except OSError as error:
        raise ConflictError(f"{what} could not be prepared: {error.strerror or error}") from None


def prepare_home(work_path: Path, user: AgentUser) -> None:
    """A numeric identity's HOME and TMPDIR under the work dir, its own (an account's home is the system's)."""
    if user.tmpdir is None:
        return
    with _refused_as_conflict("the agent's home"):
        root = _work_root(work_path, HOMES, True)
        with opened_dir(root) as parent:
            make_dir(parent, str(user.uid), OWN_MODE, _owned_by(user))
            with opened_dir(str(user.uid), dir_fd=parent) as home:
                make_dir(home, Path(user.tmpdir).name, OWN_MODE, _owned_by(user))


def add_worktree(repository: Repository, folder: Path, branch: str, base: str, owner: AgentUser | None = None) -> bool:
    """Check `branch` out at `folder` (a new name in the task directory, given to `owner` when set), created
    from `base` when it does not exist yet; True when it was created here."""
    work_path, task_id = folder.parents[2], folder.parent.name  # <work>/worktrees/<task id>/<name>
    with _refused_as_conflict("the task's directory"):
        prepare_task_directory(work_path, task_id, owner)
    if os.path.lexists(folder):
        raise ConflictError(f"the task directory already has an entry named {folder.name}")
    created = not branch_exists(repository.path, branch)
    try:
        if created:
            git("worktree", "add", "-b", branch, str(folder), base, cwd=repository.path)
        else:
            git("worktree", "add", str(folder), branch, cwd=repository.path)
    except subprocess.CalledProcessError as error:
        raise ConflictError(f"git could not create the worktree: {(error.stderr or '').strip()[:500]}") from None
    if owner is not None:
        with _refused_as_conflict("the worktree"):
            # Read while the worktree is still the server's: afterwards its `.git` file is the agent's to rewrite.
            admin = _admin_dir(repository, folder)
            give_tree(admin, _owned_by(owner))
            give_tree(folder, _owned_by(owner), top_mode=OWN_MODE)
    return created


def _common_dir(repository: Repository) -> Path:
    common = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository.path)
    return Path(os.path.realpath(common))


def _admin_dir(repository: Repository, folder: Path) -> Path:
    """The repository's folder for the worktree at `folder` (HEAD, index), refused unless it is one of the
    repository's own worktree folders."""
    pointer = (folder / ".git").read_text().strip().removeprefix("gitdir:").strip()
    admin = Path(os.path.realpath(folder / pointer))
    if admin.parent != _common_dir(repository) / "worktrees" or os.path.islink(admin) or not admin.is_dir():
        raise ConflictError("git put the worktree's administrative folder outside the repository")
    return admin


def remove_worktree(repository: Repository, folder: Path, created_branch: str | None) -> None:
    """Undo add_worktree (best effort: used to roll back a batch that failed later)."""
    remove_tree(folder)
    prune_worktrees(repository.path)
    if created_branch:
        run_git("branch", "-D", created_branch, cwd=repository.path)


def prune_worktrees(repository_path: str) -> None:
    """Forget the repository's worktrees whose folders are gone, as `git worktree prune` would, but removing
    each worktree's folder in the repository without following a link: an agent owns its own and could swap
    a folder in it for a link while git walked it."""
    try:
        common = Path(git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository_path))
        with opened_dir(os.path.realpath(common)) as git_dir, opened_dir("worktrees", dir_fd=git_dir) as worktrees:
            names = os.listdir(worktrees)
            stale = [name for name in names if _stale(worktrees, name)]
    except (subprocess.CalledProcessError, OSError):
        return  # not a repository any more, or it has no worktrees folder
    for name in stale:
        try:
            remove_tree(Path(os.path.realpath(common)) / "worktrees" / name)
        except OSError:
            pass


def _stale(worktrees: int, name: str) -> bool:
    """Whether a worktree's folder in the repository is for a worktree that is gone (and not locked)."""
    try:
        with opened_dir(name, dir_fd=worktrees) as admin:
            if _exists_at(admin, "locked"):
                return False
            fd = os.open("gitdir", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=admin)
            with os.fdopen(fd, "rb") as file:
                pointer = file.read(4096).decode("utf-8", "replace").strip()
    except UnsafePath:
        return False  # not a folder: nothing git made; left alone
    except OSError as error:
        return error.errno in (errno.ENOENT, errno.ELOOP)  # no gitdir file: git would prune it too
    return not pointer or not os.path.exists(pointer)


def _exists_at(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def link_folder(task_dir: Path, folder: TaskFolder) -> Path:
    link = task_dir / folder.name
    if not link.is_symlink():
        task_dir.mkdir(parents=True, exist_ok=True)
        link.symlink_to(folder.path, target_is_directory=True)
    return link


def materialize_repository(
    work_path: Path, task: Task, repository: Repository, link: TaskRepository, owner: AgentUser | None = None
) -> Path:
    """The repository's worktree for this task, created when missing (and given to `owner` when it belongs
    to another identity); records the branch it is on."""
    folder = task_directory(work_path, task.id) / repository.name
    if not os.path.lexists(folder):
        branch = link.branch or branch_name(task)
        add_worktree(repository, folder, branch, link.base_branch or repository.default_branch, owner)
        link.branch = branch
    elif owner is not None:
        prepare_task_directory(work_path, task.id, owner)
        _take_over(folder, owner)
    return folder


def _take_over(folder: Path, owner: AgentUser) -> None:
    """An existing working tree made its identity's alone; one another identity owns (agents ran as another
    user before) is given to `owner` whole."""
    with opened_dir(folder) as fd:
        info = os.fstat(fd)
        if info.st_uid == owner.uid:
            if info.st_mode & 0o777 != OWN_MODE:
                os.fchmod(fd, OWN_MODE)
            return
    give_tree(folder, _owned_by(owner), top_mode=OWN_MODE, previous=Owner(info.st_uid, info.st_gid))


async def prepare_workdir(
    db: AsyncSession, work_path: Path, task: Task, executor_id: str | None, owner: AgentUser | None = None
) -> Path:
    """Create (or reuse) the task's working directory and its sibling sources, owned by `owner` when
    agents run as another identity; records the branches worktrees created. The agent's directory is the
    first repository's."""
    links = list(
        await db.scalars(
            select(TaskRepository).where(TaskRepository.task_id == task.id).order_by(TaskRepository.position)
        )
    )
    kind = await executor_kind(db, executor_id)
    if not links or kind == ExecutorKind.SCRATCH:
        with _refused_as_conflict("the task's scratch directory"):
            return _scratch(work_path, task.id, owner)
    repositories = [await db.get(Repository, link.repository_id) for link in links]
    if kind == ExecutorKind.LOCAL:
        assert repositories[0] is not None
        return Path(repositories[0].path)
    folders = list(await db.scalars(select(TaskFolder).where(TaskFolder.task_id == task.id)))
    with _refused_as_conflict("the task's directory"):
        prepare_task_directory(work_path, task.id, owner)
        workdirs = []
        for repository, link in zip(repositories, links, strict=True):
            assert repository is not None
            workdirs.append(materialize_repository(work_path, task, repository, link, owner))
        for row in folders:
            link_folder(task_directory(work_path, task.id), row)
    return workdirs[0]


def _scratch(work_path: Path, task_id: str, owner: AgentUser | None) -> Path:
    folder = scratch_directory(work_path, task_id)
    root = _work_root(work_path, SCRATCH, owner is not None)
    if owner is None:
        folder.mkdir(exist_ok=True)
        return folder
    with opened_dir(root) as parent:
        try:
            os.mkdir(task_id, OWN_MODE, dir_fd=parent)
        except FileExistsError:
            _take_over(folder, owner)
            return folder
        with opened_dir(task_id, dir_fd=parent) as fd:  # new and empty: nobody else can have reached it
            os.fchown(fd, owner.uid, owner.gid)
            os.fchmod(fd, OWN_MODE)
    return folder

"""Repositories registered in a workspace, and the ones a task works in."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import load_workspace
from kandev.domain.context import ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, UnprocessableError, ValidationError
from kandev.domain.validation import clean_name
from kandev.domain.workspace.git import git
from kandev.domain.workspace.source_roots import confine_repository, refuse_foreign
from kandev.models import Repository, TaskContribution, TaskRepository
from kandev.models.base import new_id


@dataclass(frozen=True)
class RepositoryChoice:
    repository_id: str
    base_branch: str | None = None
    # A pull/merge request URL instead of an id (repository_id ""): kandev.domain.workspace.contributions.
    url: str | None = None


@dataclass(frozen=True)
class TaskCheckout:
    """A repository a task works in: the branch it is on (None until its worktree is made), the base its
    changes are diffed against, and, for a pull request or a branch a provider event named, the branch its
    pushes go to (`source_branch`) and the pull request's number."""

    repository_id: str
    name: str
    base_branch: str | None
    branch: str | None
    source_branch: str | None = None
    pull_request: int | None = None
    url: str | None = None


async def task_checkouts(db: AsyncSession, task_id: str) -> list[TaskCheckout]:
    rows = await db.execute(
        select(
            TaskRepository.repository_id,
            Repository.name,
            TaskRepository.base_branch,
            TaskRepository.branch,
            TaskContribution.source_branch,
            TaskContribution.number,
            TaskContribution.url,
        )
        .join(Repository, Repository.id == TaskRepository.repository_id)
        .outerjoin(
            TaskContribution,
            (TaskContribution.task_id == TaskRepository.task_id)
            & (TaskContribution.repository_id == TaskRepository.repository_id),
        )
        .where(TaskRepository.task_id == task_id)
        .order_by(TaskRepository.position)
    )
    return [
        TaskCheckout(rid, name, base, branch, source, number or None, url)
        for rid, name, base, branch, source, number, url in rows
    ]


def remote_url_of(path: str) -> str | None:
    """The `origin` remote of a checkout, if it has one."""
    try:
        return git("remote", "get-url", "origin", cwd=path) or None
    except (subprocess.CalledProcessError, OSError):
        return None


def current_branch(path: str) -> str | None:
    try:
        return git("symbolic-ref", "--short", "HEAD", cwd=path) or None
    except (subprocess.CalledProcessError, OSError):
        return None


async def attach_repositories(
    db: AsyncSession, task_id: str, workspace_id: str, choices: list[RepositoryChoice]
) -> None:
    """Link the task to repositories of its own workspace (unknown or foreign ids are not found)."""
    seen: set[str] = set()
    for position, choice in enumerate(choices):
        if choice.url is not None:
            continue  # attached by its contribution (kandev.domain.workspace.contributions)
        repository = await db.get(Repository, choice.repository_id)
        if repository is None or repository.workspace_id != workspace_id:
            raise NotFoundError("repository", choice.repository_id)
        if choice.repository_id in seen:
            raise ValidationError("a repository is listed twice", field="repositories")
        seen.add(choice.repository_id)
        db.add(
            TaskRepository(
                task_id=task_id,
                repository_id=repository.id,
                position=position,
                base_branch=(choice.base_branch or "").strip() or repository.default_branch,
            )
        )


async def free_repository_name(db: AsyncSession, workspace_id: str, name: str) -> str:
    """`name`, or `name-2`, `name-3`... : the first no repository of the workspace has."""
    taken = set(
        await db.scalars(
            select(Repository.name).where(Repository.workspace_id == workspace_id, Repository.name.like(f"{name}%"))
        )
    )
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}-{number}", number + 1
    return candidate


MAX_BRANCHES = 500


def list_branches(path: str, default_branch: str) -> list[str]:
    """The repository's branches, its default first, then the most recently committed to: local branches and
    the `origin` remote's (by their own name; a task based on one starts from it). Reading refs runs nothing."""
    try:
        listed = git(
            "for-each-ref",
            "--sort=-committerdate",
            "--format=%(refname)",
            "refs/heads/",
            "refs/remotes/origin/",
            cwd=path,
        )
    except (subprocess.CalledProcessError, OSError):
        raise UnprocessableError("the repository's branches could not be read on this machine") from None
    names = [
        ref.removeprefix("refs/heads/").removeprefix("refs/remotes/origin/")
        for ref in listed.splitlines()
        if ref and ref != "refs/remotes/origin/HEAD"
    ]
    return list(dict.fromkeys([default_branch, *names] if default_branch in names else names))


class RepositoryService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def branches(self, repository: Repository, prefix: str | None, first: int) -> list[str]:
        """Branches of a repository the caller already read (its default first), those starting with `prefix`."""
        if not 1 <= first <= MAX_BRANCHES:
            raise ValidationError(f"first must be between 1 and {MAX_BRANCHES}", field="first")
        names = await asyncio.to_thread(list_branches, repository.path, repository.default_branch)
        return [name for name in names if prefix is None or name.startswith(prefix)][:first]

    async def list(self, workspace_id: str) -> list[Repository]:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            rows = await db.scalars(
                select(Repository).where(Repository.workspace_id == workspace_id).order_by(Repository.name)
            )
            return list(rows)

    async def create(self, workspace_id: str, name: str, path: str, default_branch: str | None = None) -> Repository:
        """Register a local git repository; its default branch is read from git when not given."""
        name = clean_name(name, "name")
        locations = await asyncio.to_thread(confine_repository, self.ctx.settings, path or "", "path")
        folder = locations[0]
        if not folder.is_dir():
            raise ValidationError("path must be an absolute path to an existing directory", field="path")
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            for location in locations:
                await refuse_foreign(db, self.ctx.principal, location, "path")
        branch: str | None = (default_branch or "").strip() or await asyncio.to_thread(current_branch, str(folder))
        if branch is None:
            raise ValidationError("path is not a git repository with a checked-out branch", field="path")
        try:
            async with self.ctx.unit_of_work() as uow:
                await load_workspace(uow.db, self.ctx.principal, workspace_id)
                repository = Repository(
                    id=new_id(),
                    workspace_id=workspace_id,
                    name=name,
                    path=str(folder),
                    default_branch=branch,
                    remote_url=await asyncio.to_thread(remote_url_of, str(folder)),
                )
                uow.db.add(repository)
                await uow.db.flush()
                return repository
        except IntegrityError:
            raise ConflictError("a repository with this name already exists", field="name") from None

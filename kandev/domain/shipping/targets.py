"""What shipping one repository of a task needs to know, read once: the task and repository, the task's branch
and base, where its pushes go (a pull request's source branch, or the task's own branch on the repository's
remote), where its worktree can be reached, who commits and which agent worked on it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.changes.places import Located, locate
from kandev.domain.context import Principal, ServiceContext
from kandev.domain.errors import ConflictError, NotFoundError, PermissionDeniedError, ValidationError
from kandev.domain.scope import load_task
from kandev.domain.shipping.git_ship import GitIdentity
from kandev.models import AgentProfile, Repository, Session, Task, TaskContribution, TaskRepository, User, Workspace

_EMAIL = re.compile(r"[^@\s<>,\"]{1,200}@[^@\s<>,\"]{1,200}")
MAX_NAME = 200


@dataclass(frozen=True)
class ShipTarget:
    """One repository of a task, as shipping sees it."""

    task_id: str
    workspace_id: str
    title: str
    repository_id: str
    repository_name: str
    repository_path: str
    remote_url: str | None
    default_branch: str
    branch: str | None
    base_branch: str
    # Where pushes go: a pull request's source (its fork's URL and branch) or the repository's remote.
    push_url: str | None
    push_branch: str | None
    # The pull/merge request the task was made from, if any.
    contribution: int | None
    located: Located
    agent_name: str | None

    @property
    def has_branch(self) -> bool:
        return self.branch is not None


def clean_identity(name: str | None, email: str | None) -> GitIdentity:
    """A commit identity from what a person typed; ValidationError naming the field at fault."""
    who = (name or "").strip()
    if not who or len(who) > MAX_NAME or any(c in who for c in "<>\n\r\0") or not who.isprintable():
        raise ValidationError("gitName must be 1-200 printable characters without < or >", field="gitName")
    address = (email or "").strip()
    if not _EMAIL.fullmatch(address):
        raise ValidationError("gitEmail must be an email address", field="gitEmail")
    return GitIdentity(who, address)


async def author_of(db: AsyncSession, principal: Principal, task: Task) -> GitIdentity:
    """Who commits: the person asking, or, for an agent, the person its workspace belongs to; ConflictError
    (identity_missing) until they set a name and email for commits."""
    if principal.session_id is not None:
        user_id = await db.scalar(select(Workspace.owner_id).where(Workspace.id == task.workspace_id))
    else:
        user_id = principal.user_id
    user = await db.get(User, user_id) if user_id else None
    if user is None or not user.git_name or not user.git_email:
        raise ConflictError("set a name and email for your commits first (account settings)", reason="identity_missing")
    return GitIdentity(user.git_name, user.git_email)


def trailer(message: str, agent_name: str | None) -> str:
    """The message with the agent that did the work named in its trailer."""
    if not agent_name:
        return message
    slug = re.sub(r"[^a-z0-9]+", "-", agent_name.lower()).strip("-") or "agent"
    return f"{message.rstrip()}\n\nAgent: {agent_name}\nCo-authored-by: {agent_name} <{slug}@agents.kandev.invalid>\n"


async def task_for(db: AsyncSession, principal: Principal, task_id: str) -> Task:
    """A task the caller may ship from: one they can read, or an agent's own."""
    task = await load_task(db, principal, task_id)
    if principal.session_id is not None and task.id != principal.task_id:
        raise NotFoundError("task", task_id)
    principal.refuse_own_run_task(task.id, "ship")
    return task


async def load_target(ctx: ServiceContext, db: AsyncSession, task: Task, repository_id: str | None) -> ShipTarget:
    """The task's repository `repository_id` (or its only one), with where its worktree is."""
    places = await locate(db, ctx.settings, task)
    if repository_id is None:
        if len(places.repositories) != 1:
            raise ValidationError(
                "repositoryId is needed: the task has several repositories (or none)", field="repositoryId"
            )
        located = places.repositories[0]
    else:
        found = next((r for r in places.repositories if r.repository_id == repository_id), None)
        if found is None:
            raise NotFoundError("task repository", repository_id)
        located = found
    repository = await db.get(Repository, located.repository_id)
    link = await db.get(TaskRepository, (task.id, located.repository_id))
    assert repository is not None and link is not None
    contribution = await db.get(TaskContribution, (task.id, repository.id))
    push_url, push_branch = repository.remote_url, link.branch
    if contribution is not None:
        push_url, push_branch = contribution.source_clone_url, contribution.source_branch
    return ShipTarget(
        task_id=task.id,
        workspace_id=task.workspace_id,
        title=task.title,
        repository_id=repository.id,
        repository_name=repository.name,
        repository_path=repository.path,
        remote_url=repository.remote_url,
        default_branch=repository.default_branch,
        branch=link.branch,
        base_branch=located.base_branch,
        push_url=push_url,
        push_branch=push_branch,
        contribution=contribution.number if contribution is not None and contribution.number else None,
        located=located,
        agent_name=profile.name if (profile := await agent_profile_of(db, task)) is not None else None,
    )


async def agent_profile_of(db: AsyncSession, task: Task) -> AgentProfile | None:
    """The agent profile that worked on the task: its newest session's, else the task's, else its workspace's."""
    profile_id = await db.scalar(
        select(Session.agent_profile_id)
        .where(Session.task_id == task.id, Session.agent_profile_id.is_not(None))
        .order_by(Session.created_at.desc())
        .limit(1)
    )
    profile_id = profile_id or task.agent_profile_id
    if profile_id is None:
        profile_id = await db.scalar(
            select(Workspace.default_agent_profile_id).where(Workspace.id == task.workspace_id)
        )
    return await db.get(AgentProfile, profile_id) if profile_id else None


async def remote_of(db: AsyncSession, task: Task, repository_id: str) -> str | None:
    """The remote URL of the task's repository `repository_id`; None without one, or for a repository not the task's."""
    if await db.get(TaskRepository, (task.id, repository_id)) is None:
        return None
    repository = await db.get(Repository, repository_id)
    return repository.remote_url if repository is not None else None


def refuse_agent(principal: Principal, action: str) -> None:
    if principal.session_id is not None:
        raise PermissionDeniedError(f"an agent can not {action}; a person does", reason="agent")

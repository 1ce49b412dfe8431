"""Where each person last had a task work, per workspace (repositories with base branches, executor and agent
profiles): the new-task form starts from it. Remembered when that person creates a task (not an agent, not an
automation), after the create commits; forgetting it never fails the create."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kandev.domain.access.scope import load_workspace
from kandev.domain.context import ServiceContext
from kandev.models import TaskChoice, User
from kandev.models.base import utcnow
from kandev.platform.database import dialect_insert

log = logging.getLogger("kandev.domain.workspace.task_choices")


@dataclass(frozen=True)
class ChosenRepository:
    repository_id: str
    base_branch: str | None


@dataclass(frozen=True)
class LastChoice:
    repositories: list[ChosenRepository]
    executor_profile_id: str | None
    agent_profile_id: str | None


async def remember_choice(ctx: ServiceContext, workspace_id: str, choice: LastChoice) -> None:
    """Store the caller's choice for the workspace (one row per person and workspace, the newest wins)."""
    user_id = ctx.principal.user_id
    values = {
        "repositories": [{"repository_id": r.repository_id, "base_branch": r.base_branch} for r in choice.repositories],
        "executor_profile_id": choice.executor_profile_id,
        "agent_profile_id": choice.agent_profile_id,
        "updated_at": utcnow(),
    }
    try:
        async with ctx.unit_of_work() as uow:
            if await uow.db.get(User, user_id) is None:
                return  # the system itself (a job, a script) has no form to fill
            statement = dialect_insert(uow.db, TaskChoice).values(workspace_id=workspace_id, user_id=user_id, **values)
            await uow.db.execute(
                statement.on_conflict_do_update(index_elements=["workspace_id", "user_id"], set_=values)
            )
    except Exception:  # a remembered default is a convenience: the task is made whatever happens here
        log.warning("could not remember the task choice in workspace %s", workspace_id, exc_info=True)


async def last_choice(ctx: ServiceContext, workspace_id: str) -> LastChoice | None:
    """The caller's last choice in a workspace they see; None before their first task there."""
    async with ctx.read() as db:
        await load_workspace(db, ctx.principal, workspace_id)
        row = await db.get(TaskChoice, (workspace_id, ctx.principal.user_id))
    if row is None:
        return None
    repositories = [ChosenRepository(r["repository_id"], r.get("base_branch")) for r in row.repositories]
    return LastChoice(repositories, row.executor_profile_id, row.agent_profile_id)

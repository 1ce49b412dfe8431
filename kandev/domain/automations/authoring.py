"""A "describe an automation" chat: a session on a hidden task (origin automation_authoring, kept out of the
board, lists and taskEvents) whose agent gets the automation-authoring MCP surface. The operator's first
message starts it; later ones go through sendMessage to its task, like any conversation."""

from __future__ import annotations

from kandev.domain.access.scope import load_workspace
from kandev.domain.context import ServiceContext
from kandev.domain.records import TaskRecord
from kandev.domain.sessions.service import Delivery
from kandev.domain.tasks.service import CreateTask, TaskService
from kandev.domain.validation import check_prompt
from kandev.domain.workflow.starts import start_agent
from kandev.models.enums import TaskOrigin

TITLE = "Describe an automation"


async def start_authoring(
    ctx: ServiceContext, workspace_id: str, prompt: str, agent_profile_id: str | None
) -> Delivery:
    """The chat's task and session, its agent started on `prompt`, in one transaction (a profile that can't
    run here refuses it before anything is written)."""
    check_prompt(prompt)
    async with ctx.unit_of_work() as uow:
        await load_workspace(uow.db, ctx.principal, workspace_id)
        command = CreateTask(
            workspace_id=workspace_id,
            title=TITLE,
            agent_profile_id=agent_profile_id,
            origin=TaskOrigin.AUTOMATION_AUTHORING,
            start_agent=False,
        )
        task = await TaskService(ctx).create_within(uow, command)
        session, queued = await start_agent(ctx, uow, task, prompt, source="user", agent_profile_id=agent_profile_id)
        return Delivery(TaskRecord.of(task), session, queued)

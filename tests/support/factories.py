"""Test data made the way a client makes it (services, in-process GraphQL, a served process), defined once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import AgentProfile, AutomationRun
from kandev.models.base import new_id
from kandev.models.enums import AgentKind
from kandev.platform.settings import Settings

TASK_FIELDS = "id title state autopilot parentId pendingAction workflowStepId sessions { id state }"
CREATE_TASK = (
    "mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename ... on Error { code message }"
    f" ... on CreateTaskPayload {{ task {{ {TASK_FIELDS} }} }} }} }}"
)


def settings_for(database_url: str, redis_url: str, folder: Path, **overrides: Any) -> Settings:
    """The suite's settings (the data directory is folder/data) with a test's own overrides."""
    return Settings(database_url=database_url, redis_url=redis_url, data_dir=folder / "data", **overrides)


async def new_task(
    services: Any, workspace_id: str, title: str = "Task", *, repositories: Sequence[str] = (), **fields: Any
) -> str:
    """A task made through the tasks service; `repositories` are repository ids; returns its id."""
    command = CreateTask(
        workspace_id=workspace_id,
        title=title,
        repositories=[RepositoryChoice(r) for r in repositories],
        **fields,
    )
    return (await services.tasks.create(command)).task.id


class Started(NamedTuple):
    task_id: str
    session_id: str


async def started_task(
    services: Any,
    workspace_id: str,
    prompt: str,
    title: str = "Task",
    *,
    agent_profile_id: str | None = None,
    **fields: Any,
) -> Started:
    """A task made through the tasks service and started with `prompt` (its turn is queued, nothing runs it yet)."""
    task_id = await new_task(services, workspace_id, title, **fields)
    session = (await services.sessions.start_task(task_id, prompt, agent_profile_id)).session
    return Started(task_id, session.id)


async def new_agent_profile(
    services: Any, workspace_id: str, name: str, kind: AgentKind = AgentKind.SCRIPTED, **fields: Any
) -> AgentProfile:
    """An agent profile of the workspace made through its service (a scripted agent unless `kind` says)."""
    return await services.agent_profiles.create(workspace_id, AgentProfileFields(name=name, kind=kind, **fields))


async def gql_task(gql: Any, workspace_id: str, title: str = "Task", **fields: Any) -> dict[str, Any]:
    """A task made by the createTask mutation through the in-process GraphQL caller; returns its TASK_FIELDS."""
    made = (await gql(CREATE_TASK, i={"workspaceId": workspace_id, "title": title, **fields}))["createTask"]
    assert made["__typename"] == "CreateTaskPayload", made
    return made["task"]


def served_task(mutate: Callable[..., dict[str, Any]], workspace_id: str, title: str, **fields: Any) -> dict[str, Any]:
    """A task made by createTask through a served client's `mutate(query, field, **variables)`: its TASK_FIELDS."""
    return mutate(CREATE_TASK, "createTask", i={"workspaceId": workspace_id, "title": title, **fields})["task"]


async def automation_run(db: Any, automation_id: str, created_at: datetime, **fields: Any) -> str:
    """A run row as the firing code writes one (a succeeded scheduled run unless `fields` say); its id."""
    run = AutomationRun(
        id=new_id(),
        automation_id=automation_id,
        trigger_type=fields.pop("trigger_type", "scheduled"),
        status=fields.pop("status", "succeeded"),
        trigger_data=fields.pop("trigger_data", {}),
        created_at=created_at,
        **fields,
    )
    async with db.transaction() as session:
        session.add(run)
    return run.id

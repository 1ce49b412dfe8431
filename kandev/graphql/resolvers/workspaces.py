"""Workspace and workflow queries."""

from __future__ import annotations

import strawberry

from kandev.graphql.schema.context import Info
from kandev.graphql.schema.types import Workflow, Workspace


async def workspaces(info: Info) -> list[Workspace]:
    return [Workspace.of(w) for w in await info.context.services.workspaces.list()]


async def workflows(info: Info, workspace_id: strawberry.ID) -> list[Workflow]:
    rows = await info.context.services.workflows.list_for_workspace(str(workspace_id))
    return [Workflow.of(w) for w in rows]


async def workflow(info: Info, id: strawberry.ID) -> Workflow:
    return Workflow.of(await info.context.services.workflows.get(str(id)))

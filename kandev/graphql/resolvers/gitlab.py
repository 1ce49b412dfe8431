"""GitLab connection: one query, two mutations."""

from __future__ import annotations

import strawberry

from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.gitlab_types import (
    ConnectGitlabInput,
    ConnectGitlabPayload,
    ConnectGitlabResult,
    DisconnectGitlabInput,
    DisconnectGitlabPayload,
    DisconnectGitlabResult,
    GitlabConnection,
)


async def gitlab_connection(info: Info, workspace_id: strawberry.ID) -> GitlabConnection | None:
    record = await info.context.services.gitlab.connection(str(workspace_id))
    return GitlabConnection.of(record) if record else None


async def connect_gitlab(info: Info, input: ConnectGitlabInput) -> ConnectGitlabResult:
    call = info.context.services.gitlab.connect(str(input.workspace_id), input.token, input.base_url)
    return await attempt(call, lambda r: ConnectGitlabPayload(connection=GitlabConnection.of(r)))


async def disconnect_gitlab(info: Info, input: DisconnectGitlabInput) -> DisconnectGitlabResult:
    call = info.context.services.gitlab.disconnect(str(input.workspace_id))
    return await attempt(call, lambda d: DisconnectGitlabPayload(workspace_id=input.workspace_id, disconnected=d))

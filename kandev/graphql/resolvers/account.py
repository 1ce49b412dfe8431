"""The caller's access tokens and workspace creation."""

from __future__ import annotations

import strawberry

from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.account_types import (
    AccessToken,
    AccessTokenPayload,
    CreateAccessTokenInput,
    CreateAccessTokenPayload,
    CreateAccessTokenResult,
    CreateWorkspaceInput,
    CreateWorkspaceResult,
    RevokeAccessTokenResult,
    UpdateWorkspaceInput,
    UpdateWorkspaceResult,
    WorkspacePayload,
)
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.types import Workspace


async def access_tokens(info: Info) -> list[AccessToken]:
    return [AccessToken(info=t) for t in await info.context.services.access_tokens.list()]


async def create_access_token(info: Info, input: CreateAccessTokenInput) -> CreateAccessTokenResult:
    return await attempt(
        info.context.services.access_tokens.create(input.name),
        lambda issued: CreateAccessTokenPayload(access_token=AccessToken(info=issued.info), token=issued.token),
    )


async def revoke_access_token(info: Info, id: strawberry.ID) -> RevokeAccessTokenResult:
    return await attempt(
        info.context.services.access_tokens.revoke(str(id)),
        lambda token: AccessTokenPayload(access_token=AccessToken(info=token)),
    )


async def create_workspace(info: Info, input: CreateWorkspaceInput) -> CreateWorkspaceResult:
    return await attempt(
        info.context.services.workspaces.create(input.name), lambda w: WorkspacePayload(workspace=Workspace.of(w))
    )


async def update_workspace(info: Info, input: UpdateWorkspaceInput) -> UpdateWorkspaceResult:
    return await attempt(
        info.context.services.workspaces.update(
            str(input.workspace_id),
            name=input.name,
            default_agent_profile_id=str(input.default_agent_profile_id) if input.default_agent_profile_id else None,
            move_merged_to_final_step=input.move_merged_tasks_to_final_step,
        ),
        lambda w: WorkspacePayload(workspace=Workspace.of(w)),
    )

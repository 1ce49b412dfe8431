"""The caller's own account: personal access tokens and the workspaces they create or rename."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.access.tokens import TokenInfo
from kandev.domain.validation import MAX_TITLE_LENGTH
from kandev.graphql.schema.columns import column
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.types import Workspace


@strawberry.type(description="A personal access token of the caller's; its value is shown only when created.")
class AccessToken:
    info: strawberry.Private[TokenInfo]

    id: strawberry.ID = column("id", strawberry.ID, source="info")
    name: str = column("name", str, source="info")
    created_at: datetime = column("created_at", datetime, source="info")
    last_used_at: datetime | None = column("last_used_at", datetime | None, source="info")
    revoked_at: datetime | None = column("revoked_at", datetime | None, source="info")


@strawberry.input
class CreateAccessTokenInput:
    name: str = strawberry.field(description="What the token is for (at most 200 characters).")


@strawberry.type
class CreateAccessTokenPayload:
    access_token: AccessToken
    token: str = strawberry.field(description="The token itself: shown this once, only its hash is stored.")


@strawberry.type
class AccessTokenPayload:
    access_token: AccessToken


@strawberry.input(description="A new workspace with the default workflow and the built-in profiles.")
class CreateWorkspaceInput:
    name: str = arg("Name (at most 200 characters).", min_length=1, max_length=MAX_TITLE_LENGTH)


@strawberry.input
class UpdateWorkspaceInput:
    workspace_id: strawberry.ID
    name: str | None = strawberry.field(default=None, description="New name; omitted: unchanged.")
    default_agent_profile_id: strawberry.ID | None = strawberry.field(
        default=None,
        description="The agent profile tasks and automations naming none run on (the workspace's own or a "
        "server-wide one); omitted: unchanged. The automations that follow it are acknowledged again.",
    )
    move_merged_tasks_to_final_step: bool | None = strawberry.field(
        default=None,
        description="Move a task to its workflow's final step once its pull requests are merged; omitted: unchanged.",
    )


@strawberry.type
class WorkspacePayload:
    workspace: Workspace


CreateAccessTokenResult: TypeAlias = Annotated[
    CreateAccessTokenPayload | ExpectedError, strawberry.union("CreateAccessTokenResult")
]
RevokeAccessTokenResult: TypeAlias = Annotated[
    AccessTokenPayload | ExpectedError, strawberry.union("RevokeAccessTokenResult")
]
CreateWorkspaceResult: TypeAlias = Annotated[
    WorkspacePayload | ExpectedError, strawberry.union("CreateWorkspaceResult")
]
UpdateWorkspaceResult: TypeAlias = Annotated[
    WorkspacePayload | ExpectedError, strawberry.union("UpdateWorkspaceResult")
]

"""GitLab: a workspace's connection and the inputs, payloads and result unions of its mutations (each
command declared once here). The token only ever flows in."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.gitlab import connections as rules
from kandev.domain.gitlab.connections import GitlabConnectionRecord
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError

_WORKSPACE = "The workspace."


@strawberry.type(description="A workspace's GitLab connection; its token is never shown.")
class GitlabConnection:
    username: str = strawberry.field(description="The GitLab user whose token the workspace uses.")
    base_url: str = strawberry.field(description="The GitLab instance (e.g. https://gitlab.com).")
    host: str = strawberry.field(description="The instance's host: remotes on it are GitLab repositories.")
    connected_at: datetime

    @classmethod
    def of(cls, record: GitlabConnectionRecord) -> GitlabConnection:
        return cls(
            username=record.username, base_url=record.base_url, host=record.host, connected_at=record.connected_at
        )


@strawberry.input(description="Connect a workspace to GitLab with a token, verified with the instance first.")
class ConnectGitlabInput:
    workspace_id: strawberry.ID = arg(_WORKSPACE, min_length=1)
    token: str = arg(
        "A GitLab personal, group or project access token; stored encrypted as a workspace secret, never shown again.",
        min_length=1,
        max_length=rules.MAX_TOKEN_LENGTH,
    )
    base_url: str | None = arg(
        "The GitLab instance, an http(s) URL without credentials. Default: the server's (https://gitlab.com "
        "unless configured); another instance needs an admin.",
        default=None,
        max_length=rules.MAX_BASE_URL_LENGTH,
    )


@strawberry.input(description="Forget a workspace's GitLab connection and its token.")
class DisconnectGitlabInput:
    workspace_id: strawberry.ID = arg(_WORKSPACE, min_length=1)


@strawberry.type
class ConnectGitlabPayload:
    connection: GitlabConnection


@strawberry.type
class DisconnectGitlabPayload:
    workspace_id: strawberry.ID
    disconnected: bool = strawberry.field(description="False when the workspace had no connection.")


ConnectGitlabResult: TypeAlias = Annotated[
    ConnectGitlabPayload | ExpectedError, strawberry.union("ConnectGitlabResult")
]
DisconnectGitlabResult: TypeAlias = Annotated[
    DisconnectGitlabPayload | ExpectedError, strawberry.union("DisconnectGitlabResult")
]

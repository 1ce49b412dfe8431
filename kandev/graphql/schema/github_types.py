"""GitHub: a workspace's connection, the server's App, and the inputs, payloads and result unions of their
mutations (each command declared once here). Tokens, keys and secrets only ever flow in."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.github import connections as rules
from kandev.domain.github.connections import AppRecord, ConnectionRecord
from kandev.graphql.schema.declare import arg
from kandev.graphql.schema.errors import ExpectedError

_WORKSPACE = "The workspace."


@strawberry.type(description="A workspace's GitHub connection; its token is never shown.")
class GithubConnection:
    login: str = strawberry.field(description="The GitHub user whose token the workspace uses.")
    host: str = strawberry.field(description="The code host (github.com, or a GitHub Enterprise host).")
    connected_at: datetime

    @classmethod
    def of(cls, record: ConnectionRecord) -> GithubConnection:
        return cls(login=record.login, host=record.host, connected_at=record.connected_at)


@strawberry.input(description="Connect a workspace to GitHub with a token, verified with GitHub first.")
class ConnectGithubInput:
    workspace_id: strawberry.ID = arg(_WORKSPACE, min_length=1)
    token: str = arg(
        "A GitHub token (classic or fine-grained); stored encrypted as a workspace secret, never shown again.",
        min_length=1,
        max_length=rules.MAX_TOKEN_LENGTH,
    )


@strawberry.input(description="Forget a workspace's GitHub connection and its token.")
class DisconnectGithubInput:
    workspace_id: strawberry.ID = arg(_WORKSPACE, min_length=1)


@strawberry.input(description="The server-wide GitHub App (admins only); key and secret are stored encrypted.")
class SetGithubAppInput:
    app_id: str = arg("The App's numeric id.", min_length=1, max_length=20)
    private_key: str = arg("The App's PEM private key.", min_length=1, max_length=rules.MAX_PRIVATE_KEY_LENGTH)
    webhook_secret: str = arg(
        "The App's webhook secret (deliveries are verified with it).",
        min_length=1,
        max_length=rules.MAX_WEBHOOK_SECRET_LENGTH,
    )


@strawberry.input(
    description="Route (or, with routed false, stop routing) a GitHub App installation's webhook deliveries to "
    "a workspace (admins only)."
)
class RouteGithubInstallationInput:
    workspace_id: strawberry.ID = arg(_WORKSPACE, min_length=1)
    installation_id: str = arg(
        "The installation's numeric id (installation.id of its deliveries).", min_length=1, max_length=20
    )
    routed: bool = arg("False stops routing it.", default=True)


@strawberry.type
class RouteGithubInstallationPayload:
    workspace_id: strawberry.ID
    installation_id: str
    routed: bool
    changed: bool = strawberry.field(description="False when it already was (or was not) routed there.")


@strawberry.type
class ConnectGithubPayload:
    connection: GithubConnection


@strawberry.type
class DisconnectGithubPayload:
    workspace_id: strawberry.ID
    disconnected: bool = strawberry.field(description="False when the workspace had no connection.")


@strawberry.type(description="The server's GitHub App; the key and the webhook secret are never shown.")
class GithubApp:
    app_id: str
    updated_at: datetime

    @classmethod
    def of(cls, record: AppRecord) -> GithubApp:
        return cls(app_id=record.app_id, updated_at=record.updated_at)


@strawberry.type
class SetGithubAppPayload:
    app: GithubApp


ConnectGithubResult: TypeAlias = Annotated[
    ConnectGithubPayload | ExpectedError, strawberry.union("ConnectGithubResult")
]
DisconnectGithubResult: TypeAlias = Annotated[
    DisconnectGithubPayload | ExpectedError, strawberry.union("DisconnectGithubResult")
]
RouteGithubInstallationResult: TypeAlias = Annotated[
    RouteGithubInstallationPayload | ExpectedError, strawberry.union("RouteGithubInstallationResult")
]
SetGithubAppResult: TypeAlias = Annotated[SetGithubAppPayload | ExpectedError, strawberry.union("SetGithubAppResult")]

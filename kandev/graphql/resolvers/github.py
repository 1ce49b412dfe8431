"""GitHub connection, App and installation routing: one query, four mutations."""

from __future__ import annotations

import strawberry

from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.github_types import (
    ConnectGithubInput,
    ConnectGithubPayload,
    ConnectGithubResult,
    DisconnectGithubInput,
    DisconnectGithubPayload,
    DisconnectGithubResult,
    GithubApp,
    GithubConnection,
    RouteGithubInstallationInput,
    RouteGithubInstallationPayload,
    RouteGithubInstallationResult,
    SetGithubAppInput,
    SetGithubAppPayload,
    SetGithubAppResult,
)


async def github_connection(info: Info, workspace_id: strawberry.ID) -> GithubConnection | None:
    record = await info.context.services.github.connection(str(workspace_id))
    return GithubConnection.of(record) if record else None


async def connect_github(info: Info, input: ConnectGithubInput) -> ConnectGithubResult:
    call = info.context.services.github.connect(str(input.workspace_id), input.token)
    return await attempt(call, lambda r: ConnectGithubPayload(connection=GithubConnection.of(r)))


async def disconnect_github(info: Info, input: DisconnectGithubInput) -> DisconnectGithubResult:
    call = info.context.services.github.disconnect(str(input.workspace_id))
    return await attempt(call, lambda d: DisconnectGithubPayload(workspace_id=input.workspace_id, disconnected=d))


async def set_github_app(info: Info, input: SetGithubAppInput) -> SetGithubAppResult:
    call = info.context.services.github.set_app(input.app_id, input.private_key, input.webhook_secret)
    return await attempt(call, lambda r: SetGithubAppPayload(app=GithubApp.of(r)))


async def route_github_installation(info: Info, input: RouteGithubInstallationInput) -> RouteGithubInstallationResult:
    github = info.context.services.github
    workspace_id = str(input.workspace_id)
    call = (github.route_installation if input.routed else github.unroute_installation)(
        workspace_id, input.installation_id
    )
    return await attempt(
        call,
        lambda changed: RouteGithubInstallationPayload(
            workspace_id=input.workspace_id,
            installation_id=input.installation_id,
            routed=input.routed,
            changed=changed,
        ),
    )

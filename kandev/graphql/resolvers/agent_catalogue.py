"""The agent catalogue and npm installs of its agents (admins only: the server installs what agents run)."""

from __future__ import annotations

import asyncio

from kandev.domain.access.users import ensure_admin
from kandev.domain.errors import NotFoundError, ValidationError
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.catalogue_types import (
    AgentCatalogueEntry,
    AgentInstall,
    AgentInstallPayload,
    AgentInstallResult,
)
from kandev.graphql.schema.context import Info
from kandev.runtime import agent_catalogue
from kandev.runtime.agent_catalogue import AgentInstallError, CatalogueEntry


def _view(item: CatalogueEntry, info: Info) -> AgentCatalogueEntry:
    command = agent_catalogue.installed_command(item, info.context.services.ctx.settings.work_path)
    return AgentCatalogueEntry(
        id=item.id,
        name=item.name,
        command=list(item.command),
        install=AgentInstall(npm_package=item.npm_package, version=item.version, binary_url=item.binary_url),
        env_keys=list(item.env_keys),
        docs_url=item.docs_url,
        verified=item.verified,
        installed=command is not None,
        installed_command=command,
    )


async def agent_catalogue_entries(info: Info) -> list[AgentCatalogueEntry]:
    return [_view(item, info) for item in agent_catalogue.catalogue()]


async def _install(info: Info, agent_id: str, update: bool) -> AgentCatalogueEntry:
    ensure_admin(info.context.services.principal, "install agents")
    item = agent_catalogue.entry(agent_id)
    if item is None:
        raise NotFoundError("agent", agent_id)
    settings = info.context.services.ctx.settings
    try:
        await asyncio.to_thread(
            agent_catalogue.install, item, settings.work_path, settings.mcp_npm_source, update=update
        )
    except AgentInstallError as exc:
        raise ValidationError(str(exc), field="id") from None
    return _view(item, info)


async def install_agent(info: Info, id: str) -> AgentInstallResult:
    return await attempt(_install(info, id, False), lambda a: AgentInstallPayload(agent=a))


async def update_agent(info: Info, id: str) -> AgentInstallResult:
    return await attempt(_install(info, id, True), lambda a: AgentInstallPayload(agent=a))

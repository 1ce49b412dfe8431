"""The agent catalogue and npm installs of its agents (admins only: a worker installs what agents run, as a job whose
progress the catalogue shows)."""

from __future__ import annotations

from kandev.domain.access.users import ensure_admin
from kandev.domain.errors import NotFoundError, ValidationError
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.catalogue_types import (
    AgentCatalogueEntry,
    AgentInstall,
    AgentInstallJob,
    AgentInstallPayload,
    AgentInstallResult,
)
from kandev.graphql.schema.context import Info
from kandev.platform.job_queues import InstallProgress
from kandev.runtime import agent_catalogue
from kandev.runtime.agent_catalogue import AgentInstallError, CatalogueEntry


def _view(item: CatalogueEntry, info: Info, progress: InstallProgress | None) -> AgentCatalogueEntry:
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
        install_job=AgentInstallJob.of(progress),
    )


async def agent_catalogue_entries(info: Info) -> list[AgentCatalogueEntry]:
    items = agent_catalogue.catalogue()
    installs = await info.context.services.ctx.jobs.agent_installs([item.id for item in items])
    return [_view(item, info, installs.get(item.id)) for item in items]


async def _install(info: Info, agent_id: str, update: bool) -> AgentCatalogueEntry:
    ensure_admin(info.context.services.principal, "install agents")
    item = agent_catalogue.entry(agent_id)
    if item is None:
        raise NotFoundError("agent", agent_id)
    try:
        agent_catalogue.require_npm(item)
    except AgentInstallError as exc:
        raise ValidationError(str(exc), field="id") from None
    jobs = info.context.services.ctx.jobs
    await jobs.enqueue_agent_install(item.id, update)
    return _view(item, info, (await jobs.agent_installs([item.id])).get(item.id))


async def install_agent(info: Info, id: str) -> AgentInstallResult:
    return await attempt(_install(info, id, False), lambda a: AgentInstallPayload(agent=a))


async def update_agent(info: Info, id: str) -> AgentInstallResult:
    return await attempt(_install(info, id, True), lambda a: AgentInstallPayload(agent=a))

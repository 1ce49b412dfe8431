"""open_pull_request_kandev for the task's own agent under the ASK permission policy: the call waits on a permission
request a person answers; allowed, the pull request is opened once and linked to the task; rejected, the agent gets
PERMISSION_DENIED and GitHub never sees a create."""

from __future__ import annotations

import asyncio
from typing import Any

from kandev.models import AgentProfile, Session
from kandev.models.enums import PermissionPolicy
from tests.integration.mcp_bridge import conftest as mcp_bridge
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.shipping import pull_requests, pushed_task

# The MCP tool tests' fixture (the GitHub shipping fixtures come from this folder's conftest).
tool_surface = mcp_bridge.tool_surface


async def asking_agent(services: Any, task_id: str) -> Any:
    """An agent caller on the task whose profile's permission policy is ASK."""
    agent = await agent_on(services, task_id)
    async with services.ctx.unit_of_work() as uow:
        session = await uow.db.get(Session, agent.session_id)
        profile = await uow.db.get(AgentProfile, session.agent_profile_id)
        profile.permission_policy = PermissionPolicy.ASK
    return agent


async def asked(services: Any, workspace_id: str, task_id: str) -> Any:
    """The permission request the agent's call waits on (bounded wait)."""
    async with asyncio.timeout(15):
        while not (found := await services.permissions.pending(workspace_id, task_id=task_id)):
            await asyncio.sleep(0.05)
    [request] = found
    return request


async def test_an_agent_opens_its_pull_request_once_a_person_allows_it(
    services,
    gql,
    workspace_id,
    tmp_path,
    github,
    git_server,
    tool_surface,
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    agent = await asking_agent(services, ship.task_id)
    call = asyncio.create_task(call_tool(tool_surface, agent, "open_pull_request_kandev", body="Ready"))
    request = await asked(services, workspace_id, ship.task_id)
    assert request.tool_call["tool"] == "open_pull_request_kandev"
    assert github.created == [] and not call.done()
    await services.permissions.resolve(request.id, "allow")
    async with asyncio.timeout(20):
        is_error, result = await call
    assert not is_error, result
    assert [c["head"] for c in github.created] == [ship.branch]
    [shown] = (await pull_requests(gql, ship.task_id))["pullRequests"]
    assert (result["id"], result["state"], result["base_branch"]) == (shown["number"], "open", "main")


async def test_an_agents_pull_request_a_person_rejects_is_denied_and_never_opened(
    services,
    gql,
    workspace_id,
    tmp_path,
    github,
    git_server,
    tool_surface,
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    agent = await asking_agent(services, ship.task_id)
    call = asyncio.create_task(call_tool(tool_surface, agent, "open_pull_request_kandev"))
    request = await asked(services, workspace_id, ship.task_id)
    await services.permissions.resolve(request.id, "reject")
    async with asyncio.timeout(20):
        is_error, result = await call
    assert is_error and result["code"] == "PERMISSION_DENIED", result
    assert github.created == []
    assert (await pull_requests(gql, ship.task_id))["pullRequests"] == []

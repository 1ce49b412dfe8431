"""A non-admin's remote MCP server URL never points inward: refused when it is saved (typed, naming the field,
echoing nothing), and checked again when the agent launches, where a name that rebound to loopback since is not
delivered and the transcript says so. An admin's definitions, and hosts an admin allows, are not restricted."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import select, update

from kandev.domain.mcp.rules import McpServerFields
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.jobs.turns import run_turns
from kandev.models import McpServer, Message, User
from kandev.models.enums import McpScope, McpServerKind
from tests.conftest import GraphQLCaller
from tests.support.factories import new_agent_profile
from tests.support.fake_dns import PUBLIC
from tests.support.users import services_as
from tests.support.workers import empty_queues

CREATE = """mutation($i: CreateMcpServerInput!) { createMcpServer(input: $i) { __typename
  ... on McpServerPayload { mcpServer { id url } } ... on Error { code message fields } } }"""
UPDATE = """mutation($i: UpdateMcpServerInput!) { updateMcpServer(input: $i) { __typename
  ... on McpServerPayload { mcpServer { id url } } ... on Error { code message fields } } }"""

ATTACKS = [
    "http://127.0.0.1:8420/mcp",
    "http://localhost:8420/mcp",
    "http://169.254.169.254/latest/meta-data/iam/",
    "http://[::ffff:169.254.169.254]/latest/",
    "http://[fd00:ec2::254]/latest/",
    "http://0x7f000001:8420/mcp",
    "http://2130706433/mcp",
    "http://10.0.0.8/mcp?token=tok-6f2c91",
    "https://metadata.rebind.example/latest/",  # a name that resolves to the metadata address
    "https://intranet.rebind.example/",  # one public and one private address
]


async def stored_urls(services: Services) -> list[str | None]:
    async with services.ctx.db.read() as db:
        return sorted(str(url) for url in await db.scalars(select(McpServer.url)))


@pytest.fixture
async def mallory(services: Services) -> tuple[Services, str]:
    """A non-admin with a workspace of her own."""
    her = await services_as(services, "mallory")
    return her, (await her.workspaces.create("Mallory's")).id


@pytest.mark.parametrize("url", ATTACKS)
async def test_a_non_admins_url_pointing_inward_is_refused_at_save_and_nothing_is_stored(services, mallory, dns, url):
    dns.set("metadata.rebind.example", ["169.254.169.254"])
    dns.set("intranet.rebind.example", [PUBLIC, "192.168.10.4"])
    her, workspace = mallory
    gql = GraphQLCaller(her)
    answer = (await gql(CREATE, i={"workspaceId": workspace, "name": "docs", "kind": "REMOTE", "url": url}))[
        "createMcpServer"
    ]
    assert answer["__typename"] == "ValidationError" and answer["fields"]["field"] == "url"
    assert answer["fields"]["reason"] == "inward_address"
    assert "tok-6f2c91" not in json.dumps(answer) and "rebind" not in json.dumps(answer)
    assert await stored_urls(services) == []


async def test_a_non_admin_cannot_move_a_saved_url_inward(services, mallory):
    her, workspace = mallory
    gql = GraphQLCaller(her)
    made = await gql(
        CREATE, i={"workspaceId": workspace, "name": "docs", "kind": "REMOTE", "url": "https://docs.example/"}
    )
    server_id = made["createMcpServer"]["mcpServer"]["id"]
    moved = await gql(UPDATE, i={"mcpServerId": server_id, "url": "http://169.254.169.254/"})
    assert moved["updateMcpServer"]["__typename"] == "ValidationError"
    assert await stored_urls(services) == ["https://docs.example/"]


async def test_an_admins_definition_and_an_allowed_host_may_point_inward(services, mallory, dns):
    # `services` acts as the local user, an admin.
    workspace_id = (await services.workspaces.list())[0].id
    local = McpServerFields(name="local", kind=McpServerKind.REMOTE, url="http://127.0.0.1:9000/mcp")
    assert (await services.mcp_servers.create(workspace_id, local)).url == local.url
    dns.set("mcp.corp.example", ["10.20.0.5"])
    her, workspace = mallory
    allowing = Services(
        replace(her.ctx, settings=her.ctx.settings.model_copy(update={"mcp_allowed_hosts": "mcp.corp.example"}))
    )
    corp = McpServerFields(name="corp", kind=McpServerKind.REMOTE, url="https://mcp.corp.example/mcp")
    assert (await allowing.mcp_servers.create(workspace, corp)).url == corp.url
    # ... and only that host.
    sneaky = McpServerFields(name="sneaky", kind=McpServerKind.REMOTE, url="http://10.20.0.5/mcp")
    with pytest.raises(Exception) as refused:
        await allowing.mcp_servers.create(workspace, sneaky)
    assert getattr(refused.value, "field", None) == "url"


async def agent_reports(services: Services, session_id: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The agent's `/mcp-servers` answers (name -> origins) and the transcript's system notes."""
    async with services.ctx.db.read() as db:
        rows = (
            await db.execute(
                select(Message.kind, Message.text).where(Message.session_id == session_id).order_by(Message.seq)
            )
        ).tuples()
        messages = list(rows)
    reports = [
        {s["name"]: s["origins"] for s in json.loads(text)["mcp_servers"]}
        for kind, text in messages
        if kind == "AGENT" and text.startswith('{"mcp_servers"')
    ]
    return reports, [text for kind, text in messages if kind == "SYSTEM"]


async def test_a_non_admins_server_whose_name_rebinds_inward_after_saving_is_not_delivered_at_launch(
    services, settings, db, dns
):
    workspace_id = (await services.workspaces.list())[0].id
    profile = await new_agent_profile(services, workspace_id, "Scripted with MCP")
    # The workspace's owner is no admin (any more), and neither is the person saving.
    async with db.transaction() as s:
        await s.execute(update(User).values(admin=False))
    person = Services(services.ctx.with_principal(replace(services.ctx.principal, admin=False)))
    dns.set("docs.rebind.example", [PUBLIC], ["127.0.0.1"])  # public when saved, loopback ever after
    docs = McpServerFields(name="docs", kind=McpServerKind.REMOTE, url="http://docs.rebind.example:8420/mcp?k=tok-3b7e")
    wiki = McpServerFields(name="wiki", kind=McpServerKind.REMOTE, url="https://wiki.example/mcp")
    task = (
        await person.tasks.create(CreateTask(workspace_id=workspace_id, title="Docs", agent_profile_id=profile.id))
    ).task
    for fields in (docs, wiki):
        server = await person.mcp_servers.create(workspace_id, fields)
        await person.mcp_selections.select(server.id, McpScope.TASK, task.id)
    session = (await person.sessions.start_task(task.id, "/mcp-servers", profile.id)).session
    empty_queues(settings.redis_url)  # the turn runs here, in this process, where the test's resolver answers
    await run_turns(settings, session.id)
    reports, notes = await agent_reports(services, session.id)
    assert list(reports[-1]) == ["kandev", "wiki"]
    [note] = [n for n in notes if "Not given to the agent" in n]
    assert "'docs'" in note and "KANDEV_MCP_ALLOWED_HOSTS" in note
    assert "rebind" not in note and "tok-3b7e" not in note

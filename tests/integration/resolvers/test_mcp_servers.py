"""Workspace MCP definitions over GraphQL with auth on: typed errors that change nothing, who may define a local
process, and what another user's definition looks like (not found)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.models import McpServer, McpServerSelection
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for

FIELDS = "id name kind url headers package command args env serverWide workspaceId"
CREATE = f"""mutation($i: CreateMcpServerInput!) {{ createMcpServer(input: $i) {{ __typename
  ... on McpServerPayload {{ mcpServer {{ {FIELDS} }} }} ... on Error {{ code message fields }} }} }}"""
UPDATE = f"""mutation($i: UpdateMcpServerInput!) {{ updateMcpServer(input: $i) {{ __typename
  ... on McpServerPayload {{ mcpServer {{ {FIELDS} }} }} ... on Error {{ code message fields }} }} }}"""
DELETE = """mutation($id: ID!) { deleteMcpServer(mcpServerId: $id) { __typename ... on Error { code } } }"""
SELECT = """mutation($i: McpSelectionInput!) { selectMcpServer(input: $i) { __typename
  ... on Error { code message fields } } }"""
LIST = f"query($ws: ID!) {{ mcpServers(workspaceId: $ws) {{ {FIELDS} }} }}"
TEMPLATES = "{ mcpServerTemplates { key name kind url package headers secrets publisher } }"
REMOTE = {"kind": "REMOTE", "url": "https://mcp.example.test/mcp"}


@pytest.fixture
def settings(database_url, redis_url, tmp_path):
    return settings_for(database_url, redis_url, tmp_path, auth="on")


async def stored(services: Any) -> list[tuple[Any, ...]]:
    async with services.ctx.db.read() as db:
        servers = [(s.id, s.workspace_id, s.name, s.url, dict(s.headers)) for s in await db.scalars(select(McpServer))]
        selections = [(s.mcp_server_id, s.scope, s.target_id) for s in await db.scalars(select(McpServerSelection))]
        return sorted(servers) + sorted(selections)


async def test_a_member_defines_a_remote_server_with_a_secret_header_and_lists_it(bob, bob_workspace):
    gql = GraphQLCaller(bob)
    headers = {"Authorization": "Bearer ${secret:DOCS_TOKEN}"}
    answer = await gql(CREATE, i={"workspaceId": bob_workspace, "name": "docs", **REMOTE, "headers": headers})
    server = answer["createMcpServer"]["mcpServer"]
    assert server["kind"] == "REMOTE" and server["headers"] == headers and server["serverWide"] is False
    assert [s["name"] for s in (await gql(LIST, ws=bob_workspace))["mcpServers"]] == ["docs"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({**REMOTE, "url": "ftp://mcp.example.test/"}, "url"),
        ({**REMOTE, "url": "https://user:pw-8c1d@mcp.example.test/"}, "url"),
        ({**REMOTE, "url": "https://mcp.example.test/?k=${secret:X}"}, "url"),
        ({**REMOTE, "headers": {"Authorization": "Bearer tok-literal-5e2b"}}, "headers.Authorization"),
        ({**REMOTE, "headers": {"Bad Name": "${secret:X}"}}, "headers"),
        ({**REMOTE, "name": "kandev"}, "name"),
        ({**REMOTE, "name": "has/slash"}, "name"),
        ({"kind": "REMOTE"}, "url"),
        ({**REMOTE, "command": "/bin/true"}, "command"),
        ({"kind": "NPM", "package": "fixture-mcp@^1.2.0"}, "package"),
        ({"kind": "NPM", "package": "fixture-mcp@latest"}, "package"),
        ({"kind": "NPM", "package": "fixture-mcp"}, "package"),
        ({"kind": "EXECUTABLE", "command": "relative/server"}, "command"),
        ({"kind": "EXECUTABLE", "command": "/nonexistent/mcp-server"}, "command"),
    ],
    ids=[
        "url-scheme",
        "url-credentials",
        "url-secret",
        "literal-header",
        "header-name",
        "reserved-name",
        "slash-name",
        "no-url",
        "field-of-another-kind",
        "npm-range",
        "npm-tag",
        "npm-no-version",
        "relative-executable",
        "missing-executable",
    ],
)
async def test_bad_input_is_a_typed_validation_error_that_stores_nothing(services, fields, field):
    before = await stored(services)
    answer = await GraphQLCaller(services)(CREATE, i={"workspaceId": None, "name": "docs", **fields})
    error = answer["createMcpServer"]
    assert error["__typename"] == "ValidationError", error
    assert error["fields"]["field"] == field
    assert "pw-8c1d" not in error["message"] and "tok-literal-5e2b" not in error["message"]
    assert await stored(services) == before


async def test_names_are_unique_per_workspace_counting_server_wide_ones(services, workspace_id):
    gql = GraphQLCaller(services)
    await gql(CREATE, i={"workspaceId": None, "name": "docs", **REMOTE})
    before = await stored(services)
    answer = await gql(CREATE, i={"workspaceId": workspace_id, "name": "docs", **REMOTE})
    assert answer["createMcpServer"]["__typename"] == "ConflictError"
    assert await stored(services) == before


@pytest.mark.parametrize(
    "fields",
    [{"kind": "NPM", "package": "@kandev-test/fixture-mcp@1.2.3"}, {"kind": "EXECUTABLE", "command": sys.executable}],
    ids=["npm", "executable"],
)
async def test_with_auth_on_a_local_process_server_is_admin_only_and_server_wide(services, bob, bob_workspace, fields):
    before = await stored(services)
    for workspace in (bob_workspace, None):
        denied = await GraphQLCaller(bob)(CREATE, i={"workspaceId": workspace, "name": "local", **fields})
        assert denied["createMcpServer"]["__typename"] == "PermissionDeniedError"
    in_workspace = await GraphQLCaller(services)(CREATE, i={"workspaceId": bob_workspace, "name": "local", **fields})
    assert in_workspace["createMcpServer"]["fields"] == {"field": "workspace_id", "reason": "server_wide_only"}
    assert await stored(services) == before
    created = await GraphQLCaller(services)(CREATE, i={"workspaceId": None, "name": "local", **fields})
    server = created["createMcpServer"]["mcpServer"]
    assert server["serverWide"] is True
    # Bob's workspace lists it and he may select it, but never change or delete it.
    assert [s["name"] for s in (await GraphQLCaller(bob)(LIST, ws=bob_workspace))["mcpServers"]] == ["local"]
    renamed = await GraphQLCaller(bob)(UPDATE, i={"mcpServerId": server["id"], "name": "mine"})
    assert renamed["updateMcpServer"]["__typename"] == "PermissionDeniedError"
    assert (await GraphQLCaller(bob)(DELETE, id=server["id"]))["deleteMcpServer"]["__typename"] == (
        "PermissionDeniedError"
    )


async def test_another_users_definition_is_not_found_to_select_change_or_delete(
    services, bob, bob_workspace, workspace_id
):
    mine = await GraphQLCaller(services)(CREATE, i={"workspaceId": workspace_id, "name": "private", **REMOTE})
    server_id = mine["createMcpServer"]["mcpServer"]["id"]
    bob_task = await bob.tasks.create(CreateTask(workspace_id=bob_workspace, title="Bob's"))
    gql = GraphQLCaller(bob)
    chosen = await gql(SELECT, i={"mcpServerId": server_id, "scope": "TASK", "targetId": bob_task.task.id})
    assert chosen["selectMcpServer"]["code"] == "NOT_FOUND"
    assert (await gql(UPDATE, i={"mcpServerId": server_id, "name": "x"}))["updateMcpServer"]["code"] == "NOT_FOUND"
    assert (await gql(DELETE, id=server_id))["deleteMcpServer"]["__typename"] == "NotFoundError"


async def test_the_curated_templates_pin_exact_versions_and_bind_secrets_by_reference(gql):
    templates = (await gql(TEMPLATES))["mcpServerTemplates"]
    assert {"github", "memory"} <= {t["key"] for t in templates}
    for template in templates:
        if template["kind"] == "NPM":
            assert template["package"].rsplit("@", 1)[1].count(".") == 2
        for value in template["headers"].values():
            assert "${secret:" in value


async def test_a_saved_definition_is_told_on_workspace_events_as_a_kind_and_an_id(settings, services, workspace_id):
    from tests.integration.resolvers.test_workspace_events import SUBSCRIPTION, _next, _socket
    from tests.support.server import running_server

    async with running_server(settings) as address:
        tab = await _socket(address, services, "local")
        try:
            await tab.listen(SUBSCRIPTION, ws=workspace_id)
            created = await GraphQLCaller(services)(CREATE, i={"workspaceId": workspace_id, "name": "docs", **REMOTE})
            server_id = created["createMcpServer"]["mcpServer"]["id"]
            heard = await _next(tab)
        finally:
            await tab.close()
    assert heard == {"kind": "MCP_SERVER", "id": server_id}

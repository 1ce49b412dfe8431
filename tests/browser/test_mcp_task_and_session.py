"""Workspace MCP servers on a task and its session, and MCP Registry entries in the marketplace, in a real headless
Chromium against a real `kandev serve`: a server chosen in the task form's Advanced section is selected at the new
task; the session panel lists each effective server with its origins, adds and removes a session-scope one and
follows selections made elsewhere; registry entries are publisher-supplied plain text, deprecated ones hidden, and
an outage shows the cache as stale."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.conftest import KandevServer, serve
from tests.browser.test_web_client import open_app, unique
from tests.support.fake_mcp_registry import FakeMcpRegistry, registry_item, threaded_fake_mcp_registry

pytestmark = pytest.mark.slow

CREATE = """mutation($i: CreateMcpServerInput!) { createMcpServer(input: $i) { __typename
  ... on McpServerPayload { mcpServer { id name } } } }"""
SELECT = """mutation($i: McpSelectionInput!) { selectMcpServer(input: $i) { __typename } }"""
DESELECT = """mutation($i: McpSelectionInput!) { deselectMcpServer(input: $i) { __typename } }"""
SELECTED = "query($s: McpScope!, $t: ID!) { selectedMcpServers(scope: $s, targetId: $t) { name } }"
PROFILES = "query($w: ID!) { agentProfiles(workspaceId: $w) { id name } }"
SERVERS = "query($w: ID!) { mcpServers(workspaceId: $w) { id name } }"


def remote(server: KandevServer, name: str) -> str:
    i = {"workspaceId": server.workspace_id, "name": name, "kind": "REMOTE", "url": f"https://{name}.example.test/mcp"}
    return server.mutate(CREATE, "createMcpServer", i=i)["mcpServer"]["id"]


def test_a_server_chosen_in_advanced_is_selected_at_the_task_and_the_session_panel_shows_origins(
    page: Any, kandev_server: KandevServer
) -> None:
    from playwright.sync_api import expect

    suffix = unique("x").split()[1]
    task_server, profile_server, session_server = (f"{kind}-{suffix}" for kind in ("tsk", "prof", "sess"))
    for name in (task_server, profile_server, session_server):
        remote(kandev_server, name)
    profiles = kandev_server.gql(PROFILES, w=kandev_server.workspace_id)["agentProfiles"]
    scripted = next(p["id"] for p in profiles if p["name"] == "Scripted")
    profile_id = {s["name"]: s["id"] for s in kandev_server.gql(SERVERS, w=kandev_server.workspace_id)["mcpServers"]}
    on_profile = {"mcpServerId": profile_id[profile_server], "scope": "PROFILE", "targetId": scripted}
    kandev_server.mutate(SELECT, "selectMcpServer", i=on_profile)
    try:
        open_app(page, kandev_server)
        page.get_by_test_id("new-task").click()
        form = page.get_by_test_id("new-task-dialog").get_by_test_id("task-form")
        title = unique("MCP task")
        form.locator('input[name="title"]').fill(title)
        form.locator('textarea[name="prompt"]').fill("/mcp-servers")
        advanced = form.get_by_test_id("task-advanced")
        box = advanced.locator(f'[data-testid="task-mcp-select"][data-name="{task_server}"]')
        expect(box).to_be_hidden()  # collapsed until opened
        advanced.locator("summary").click()
        box.check()
        form.get_by_test_id("create-task-submit").click()
        expect(page.get_by_test_id("new-task-dialog")).to_be_hidden()  # closes once the selection and start are done

        row = page.get_by_test_id("sidebar").get_by_test_id("task-row").filter(has_text=title)
        task_id = row.get_attribute("data-task-id")
        assert [s["name"] for s in kandev_server.gql(SELECTED, s="TASK", t=task_id)["selectedMcpServers"]] == [
            task_server
        ]

        row.get_by_role("link").click()
        # The agent's first turn already had it: the scripted agent reports what it received in session/new.
        expect(page.get_by_test_id("msg-agent").filter(has_text="mcp_servers")).to_contain_text(task_server)
        panel = page.get_by_test_id("session-mcp")
        panel.locator("summary").click()
        task_row = panel.locator(f'[data-testid="session-mcp-server"][data-name="{task_server}"]')
        profile_row = panel.locator(f'[data-testid="session-mcp-server"][data-name="{profile_server}"]')
        expect(task_row.get_by_test_id("session-mcp-origins")).to_have_text("from task")
        expect(profile_row.get_by_test_id("session-mcp-origins")).to_have_text("from agent profile")
        expect(task_row.get_by_test_id("session-mcp-remove")).to_have_count(0)  # inherited: not removable here

        panel.get_by_test_id("session-mcp-choice").select_option(label=session_server)
        panel.get_by_test_id("session-mcp-add").click()
        session_row = panel.locator(f'[data-testid="session-mcp-server"][data-name="{session_server}"]')
        expect(session_row.get_by_test_id("session-mcp-origins")).to_have_text("from session")
        session_row.get_by_test_id("session-mcp-remove").click()
        expect(session_row).to_have_count(0)
        expect(task_row).to_be_visible()

        # Selected and deselected elsewhere (another tab; here the API): the open panel follows without a reload.
        elsewhere = {"mcpServerId": profile_id[session_server], "scope": "TASK", "targetId": task_id}
        kandev_server.mutate(SELECT, "selectMcpServer", i=elsewhere)
        expect(session_row.get_by_test_id("session-mcp-origins")).to_have_text("from task")
        kandev_server.mutate(DESELECT, "deselectMcpServer", i=elsewhere)
        expect(session_row).to_have_count(0)
    finally:
        kandev_server.gql(DESELECT, i=on_profile)


REGISTRY_ITEMS = [
    registry_item(
        "io.example/docs-search",
        description='<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> Searches docs.',
        remotes=[{"type": "streamable-http", "url": "https://docs-search.example.test/mcp"}],
    ),
    registry_item("io.example/retired", status="deprecated", remotes=[{"type": "sse", "url": "https://r.test/s"}]),
    registry_item(
        "io.example/pyonly",
        packages=[{"registryType": "pypi", "identifier": "py-mcp", "version": "1.0.0", "transport": {"type": "stdio"}}],
    ),
]


def test_registry_entries_are_plain_publisher_text_can_be_added_and_an_outage_shows_the_cache_as_stale(
    page: Any, web_client: Any
) -> None:
    from playwright.sync_api import expect

    fake = FakeMcpRegistry(servers=list(REGISTRY_ITEMS))
    with (
        threaded_fake_mcp_registry(fake),
        serve(
            "browser-mcp-registry-serve.log",
            KANDEV_MCP_REGISTRY_URL=fake.url,
            KANDEV_MCP_REGISTRY_MIN_REFRESH_SECONDS="0",
        ) as (base, _env),
    ):
        workspaces = httpx.post(f"{base}/graphql", json={"query": "{ workspaces { id } }"}, timeout=10).json()
        server = KandevServer(base=base, workspace_id=workspaces["data"]["workspaces"][0]["id"])
        open_app(page, server, "/settings/mcp")
        page.get_by_test_id("mcp-view-marketplace").click()
        registry = page.get_by_test_id("mcp-registry")
        expect(registry.get_by_test_id("mcp-registry-status")).to_have_attribute("data-status", "FRESH")
        expect(registry).to_contain_text("not a Kandev security review")
        docs = registry.locator('[data-testid="mcp-registry-entry"][data-key="io.example/docs-search@1.0.0"]')
        expect(docs.get_by_test_id("mcp-registry-description")).to_contain_text("<script>window.__pwned=2</script>")
        assert page.evaluate("() => window.__pwned") is None and page.locator("img[src=x]").count() == 0
        expect(registry.locator('[data-key="io.example/retired@1.0.0"]')).to_have_count(0)
        pyonly = registry.locator('[data-key="io.example/pyonly@1.0.0"]')
        expect(pyonly.get_by_test_id("not-installable")).to_contain_text("npm only")
        expect(pyonly.get_by_test_id("add-registry-entry")).to_have_count(0)

        docs.get_by_test_id("add-registry-entry").click()
        page.get_by_test_id("mcp-view-configured").click()
        expect(page.locator('[data-testid="mcp-server"][data-name="docs-search"]')).to_contain_text(
            "remote · https://docs-search.example.test/mcp"
        )

        fake.failing = True
        page.get_by_test_id("mcp-view-marketplace").click()
        registry.get_by_test_id("refresh-mcp-registry").click()
        status = registry.get_by_test_id("mcp-registry-status")
        expect(status).to_have_attribute("data-status", "STALE")
        expect(status).to_contain_text("answered HTTP 503")
        expect(docs).to_be_visible()

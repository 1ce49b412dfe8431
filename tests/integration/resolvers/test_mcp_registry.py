"""MCP Registry metadata in the marketplace, against a local fake registry with auth on: cached with when it was
fetched, stale when the registry is unreachable, deprecated and deleted entries hidden, only exact npm versions and
http(s) remotes installable, hostile text kept plain and bounded, and adding an entry makes a normal definition."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.models import McpServer
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for
from tests.support.fake_mcp_registry import FakeMcpRegistry, npm_package, registry_item
from tests.support.server import free_port

REGISTRY = """query($ws: ID!) { mcpRegistry(workspaceId: $ws) { status fetchedAt checkedAt error
  entries { key name title description version publisher status installable suggestedName
    options { index kind url package transport installable reason secrets } } } }"""
REFRESH = """mutation($ws: ID!) { refreshMcpRegistry(workspaceId: $ws) { status fetchedAt error entries { key } } }"""
ADD = """mutation($i: AddMcpRegistryEntryInput!) { addMcpRegistryEntry(input: $i) { __typename
  ... on McpServerPayload { mcpServer { id name kind url headers package env workspaceId serverWide } }
  ... on Error { code message fields } } }"""
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\x07" + "x" * 5000


def catalogue() -> list[dict[str, Any]]:
    remote = {"type": "streamable-http", "url": "https://docs.example.test/mcp"}
    remote["headers"] = [{"name": "X-Api-Key", "isSecret": True, "isRequired": True}]
    return [
        registry_item("io.example/docs", remotes=[remote]),
        registry_item("io.example/notes", packages=[npm_package("@example/notes-mcp", "1.2.3", ("NOTES_TOKEN",))]),
        registry_item("io.example/old", status="deprecated", remotes=[{"type": "sse", "url": "https://o.test/s"}]),
        registry_item("io.example/gone", status="deleted", remotes=[{"type": "sse", "url": "https://g.test/s"}]),
        registry_item("io.example/ranged", packages=[npm_package("ranged-mcp", "^1.0.0")]),
        registry_item(
            "io.example/python",
            packages=[
                {"registryType": "pypi", "identifier": "py-mcp", "version": "1.0.0", "transport": {"type": "stdio"}}
            ],
        ),
        registry_item("io.example/plainws", remotes=[{"type": "streamable-http", "url": "ws://w.test/mcp"}]),
        registry_item("io.example/hostile", description=HOSTILE, remotes=[{"type": "sse", "url": "https://h.test/s"}]),
    ]


@pytest.fixture
def registry_port() -> int:
    return free_port()


@pytest.fixture
def settings(database_url, redis_url, tmp_path, registry_port):
    return settings_for(
        database_url,
        redis_url,
        tmp_path,
        auth="on",
        mcp_registry_url=f"http://127.0.0.1:{registry_port}",
        mcp_registry_min_refresh_seconds=0,
    )


async def served(port: int, fake: FakeMcpRegistry) -> Any:
    fake.url = f"http://127.0.0.1:{port}"
    from tests.support.server import serving

    return serving(fake.app(), port)


async def test_registry_entries_are_fetched_across_pages_and_only_exact_npm_and_http_remotes_are_installable(
    gql: GraphQLCaller, workspace_id: str, registry_port: int
) -> None:
    fake = FakeMcpRegistry(servers=catalogue())
    async with await served(registry_port, fake):
        registry = (await gql(REGISTRY, ws=workspace_id))["mcpRegistry"]
    assert registry["status"] == "FRESH" and registry["fetchedAt"] and registry["error"] is None
    assert len(fake.requests) == 4  # 8 servers, 2 a page, followed by nextCursor
    entries = {e["name"]: e for e in registry["entries"]}
    assert "io.example/old" not in entries and "io.example/gone" not in entries
    assert {n for n, e in entries.items() if e["installable"]} == {
        "io.example/docs",
        "io.example/notes",
        "io.example/hostile",
    }
    docs, notes = entries["io.example/docs"]["options"][0], entries["io.example/notes"]["options"][0]
    assert (docs["kind"], docs["url"], docs["secrets"]) == ("REMOTE", "https://docs.example.test/mcp", ["X_API_KEY"])
    assert (notes["kind"], notes["package"], notes["secrets"]) == ("NPM", "@example/notes-mcp@1.2.3", ["NOTES_TOKEN"])
    assert entries["io.example/ranged"]["options"][0]["reason"] == "only an exact package version (x.y.z) can be added"
    assert entries["io.example/python"]["options"][0]["kind"] is None
    assert entries["io.example/plainws"]["options"][0]["installable"] is False
    hostile = entries["io.example/hostile"]["description"]
    assert hostile.startswith("<script>alert(1)</script>") and "\x07" not in hostile and len(hostile) <= 1000


async def test_an_unreachable_registry_shows_the_last_good_cache_as_stale(
    gql: GraphQLCaller, workspace_id: str, registry_port: int
) -> None:
    fake = FakeMcpRegistry(servers=catalogue()[:2])
    async with await served(registry_port, fake):
        first = (await gql(REFRESH, ws=workspace_id))["refreshMcpRegistry"]
        fake.failing = True
        failed = (await gql(REFRESH, ws=workspace_id))["refreshMcpRegistry"]
    assert first["status"] == "FRESH"
    assert failed["status"] == "STALE" and failed["fetchedAt"] == first["fetchedAt"]
    assert failed["error"] == "the MCP registry answered HTTP 503"
    assert [e["key"] for e in failed["entries"]] == [e["key"] for e in first["entries"]]
    gone = (await gql(REFRESH, ws=workspace_id))["refreshMcpRegistry"]  # nothing listens on the port any more
    assert gone["status"] == "STALE" and gone["error"] == "the MCP registry could not be reached"
    assert len(gone["entries"]) == 2


async def test_with_no_cache_an_unreachable_or_oversized_registry_is_unavailable(
    gql: GraphQLCaller, workspace_id: str, registry_port: int
) -> None:
    nothing = (await gql(REGISTRY, ws=workspace_id))["mcpRegistry"]
    assert (nothing["status"], nothing["entries"], nothing["fetchedAt"]) == ("UNAVAILABLE", [], None)
    fake = FakeMcpRegistry(raw_body=b'{"servers": [' + b'{"name": "x"},' * 300_000 + b"{}]}")
    async with await served(registry_port, fake):
        huge = (await gql(REFRESH, ws=workspace_id))["refreshMcpRegistry"]
    assert huge["status"] == "UNAVAILABLE" and huge["error"] == "the MCP registry's answer is too large"


async def test_the_registry_is_not_fetched_again_within_the_minimum_interval(
    services: Any, gql: GraphQLCaller, workspace_id: str, registry_port: int
) -> None:
    services.ctx.settings.mcp_registry_min_refresh_seconds = 3600
    fake = FakeMcpRegistry(servers=catalogue()[:1])
    async with await served(registry_port, fake):
        for _ in range(3):
            assert (await gql(REFRESH, ws=workspace_id))["refreshMcpRegistry"]["status"] == "FRESH"
    assert len(fake.requests) == 1


async def test_adding_registry_entries_makes_normal_definitions_and_npm_ones_stay_admin_only(
    services: Any, bob: Any, bob_workspace: str, workspace_id: str, registry_port: int
) -> None:
    bob_gql, admin_gql = GraphQLCaller(bob), GraphQLCaller(services)
    fake = FakeMcpRegistry(servers=catalogue())
    async with await served(registry_port, fake):
        await bob_gql(REGISTRY, ws=bob_workspace)
    remote = await bob_gql(ADD, i={"workspaceId": bob_workspace, "entryKey": "io.example/docs@1.0.0"})
    server = remote["addMcpRegistryEntry"]["mcpServer"]
    assert (server["name"], server["kind"], server["url"]) == ("docs", "REMOTE", "https://docs.example.test/mcp")
    assert server["headers"] == {"X-Api-Key": "${secret:X_API_KEY}"} and server["workspaceId"] == bob_workspace

    npm = {"workspaceId": bob_workspace, "entryKey": "io.example/notes@1.0.0"}
    refused = (await bob_gql(ADD, i=npm))["addMcpRegistryEntry"]
    assert refused["code"] == "PERMISSION_DENIED"
    for key in ("io.example/old@1.0.0", "io.example/gone@1.0.0"):
        hidden = (await bob_gql(ADD, i={"workspaceId": bob_workspace, "entryKey": key}))["addMcpRegistryEntry"]
        assert hidden["code"] == "NOT_FOUND"
    ranged = {"workspaceId": bob_workspace, "entryKey": "io.example/ranged@1.0.0"}
    assert (await bob_gql(ADD, i=ranged))["addMcpRegistryEntry"]["code"] == "VALIDATION"
    async with services.ctx.db.read() as db:
        assert [s.name for s in await db.scalars(select(McpServer))] == ["docs"]

    added = (await admin_gql(ADD, i={**npm, "workspaceId": workspace_id, "name": "notes"}))["addMcpRegistryEntry"][
        "mcpServer"
    ]
    assert (added["kind"], added["package"], added["serverWide"]) == ("NPM", "@example/notes-mcp@1.2.3", True)
    assert added["env"] == {"NOTES_TOKEN": "${secret:NOTES_TOKEN}"}


async def test_without_a_configured_registry_the_marketplace_says_so_and_fetches_nothing(
    database_url: str, redis_url: str, tmp_path: Any
) -> None:
    from kandev.platform.settings import Settings

    assert Settings(database_url=database_url, redis_url=redis_url).mcp_registry_url is None
    with pytest.raises(ValueError, match="without credentials"):
        Settings(mcp_registry_url="https://user:pw-4c7e@registry.example.test")

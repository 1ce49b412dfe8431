"""The agent catalogue as data, and installing an npm-based agent into the work dir through GraphQL: from a local
package source (no network), by the server, read-only to agents, never globally; a failed install is a typed error."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kandev.runtime import agent_catalogue
from kandev.runtime.agent_catalogue import CatalogueEntry
from tests.support.fake_mcp import FIXTURE_NAME, FIXTURE_VERSION, pack_fixture

QUERY = """{ agentCatalogue { id name command install { npmPackage version binaryUrl } envKeys docsUrl verified
  installed installedCommand } }"""
INSTALL = """mutation($id: String!) { installAgent(id: $id) { __typename
  ... on AgentInstallPayload { agent { id installed installedCommand } } ... on Error { message } } }"""


def test_the_catalogue_lists_at_least_twelve_agents_each_with_a_command_an_install_and_docs():
    items = agent_catalogue.catalogue()
    assert len(items) >= 12 and len({i.id for i in items}) == len(items)
    for item in items:
        assert item.command and item.docs_url.startswith("https://")
        assert bool(item.npm_package) != bool(item.binary_url), item.id  # one way to install, exactly
        assert (item.version is not None) == (item.npm_package is not None), item.id
        assert item.verified in ("e2e", "tarball", "metadata", "docs")
    by_id = {i.id: i for i in items}
    assert by_id["claude-code"].npm_package == "@zed-industries/claude-agent-acp"
    assert by_id["codex"].command == ("codex-acp",) and by_id["gemini"].command == ("gemini", "--experimental-acp")


async def test_the_catalogue_says_what_is_installed(gql):
    entries = {e["id"]: e for e in (await gql(QUERY))["agentCatalogue"]}
    assert entries["goose"]["install"] == {
        "npmPackage": None,
        "version": None,
        "binaryUrl": "https://github.com/block/goose/releases",
    }
    assert entries["claude-code"]["envKeys"] == ["ANTHROPIC_API_KEY"]
    assert all(e["installed"] == (e["installedCommand"] is not None) for e in entries.values())


@pytest.fixture
def fixture_agent(monkeypatch, tmp_path):
    """A catalogue holding one npm agent, the test fixture package, installable from a local package source."""
    item = CatalogueEntry(
        id="fixture",
        name="Fixture",
        command=("fixture-mcp", "--acp"),
        env_keys=(),
        docs_url="https://example.test",
        verified="tarball",
        npm_package=FIXTURE_NAME,
        version=FIXTURE_VERSION,
    )
    monkeypatch.setattr(agent_catalogue, "catalogue", lambda: (item,))
    return item


async def test_install_agent_installs_the_pinned_package_into_the_work_dir_read_only_to_agents(
    gql, services, fixture_agent, tmp_path, monkeypatch
):
    source = pack_fixture(tmp_path / "packages")
    monkeypatch.setattr(services.ctx.settings, "mcp_npm_source", str(source))
    before = (await gql(QUERY))["agentCatalogue"][0]
    assert before["installed"] is False
    done = (await gql(INSTALL, id="fixture"))["installAgent"]
    assert done["__typename"] == "AgentInstallPayload", done
    binary, flag = done["agent"]["installedCommand"]
    assert flag == "--acp" and Path(binary).name == "fixture-mcp"
    work = services.ctx.settings.work_path
    assert Path(binary).resolve().is_relative_to(work.resolve() / "agent-packages")
    cache = work / "agent-packages"
    assert stat.S_IMODE(cache.stat().st_mode) & 0o022 == 0 and cache.stat().st_uid == os.geteuid()
    assert (await gql(QUERY))["agentCatalogue"][0]["installed"] is True


async def test_a_failed_install_is_a_typed_error_and_nothing_is_installed(
    gql, services, fixture_agent, tmp_path, monkeypatch
):
    empty = tmp_path / "no-packages"
    empty.mkdir()
    monkeypatch.setattr(services.ctx.settings, "mcp_npm_source", str(empty))
    failed = (await gql(INSTALL, id="fixture"))["installAgent"]
    assert failed["__typename"] == "ValidationError" and FIXTURE_NAME in failed["message"]
    assert (await gql(QUERY))["agentCatalogue"][0]["installed"] is False
    unknown = (await gql(INSTALL, id="nope"))["installAgent"]
    assert unknown["__typename"] == "NotFoundError"

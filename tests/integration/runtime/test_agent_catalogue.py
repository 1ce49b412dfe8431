"""The agent catalogue as data, and installing an npm-based agent into the work dir: from a local package source (no
network), read-only to agents, never globally; through GraphQL as a worker's job whose progress the catalogue shows,
and a failed install says why."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from redis import Redis
from rq import Queue

from kandev.platform.job_queues import DEFAULT, agent_install_job_id
from kandev.runtime import agent_catalogue
from kandev.runtime.agent_catalogue import AgentInstallError, CatalogueEntry
from tests.conftest import GraphQLCaller
from tests.support.agent_packages import pack_stand_in
from tests.support.fake_mcp import FIXTURE_NAME, FIXTURE_VERSION, pack_fixture
from tests.support.users import services_as
from tests.support.workers import empty_queues, running_worker

JOB = "installJob { state update error enqueuedAt startedAt endedAt }"
QUERY = f"""{{ agentCatalogue {{ id name command install {{ npmPackage version binaryUrl }} envKeys docsUrl verified
  installed installedCommand {JOB} }} }}"""
INSTALL = f"""mutation($id: String!) {{ installAgent(id: $id) {{ __typename
  ... on AgentInstallPayload {{ agent {{ id installed installedCommand {JOB} }} }} ... on Error {{ message }} }} }}"""


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
def fixture_agent(monkeypatch):
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


def test_install_puts_the_pinned_package_into_the_work_dir_read_only_to_agents_and_tells_its_phases(
    fixture_agent, tmp_path, monkeypatch
):
    source, work = pack_fixture(tmp_path / "packages"), tmp_path / "work"
    asked: list[str] = []
    monkeypatch.setattr(
        agent_catalogue, "latest_version", lambda package, src: asked.append((package, src)) or FIXTURE_VERSION
    )
    phases: list[str] = []
    binary, flag = agent_catalogue.install(fixture_agent, work, str(source), on_phase=phases.append)
    assert flag == "--acp" and Path(binary).name == "fixture-mcp" and phases == ["INSTALLING"] and asked == []
    assert Path(binary).resolve().is_relative_to(work.resolve() / "agent-packages")
    cache = work / "agent-packages"
    assert stat.S_IMODE(cache.stat().st_mode) & 0o022 == 0 and cache.stat().st_uid == os.geteuid()
    assert agent_catalogue.installed_command(fixture_agent, work) == [binary, "--acp"]
    phases.clear()
    agent_catalogue.install(fixture_agent, work, str(source), update=True, on_phase=phases.append)
    assert phases == ["RESOLVING", "INSTALLING"] and asked == [(FIXTURE_NAME, str(source))]


def test_an_update_from_a_package_folder_takes_its_newest_tarball_without_asking_the_registry(tmp_path):
    folder = tmp_path / "packages"
    folder.mkdir()
    for version in ("1.2.3", "1.10.0", "1.10.0-beta.1", "1.9.9"):
        (folder / f"kandev-test-fixture-mcp-{version}.tgz").write_bytes(b"")
    for other in ("kandev-test-fixture-mcp-extra-9.9.9.tgz", "kandev-test-fixture-mcp-2-9.9.9.tgz"):
        (folder / other).write_bytes(b"")  # other packages whose names share the prefix
    assert agent_catalogue.latest_version(FIXTURE_NAME, str(folder)) == "1.10.0"
    with pytest.raises(AgentInstallError, match="@kandev-test/other is not in the configured package source"):
        agent_catalogue.latest_version("@kandev-test/other", str(folder))


def test_a_failed_install_names_the_package_and_installs_nothing(fixture_agent, tmp_path):
    empty, work = tmp_path / "no-packages", tmp_path / "work"
    empty.mkdir()
    with pytest.raises(AgentInstallError, match=FIXTURE_NAME):
        agent_catalogue.install(fixture_agent, work, str(empty))
    assert agent_catalogue.installed_command(fixture_agent, work) is None


async def catalogue_entry(gql, agent_id: str) -> dict:
    return next(e for e in (await gql(QUERY))["agentCatalogue"] if e["id"] == agent_id)


async def finished(gql, agent_id: str) -> dict:
    """The entry once its install job ended (bounded)."""
    async with asyncio.timeout(120):
        while (found := await catalogue_entry(gql, agent_id))["installJob"]["state"] not in ("DONE", "FAILED"):
            await asyncio.sleep(0.2)
    return found


@pytest.mark.slow
async def test_install_agent_answers_at_once_and_a_worker_installs_the_package_as_a_job(gql, settings, tmp_path):
    source = tmp_path / "packages"
    pack_stand_in(source, "codex")
    before = await catalogue_entry(gql, "codex")
    assert before["installed"] is False and before["installJob"] is None
    with running_worker(settings, KANDEV_MCP_NPM_SOURCE=str(source)):
        started = (await gql(INSTALL, id="codex"))["installAgent"]
        assert started["__typename"] == "AgentInstallPayload", started
        assert started["agent"]["installJob"]["state"] in ("QUEUED", "INSTALLING", "DONE")
        assert started["agent"]["installJob"]["update"] is False
        done = await finished(gql, "codex")
    job = done["installJob"]
    assert job["state"] == "DONE" and job["error"] is None, job
    assert job["enqueuedAt"] <= job["startedAt"] <= job["endedAt"]
    binary = Path(done["installedCommand"][0])
    assert done["installed"] is True and binary.name == "codex-acp"
    assert binary.resolve().is_relative_to(settings.work_path.resolve() / "agent-packages")


@pytest.mark.slow
async def test_a_failed_install_job_tells_why_and_nothing_is_installed(gql, settings, tmp_path):
    empty = tmp_path / "no-packages"
    empty.mkdir()
    with running_worker(settings, KANDEV_MCP_NPM_SOURCE=str(empty)):
        await gql(INSTALL, id="codex")
        failed = await finished(gql, "codex")
    assert failed["installJob"]["state"] == "FAILED" and failed["installed"] is False
    version = agent_catalogue.entry("codex").version  # type: ignore[union-attr]
    assert failed["installJob"]["error"] == (
        f"npm package @zed-industries/codex-acp@{version} is not in the configured package source"
    )


async def test_a_second_install_while_one_waits_joins_it(gql, settings):
    empty_queues(settings.redis_url)
    first = (await gql(INSTALL, id="gemini"))["installAgent"]
    second = (await gql(INSTALL, id="gemini"))["installAgent"]
    assert first["agent"]["installJob"]["state"] == second["agent"]["installJob"]["state"] == "QUEUED"
    connection = Redis.from_url(settings.redis_url)
    try:
        waiting = Queue(DEFAULT, connection=connection).get_job_ids()
    finally:
        connection.close()
    assert waiting.count(agent_install_job_id("gemini")) == 1
    empty_queues(settings.redis_url)


async def test_install_refuses_unknown_agents_binary_agents_and_people_who_are_not_admins(gql, services):
    unknown = (await gql(INSTALL, id="nope"))["installAgent"]
    assert unknown["__typename"] == "NotFoundError"
    binary = (await gql(INSTALL, id="goose"))["installAgent"]
    assert binary["__typename"] == "ValidationError" and "github.com/block/goose" in binary["message"]
    someone = await services_as(services, "someone")
    refused = (await GraphQLCaller(someone)(INSTALL, id="codex"))["installAgent"]
    assert refused["__typename"] == "PermissionDeniedError"

"""Workspace MCP servers reach a real scripted agent over ACP, beside `kandev`: each scope, all of them at once (a
duplicate delivered once with every origin), a desired revision applied when the turn is idle, secrets resolved at
launch and never in the transcript, and an npm package materialized from a locally packed tarball."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.errors import ConflictError, NotFoundError
from kandev.domain.mcp.rules import McpServerFields
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Message, Session
from kandev.models.enums import McpScope, McpServerKind, PermissionPolicy
from kandev.platform.settings import Settings
from kandev.runtime.mcp_delivery import package_folder
from tests.support.factories import new_agent_profile, settings_for
from tests.support.fake_mcp import FIXTURE_NAME, FIXTURE_PACKAGE, FIXTURE_VERSION, pack_fixture, remote_mcp
from tests.support.git_repos import make_repository
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

DOCS_TOKEN = "tok-9d41c7e2b5a3"
NPM_TOKEN = "tok-51e8a0f4c6d2"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


@pytest.fixture
def npm_source(tmp_path: Path) -> Path:
    return pack_fixture(tmp_path / "packages")


async def transcript(db: Any, session_id: str, kind: str | None = None) -> list[str]:
    async with db.read() as s:
        query = select(Message.text).where(Message.session_id == session_id).order_by(Message.seq)
        if kind is not None:
            query = query.where(Message.kind == kind)
        return list(await s.scalars(query))


async def everything(db: Any, session_id: str) -> str:
    """The session's whole transcript, texts and data, as one string."""
    async with db.read() as s:
        rows = await s.execute(select(Message.text, Message.data).where(Message.session_id == session_id))
        return " ".join(f"{text} {json.dumps(data)}" for text, data in rows.tuples())


async def reports(db: Any, session_id: str) -> list[dict[str, list[dict[str, str]]]]:
    """Every `/mcp-servers` answer of the session, oldest first: server name -> origins."""
    answers = [t for t in await transcript(db, session_id, "AGENT") if t.startswith('{"mcp_servers"')]
    return [{s["name"]: s["origins"] for s in json.loads(a)["mcp_servers"]} for a in answers]


async def remote(services: Any, workspace_id: str, name: str, url: str) -> Any:
    headers = {"Authorization": "Bearer ${secret:DOCS_TOKEN}"}
    return await services.mcp_servers.create(
        workspace_id, McpServerFields(name=name, kind=McpServerKind.REMOTE, url=url, headers=headers)
    )


async def project_task(services: Any, workspace_id: str, tmp_path: Path) -> tuple[str, str]:
    repo = make_repository(tmp_path / "project")
    repository = await services.repositories.create(workspace_id, "project", str(repo))
    created = await services.tasks.create(
        CreateTask(workspace_id=workspace_id, title="With MCP", repositories=[RepositoryChoice(repository.id)])
    )
    return created.task.id, repository.id


async def run(services: Any, bus: Any, db: Any, task_id: str, prompt: str, profile_id: str | None = None) -> str:
    """Start the task's agent with `prompt`, or send it to the existing session; the session id once it ended."""
    async with db.read() as s:
        existing = await s.scalar(select(Session.id).where(Session.task_id == task_id))
    if existing is None:
        started = await services.sessions.start_task(task_id, prompt, profile_id)
        session_id = started.session.id
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
        return session_id
    async with watching(bus, db, existing) as watch:
        ended = len(await watch.turns_ended(0))
        await services.sessions.send_message(task_id, prompt)
        await watch.turns_ended(ended + 1)
    return existing


@pytest.mark.parametrize("scope", [McpScope.PROFILE, McpScope.REPOSITORY, McpScope.TASK, McpScope.SESSION])
async def test_a_server_selected_at_one_scope_reaches_the_agent_with_that_origin(
    services, settings, bus, db, workspace_id, tmp_path, scope
):
    await services.secrets.create(workspace_id, "DOCS_TOKEN", DOCS_TOKEN)
    task_id, repository_id = await project_task(services, workspace_id, tmp_path)
    profile = await new_agent_profile(services, workspace_id, "Scripted with MCP")
    async with remote_mcp() as docs:
        server = await remote(services, workspace_id, "docs", docs.url)
        with running_worker(settings):
            if scope == McpScope.SESSION:  # a session exists once started; its selection applies on the next turn
                session_id = await run(services, bus, db, task_id, "/mcp-servers", profile.id)
                target = session_id
            else:
                target = {McpScope.PROFILE: profile.id, McpScope.REPOSITORY: repository_id, McpScope.TASK: task_id}[
                    scope
                ]
            await services.mcp_selections.select(server.id, scope, target)
            session_id = await run(services, bus, db, task_id, "/mcp-servers\n/tool docs/whoami {}", profile.id)
    latest = (await reports(db, session_id))[-1]
    assert latest == {"kandev": [], "docs": [{"scope": scope.value, "id": target}]}
    # The header's secret reached the remote server at launch, and the transcript shows it redacted.
    assert docs.authorizations == [f"Bearer {DOCS_TOKEN}"]
    texts = await everything(db, session_id)
    assert DOCS_TOKEN not in texts and "Bearer [REDACTED]" in texts


async def test_every_scope_at_once_delivers_a_duplicate_once_with_all_its_origins_and_a_narrower_scope_cannot_remove_it(
    services, settings, bus, db, workspace_id, tmp_path
):
    await services.secrets.create(workspace_id, "DOCS_TOKEN", DOCS_TOKEN)
    task_id, repository_id = await project_task(services, workspace_id, tmp_path)
    profile = await new_agent_profile(services, workspace_id, "Scripted with MCP")
    async with remote_mcp() as docs:
        server = await remote(services, workspace_id, "docs", docs.url)
        extra = await remote(services, workspace_id, "extra", docs.url)
        with running_worker(settings):
            session_id = await run(services, bus, db, task_id, "/say first", profile.id)
            chosen = [
                (McpScope.PROFILE, profile.id),
                (McpScope.REPOSITORY, repository_id),
                (McpScope.TASK, task_id),
                (McpScope.SESSION, session_id),
            ]
            for scope, target in chosen:
                await services.mcp_selections.select(server.id, scope, target)
            await services.mcp_selections.select(extra.id, McpScope.SESSION, session_id)
            await run(services, bus, db, task_id, "/mcp-servers")
            # The session's own selection goes; what it inherits stays, and removing that there is refused.
            await services.mcp_selections.deselect(server.id, McpScope.SESSION, session_id)
            with pytest.raises(ConflictError) as refused:
                await services.mcp_selections.deselect(server.id, McpScope.SESSION, session_id)
            assert refused.value.fields["inherited_from"] == "PROFILE"
            await services.mcp_selections.deselect(server.id, McpScope.PROFILE, profile.id)
            await services.mcp_selections.deselect(server.id, McpScope.REPOSITORY, repository_id)
            with pytest.raises(NotFoundError):  # a session's selection is nothing the wider task has
                await services.mcp_selections.deselect(extra.id, McpScope.TASK, task_id)
            await run(services, bus, db, task_id, "/mcp-servers")
    before, after = (await reports(db, session_id))[-2:]
    assert before == {
        "kandev": [],
        "docs": [{"scope": s.value, "id": t} for s, t in chosen],
        "extra": [{"scope": "SESSION", "id": session_id}],
    }
    assert after == {
        "kandev": [],
        "docs": [{"scope": "TASK", "id": task_id}],
        "extra": [{"scope": "SESSION", "id": session_id}],
    }


async def test_a_change_during_a_turn_waits_for_the_idle_session_and_the_next_turn_gets_it(
    services, settings, bus, db, workspace_id, tmp_path
):
    await services.secrets.create(workspace_id, "DOCS_TOKEN", DOCS_TOKEN)
    task_id, _ = await project_task(services, workspace_id, tmp_path)
    profile = await new_agent_profile(services, workspace_id, "Asking", permission_policy=PermissionPolicy.ASK)
    async with remote_mcp() as docs:
        server = await remote(services, workspace_id, "docs", docs.url)
        with running_worker(settings):
            started = await services.sessions.start_task(task_id, "/permission Hold on\n/mcp-servers", profile.id)
            session_id = started.session.id
            async with watching(bus, db, session_id) as watch:
                await watch.until(lambda: _pending(services, workspace_id))
                await services.mcp_selections.select(server.id, McpScope.TASK, task_id)
                during = await services.mcp_selections.for_session(session_id)
                [request] = await services.permissions.pending(workspace_id)
                await services.permissions.resolve(request.id, "allow")
                await watch.turns_ended(1)
            assert (await reports(db, session_id))[-1] == {"kandev": []}  # the running turn kept its list
            await run(services, bus, db, task_id, "/mcp-servers")
    assert (await reports(db, session_id))[-1] == {"kandev": [], "docs": [{"scope": "TASK", "id": task_id}]}
    assert during.desired_revision > during.applied_revision
    after = await services.mcp_selections.for_session(session_id)
    assert after.applied_revision == after.desired_revision == during.desired_revision
    assert [e["name"] for e in after.applied] == ["docs"]


async def _pending(services: Any, workspace_id: str) -> bool:
    return bool(await services.permissions.pending(workspace_id))


async def test_an_npm_server_is_materialized_from_a_packed_tarball_outside_the_repository_and_its_secret_stays_out(
    services, settings, bus, db, workspace_id, tmp_path, npm_source
):
    await services.secrets.create(workspace_id, "NPM_TOKEN", NPM_TOKEN)
    task_id, _ = await project_task(services, workspace_id, tmp_path)
    fields = McpServerFields(
        name="fixture",
        kind=McpServerKind.NPM,
        package=f"{FIXTURE_NAME}@{FIXTURE_VERSION}",
        env={"FIXTURE_TOKEN": "${secret:NPM_TOKEN}"},
    )
    server = await services.mcp_servers.create(workspace_id, fields)
    cache = settings.work_path / "mcp-packages"
    assert not cache.exists()  # saving downloads nothing
    await services.mcp_selections.select(server.id, McpScope.TASK, task_id)
    with running_worker(settings, KANDEV_MCP_NPM_SOURCE=str(npm_source)):
        session_id = await run(services, bus, db, task_id, '/mcp-servers\n/tool fixture/whoami {"q": 1}')
    assert (await reports(db, session_id))[-1] == {"kandev": [], "fixture": [{"scope": "TASK", "id": task_id}]}
    # One install of that version, kept under the integrity hash of what it was installed from.
    [install] = [p for p in package_folder(cache, FIXTURE_NAME, FIXTURE_VERSION).iterdir() if p.is_dir()]
    manifest = install / "node_modules" / FIXTURE_NAME / "package.json"
    assert json.loads(manifest.read_text())["version"] == FIXTURE_VERSION
    texts = await everything(db, session_id)
    assert 'args={\\"q\\":1}' in texts and "token=[REDACTED]" in texts, texts
    assert NPM_TOKEN not in texts
    async with db.read() as s:
        workdir = Path((await s.get(Session, session_id)).working_dir)
    assert not any("node_modules" in root for root, _, _ in os.walk(workdir))


async def test_a_revision_that_cannot_be_applied_keeps_the_previous_one_and_says_why(
    services, settings, bus, db, workspace_id, tmp_path
):
    task_id, _ = await project_task(services, workspace_id, tmp_path)
    await services.secrets.create(workspace_id, "DOCS_TOKEN", DOCS_TOKEN)
    async with remote_mcp() as docs:
        good = await remote(services, workspace_id, "docs", docs.url)
        broken = await services.mcp_servers.create(
            workspace_id,
            McpServerFields(
                name="broken", kind=McpServerKind.REMOTE, url=docs.url, headers={"X-Key": "${secret:NOT_DEFINED}"}
            ),
        )
        await services.mcp_selections.select(good.id, McpScope.TASK, task_id)
        with running_worker(settings):
            session_id = await run(services, bus, db, task_id, "/mcp-servers")
            applied = await services.mcp_selections.for_session(session_id)
            await services.mcp_selections.select(broken.id, McpScope.TASK, task_id)
            await run(services, bus, db, task_id, "/mcp-servers")
    assert (await reports(db, session_id))[-1] == {"kandev": [], "docs": [{"scope": "TASK", "id": task_id}]}
    state = await services.mcp_selections.for_session(session_id)
    assert state.applied_revision == applied.applied_revision < state.desired_revision
    notes = await transcript(db, session_id, "SYSTEM")
    assert any("could not be applied" in n and "NOT_DEFINED" in n for n in notes), notes


async def test_an_executable_server_is_delivered_as_a_stdio_server_with_its_args_and_env(
    services, settings, bus, db, workspace_id, tmp_path
):
    task_id, _ = await project_task(services, workspace_id, tmp_path)
    await services.secrets.create(workspace_id, "NPM_TOKEN", NPM_TOKEN)
    fields = McpServerFields(
        name="local",
        kind=McpServerKind.EXECUTABLE,
        command=str(FIXTURE_PACKAGE / "server.js"),
        env={"FIXTURE_TOKEN": "prefix-${secret:NPM_TOKEN}"},
    )
    server = await services.mcp_servers.create(None, fields)
    await services.mcp_selections.select(server.id, McpScope.TASK, task_id)
    with running_worker(settings):
        session_id = await run(services, bus, db, task_id, "/mcp-servers\n/tool local/whoami {}")
    assert (await reports(db, session_id))[-1] == {"kandev": [], "local": [{"scope": "TASK", "id": task_id}]}
    texts = await everything(db, session_id)
    assert "token=prefix-[REDACTED]" in texts and NPM_TOKEN not in texts

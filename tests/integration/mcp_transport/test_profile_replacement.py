"""A live profile replacement, with the real tool surface: exactly one list_changed, then the new list."""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from kandev.domain.sessions.tool_profiles import refresh_profile
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.sources import SourceRequest
from kandev.models import Session, Task
from tests.integration.mcp_transport.conftest import ERAS, LEGACY, Notifications, mcp_client
from tests.support import server as support_server
from tests.support.git_repos import make_repository
from tests.support.server import running_server
from tests.support.session_tokens import launch_token
from tests.support.waiting import wait_until


@asynccontextmanager
async def listening_session(era: str, settings, services, session_id: str, heard: Notifications):
    """The official client on /mcp/session, subscribed to list_changed in either era."""
    token = await launch_token(services.ctx, session_id)
    async with running_server(settings) as address:
        async with mcp_client(f"http://{address}/mcp/session", era, token, heard) as client:
            if era == LEGACY:
                app = support_server._last_app[-1]

                async def stream_open() -> bool:
                    return app.state.mcp_bridge.open_streams(session_id) == 1

                await wait_until(stream_open)
                yield client
            else:
                async with client.listen(tools_list_changed=True):
                    yield client


@pytest.mark.parametrize("era", ERAS)
async def test_replacing_a_sessions_profile_sends_one_list_changed_and_the_new_list(
    era, settings, services, workspace_id
):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Reconfigure me"))).task
    session_id = (await services.sessions.start_task(task.id, "hi", None)).session.id
    heard = Notifications()
    async with listening_session(era, settings, services, session_id, heard) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        async with services.ctx.unit_of_work() as uow:
            session = await uow.db.get(Session, session_id)
            row = await uow.db.get(Task, task.id)
            session.purpose = "configuration"
            assert await refresh_profile(uow, session, row)
        await heard.settle_at(1)
        after = {t.name for t in (await client.list_tools()).tools}
    assert "create_task_kandev" in before and "ask_user_question_kandev" in before
    assert "create_task_kandev" not in after and "ask_user_question_kandev" not in after
    assert heard.count == 1


@pytest.mark.parametrize("era", ERAS)
async def test_a_source_that_brings_a_provider_refreshes_the_idle_sessions_list_once(
    era, settings, services, workspace_id, tmp_path
):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Add a source"))).task
    session_id = (await services.sessions.start_task(task.id, "hi", None)).session.id
    async with services.ctx.unit_of_work() as uow:  # launched: its profile is live
        await refresh_profile(uow, await uow.db.get(Session, session_id), await uow.db.get(Task, task.id))
    hosted = make_repository(tmp_path / "hosted", remote="https://github.com/acme/hosted")
    heard = Notifications()
    async with listening_session(era, settings, services, session_id, heard) as client:
        await client.list_tools()
        await services.workspace_sources.add(task.id, [SourceRequest(type="repository", local_path=str(hosted))])
        await heard.settle_at(1)
        await client.list_tools()
    assert "github-pr" in (await services.sessions.mcp_profile(session_id)).to_json()["capabilities"]

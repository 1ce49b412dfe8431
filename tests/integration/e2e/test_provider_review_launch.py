"""A real launch gives a task's session the gitlab-mr tools from its repository on the workspace's
self-managed GitLab host, and the scripted agent reads and drafts its merge request over MCP in its turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.sources import SourceRequest
from kandev.models import Message
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.fake_gitlab import FakeGitLab, fake_gitlab
from tests.support.git_repos import make_repository
from tests.support.watch import watching

pytestmark = pytest.mark.slow

TOKEN = "glpat-launch-e2e-3c8d71"


@pytest.fixture
async def gitlab() -> AsyncIterator[FakeGitLab]:
    fake = FakeGitLab()
    fake.tokens = {TOKEN: "tanuki"}
    async with fake_gitlab(fake) as served:
        yield served


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path, gitlab) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5, gitlab_url=gitlab.url)


async def test_a_launched_agent_reads_and_drafts_its_tasks_merge_request(
    live, services, bus, db, workspace_id, gitlab, tmp_path
):
    await services.gitlab.connect(workspace_id, TOKEN)
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Polish", start_agent=False))).task
    folder = make_repository(tmp_path / "svc", remote=f"{gitlab.url}/team/svc.git")
    source = SourceRequest(type="repository", local_path=str(folder), branch="polish-it")
    await services.workspace_sources.add(task.id, [source])
    gitlab.add_mr("team/svc", 4, title="Polish it", source_branch="polish-it", pipeline_status="success")
    prompt = '/tool get_task_mr_automation_kandev {}\n/tool update_task_mr_automation_kandev {"draft": true}'
    delivery = await services.sessions.start_task(task.id, prompt, None)
    async with watching(bus, db, delivery.session.id) as watch:
        await watch.next_turn_end()
    async with db.read() as s:
        calls = list(
            await s.scalars(
                select(Message)
                .where(Message.session_id == delivery.session.id, Message.kind == "TOOL_CALL")
                .order_by(Message.seq)
            )
        )
    assert [c.data["status"] for c in calls] == ["completed", "completed"], [c.data for c in calls]
    read, drafted = (json.loads(c.data["output"]) for c in calls)
    assert (read["iid"], read["draft"], read["pipeline_status"]) == (4, False, "success")
    assert (drafted["draft"], drafted["title"]) == (True, "Draft: Polish it")
    assert gitlab.merge_requests["team/svc"][4].title == "Draft: Polish it"
    tools = await services.sessions.mcp_tools(delivery.session.id)
    assert "get_task_mr_automation_kandev" in tools and "get_task_pr_automation_kandev" not in tools
    assert TOKEN not in json.dumps([c.data for c in calls])

"""Agent-generated titles: the first session owns the handoff; humans win; branches follow the title."""

from __future__ import annotations

import subprocess

from kandev.domain.sessions.turn_setup import prepare_turn
from kandev.domain.sessions.turns import claim_turn
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from tests.integration.jobs.test_turn_environment import make_repository
from tests.support.users import as_agent


async def launched(services, task_id):
    """Start the task's session and prepare its first turn as a worker would (no agent needed)."""
    session = (await services.sessions.start_task(task_id, "work", None)).session
    claimed = await claim_turn(services.ctx, session.id, worker_name="t", job_id=None, lease_seconds=60)
    setup = await prepare_turn(services.ctx, claimed)
    return session, setup


async def test_the_first_session_owns_the_title_and_loses_the_tool_once_it_is_set(services, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="fix stuff"))).task
    session, setup = await launched(services, task.id)
    assert "set_task_title_kandev" in setup.context
    assert "set_task_title_kandev" in await services.sessions.mcp_tools(session.id)
    result = await as_agent(services, session.id, task.id).titles.set_title("Fix flaky login test")
    assert result.status == "accepted" and (await services.tasks.get(task.id)).title == "Fix flaky login test"
    assert "set_task_title_kandev" not in await services.sessions.mcp_tools(session.id)
    again = await as_agent(services, session.id, task.id).titles.set_title("Another")
    assert again.status == "title_not_pending"


async def test_a_later_session_is_not_the_owner_and_a_human_rename_wins(services, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="draft"))).task
    owner, _ = await launched(services, task.id)
    from kandev.domain.sessions.service import spawn_session

    spawned = await spawn_session(as_agent(services, owner.id, task.id).ctx, None, "helper", None, None)
    result = await as_agent(services, spawned.session.id, task.id).titles.set_title("Stolen title")
    assert result.status == "title_not_owner"
    await services.tasks.update(task.id, title="Named by a person")
    late = await as_agent(services, owner.id, task.id).titles.set_title("Too late")
    assert late.status == "title_not_pending"
    assert (await services.tasks.get(task.id)).title == "Named by a person"


async def test_a_human_rename_takes_the_title_tool_from_the_launched_owner_at_once(services, workspace_id):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="draft"))).task
    owner, _ = await launched(services, task.id)
    assert "set_task_title_kandev" in await services.sessions.mcp_tools(owner.id)
    revision = (await services.sessions.get(owner.id)).mcp_profile_revision
    await services.tasks.update(task.id, title="Named by a person")
    assert "set_task_title_kandev" not in await services.sessions.mcp_tools(owner.id)
    assert (await services.sessions.get(owner.id)).mcp_profile_revision == revision + 1


async def test_with_the_setting_off_no_session_gets_the_title_tool(services, db, workspace_id):
    from kandev.models import Workspace

    async with db.transaction() as s:
        workspace = await s.get(Workspace, workspace_id)
        workspace.settings = {**workspace.settings, "agent_generated_titles": False}
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Plain"))).task
    session, setup = await launched(services, task.id)
    assert "set_task_title_kandev" not in setup.context
    assert "set_task_title_kandev" not in await services.sessions.mcp_tools(session.id)


async def test_an_accepted_title_renames_the_kandev_managed_worktree_branch(services, workspace_id, tmp_path):
    repo = make_repository(tmp_path / "app")
    repository = await services.repositories.create(workspace_id, "app", str(repo))
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="tmp", repositories=[RepositoryChoice(repository.id)])
        )
    ).task
    session, setup = await launched(services, task.id)
    before = subprocess.run(
        ["git", "branch", "--show-current"], cwd=setup.cwd, capture_output=True, text=True
    ).stdout.strip()
    result = await as_agent(services, session.id, task.id).titles.set_title("Add dark mode")
    after = subprocess.run(
        ["git", "branch", "--show-current"], cwd=setup.cwd, capture_output=True, text=True
    ).stdout.strip()
    assert result.renamed == ["app"] and result.failed == []
    assert before.endswith("-tmp") and after == f"kandev/{task.id[:8]}-add-dark-mode"

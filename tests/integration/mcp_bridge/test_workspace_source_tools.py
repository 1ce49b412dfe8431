"""Workspace source tools over the tool surface: a parent adds sources to its child, an agent adds a
branch to its own task mid-turn, and moves its diff base."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import update

from kandev.domain.workspace.workdirs import prepare_workdir
from kandev.models import Session, Task
from tests.integration.mcp_bridge.conftest import agent_on, call_tool
from tests.support.factories import new_task
from tests.support.git_repos import git, make_repository


async def test_a_parent_adds_a_mixed_batch_to_its_idle_child_and_a_retry_changes_nothing(
    tool_surface, services, workspace_id, tmp_path
):
    parent_id = await new_task(services, workspace_id, "Parent")
    child_id = await new_task(services, workspace_id, "Child", parent_id=parent_id)
    stranger_id = await new_task(services, workspace_id, "Stranger")
    parent = await agent_on(services, parent_id)
    project = make_repository(tmp_path / "project")
    notes = tmp_path / "notes"
    notes.mkdir()
    sources = [{"type": "repository", "local_path": str(project)}, {"type": "folder", "path": str(notes)}]
    error, added = await call_tool(
        tool_surface, parent, "add_workspace_sources_kandev", task_id=child_id, sources=sources
    )
    assert not error, added
    assert added["changed"] is True and added["task"]["id"] == child_id
    assert [(s["type"], s["name"], s["added"]) for s in added["sources"]] == [
        ("repository", "project", True),
        ("folder", "notes", True),
    ]
    error, again = await call_tool(
        tool_surface, parent, "add_workspace_sources_kandev", task_id=child_id, sources=sources
    )
    assert not error and again["changed"] is False
    error, refused = await call_tool(
        tool_surface, parent, "add_workspace_sources_kandev", task_id=stranger_id, sources=sources
    )
    assert error and refused["code"] == "PERMISSION_DENIED"


async def test_source_arguments_are_checked_against_the_advertised_schema(tool_surface, services, workspace_id):
    task_id = await new_task(services, workspace_id, "T")
    me = await agent_on(services, task_id)
    for sources in ([], [{"type": "folder", "path": "/tmp", "colour": "red"}], [{"type": "submodule"}]):
        error, refused = await call_tool(tool_surface, me, "add_workspace_sources_kandev", sources=sources)
        assert error and refused["code"] == "INVALID_ARGUMENTS", refused
    error, refused = await call_tool(
        tool_surface, me, "add_workspace_sources_kandev", sources=[{"type": "repository", "local_path": "relative"}]
    )
    assert error and refused["code"] == "VALIDATION" and "absolute" in refused["error"]


async def test_an_agent_adds_a_branch_to_its_own_task_mid_turn_and_keeps_its_directory(
    tool_surface, services, db, workspace_id, tmp_path
):
    first = await services.repositories.create(workspace_id, "first", str(make_repository(tmp_path / "first")))
    second = make_repository(tmp_path / "second", branches=("topic",))
    task_id = await new_task(services, workspace_id, "T")
    me = await agent_on(services, task_id)
    error, deferred = await call_tool(tool_surface, me, "add_branch_to_task_kandev", repository_id=first.id)
    assert not error and deferred["agent_cwd_changed"] is False
    assert "worktree_path" not in deferred and "task_workspace_path" not in deferred
    async with services.ctx.unit_of_work() as uow:  # the task launches: its worktrees are created
        task = await uow.db.get(Task, task_id)
        workdir = await prepare_workdir(uow.db, services.ctx.settings.work_path, task, None)
        await uow.db.execute(update(Session).where(Session.id == me.session_id).values(state="RUNNING"))
    error, added = await call_tool(
        tool_surface, me, "add_branch_to_task_kandev", local_path=str(second), branch="topic"
    )
    assert not error, added
    assert added["worktree_path"] == str(workdir.parent / "second")
    assert added["task_workspace_path"] == str(workdir.parent) and added["agent_cwd_changed"] is False
    assert git(Path(added["worktree_path"]), "branch", "--show-current") == "topic"
    error, busy = await call_tool(
        tool_surface, me, "add_workspace_sources_kandev", sources=[{"type": "repository", "local_path": str(second)}]
    )
    assert error and busy["code"] == "CONFLICT" and "add_branch_to_task_kandev" in busy["error"]
    error, moved = await call_tool(
        tool_surface,
        me,
        "update_repository_base_branch_kandev",
        repository_id=added["repository"]["id"],
        base_branch="topic",
    )
    assert not error and moved["previous_base_branch"] == "main" and moved["base_branch"] == "topic"

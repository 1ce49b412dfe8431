"""Where a new task's agents run: a person's choice is kept, a subtask without one takes its parent's, and an
agent's tasks run where the agent runs, so an agent in a box can't start work outside it (an explicit other choice
is refused and changes nothing)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from kandev.domain.errors import ValidationError
from kandev.domain.tasks.service import CreateTask
from kandev.models import Task
from kandev.models.enums import ExecutorKind, TaskOrigin
from tests.support.factories import new_task
from tests.support.users import as_agent


async def boxed(services, workspace_id: str) -> str:
    return str((await services.executor_profiles.create(workspace_id, "Sandbox", ExecutorKind.SANDBOX, {})).id)


async def executor_of(db, task_id: str) -> str | None:
    async with db.read() as s:
        return (await s.get(Task, task_id)).executor_profile_id


async def test_a_persons_subtask_without_a_choice_runs_where_its_parent_does_and_a_choice_is_kept(
    services, db, workspace_id
):
    sandbox = await boxed(services, workspace_id)
    worktree = str((await services.executor_profiles.list(workspace_id))[0].id)
    parent = await new_task(services, workspace_id, "Parent", executor_profile_id=sandbox)
    inheriting = await new_task(services, workspace_id, "Sub", parent_id=parent)
    chosen = await new_task(services, workspace_id, "Sub elsewhere", parent_id=parent, executor_profile_id=worktree)
    assert await executor_of(db, inheriting) == sandbox
    assert await executor_of(db, chosen) == worktree


async def test_an_agents_tasks_run_where_the_agent_runs_and_it_cannot_choose_another_executor(
    services, db, workspace_id
):
    sandbox = await boxed(services, workspace_id)
    worktree = str((await services.executor_profiles.list(workspace_id))[0].id)
    own = await new_task(services, workspace_id, "Boxed agent's task", executor_profile_id=sandbox)
    agent = as_agent(services, "s1", own, workspace_id)

    top = await new_task(agent, workspace_id, "Made by the agent", origin=TaskOrigin.AGENT)
    sub = await new_task(agent, workspace_id, "Its subtask", parent_id=own, origin=TaskOrigin.AGENT)
    same = await new_task(agent, workspace_id, "Named its own", executor_profile_id=sandbox, origin=TaskOrigin.AGENT)
    assert [await executor_of(db, t) for t in (top, sub, same)] == [sandbox, sandbox, sandbox]

    async with db.read() as s:
        before = await s.scalar(select(func.count()).select_from(Task))
    with pytest.raises(ValidationError) as refused:
        await agent.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Out of the box", executor_profile_id=worktree)
        )
    assert refused.value.field == "executorProfileId" and "where the agent runs" in refused.value.message
    async with db.read() as s:
        assert await s.scalar(select(func.count()).select_from(Task)) == before

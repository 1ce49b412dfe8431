"""When fixing failing checks stops: after the task's maximum number of rounds, and once a person wrote to the task's
agent after the last round; a stopped task records no further round for a new failing head commit."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from kandev.domain.code_requests import RequestCheck
from kandev.domain.shipping.fix_rounds import decide_round, stopped_reason
from kandev.models import CheckFixRound, Task, TaskRepository, TaskShipRequest
from tests.support.git_repos import make_repository
from tests.support.shipping import shippable_task

FAILING = [RequestCheck(id="1", name="tests", status="completed", conclusion="failure")]


async def fixing_task(services: Any, workspace_id: str, tmp_path: Any, max_rounds: int) -> tuple[str, str]:
    """A task with fixing failing checks on (at most `max_rounds` rounds): (task id, repository id)."""
    task_id, _ = await shippable_task(services, workspace_id, make_repository(tmp_path / "app"))
    async with services.ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        task.fix_checks_enabled, task.fix_checks_max_rounds = True, max_rounds
        repository_id = await uow.db.scalar(
            select(TaskRepository.repository_id).where(TaskRepository.task_id == task_id)
        )
    return task_id, repository_id


async def failed(services: Any, task_id: str, repository_id: str, head_sha: str) -> tuple[str | None, str | None]:
    """A failing check on `head_sha` seen by a refresh: (the round recorded or None, why rounds stop now)."""
    row = TaskShipRequest(task_id=task_id, repository_id=repository_id, head_sha=head_sha)
    async with services.ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        round_id = await decide_round(uow, task, row, FAILING)
    async with services.ctx.read() as db:
        return round_id, await stopped_reason(db, await db.get(Task, task_id))


async def rounds(services: Any, task_id: str) -> list[tuple[int, str]]:
    async with services.ctx.read() as db:
        found = await db.scalars(select(CheckFixRound).where(CheckFixRound.task_id == task_id))
        return sorted((r.round, r.head_sha) for r in found)


async def test_rounds_stop_once_the_tasks_maximum_was_made(services, workspace_id, tmp_path):
    task_id, repository_id = await fixing_task(services, workspace_id, tmp_path, max_rounds=2)
    first, why = await failed(services, task_id, repository_id, "a" * 40)
    assert first is not None and why is None
    again, _ = await failed(services, task_id, repository_id, "a" * 40)
    assert again is None  # one round per head commit
    second, why = await failed(services, task_id, repository_id, "b" * 40)
    assert second is not None and why == "rounds_out"
    third, why = await failed(services, task_id, repository_id, "c" * 40)
    assert (third, why) == (None, "rounds_out")
    assert await rounds(services, task_id) == [(1, "a" * 40), (2, "b" * 40)]


async def test_rounds_stop_once_a_person_writes_to_the_agent_after_the_last_round(services, workspace_id, tmp_path):
    task_id, repository_id = await fixing_task(services, workspace_id, tmp_path, max_rounds=3)
    await services.sessions.start_task(task_id, "Make the greeting friendlier", None)  # before any round
    first, why = await failed(services, task_id, repository_id, "a" * 40)
    assert first is not None and why is None
    await services.sessions.send_message(task_id, "Leave the checks to me, please")
    second, why = await failed(services, task_id, repository_id, "b" * 40)
    assert (second, why) == (None, "person_intervened")
    assert await rounds(services, task_id) == [(1, "a" * 40)]

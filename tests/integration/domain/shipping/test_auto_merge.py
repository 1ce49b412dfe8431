"""Auto-merge when green and approved: a refresh that finds the task's pull request open, not a draft, its checks
passed, approved and mergeable queues one merge job, and a real worker merges it (method MERGE), moving the task to
its final step; refreshed twice, it is merged once; a request still waiting on its review, or a task without the
setting, is left as it was (no job is queued)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from redis import Redis
from rq import Queue
from sqlalchemy import select

from kandev.models import TaskRepository
from kandev.platform.job_queues import AUTO_MERGE_JOB, DEFAULT
from tests.support.shipping import REPO, open_pr, pull_requests, pushed_task
from tests.support.workers import empty_queues, running_worker

SET_AUTO_MERGE = """mutation($id: ID!, $on: Boolean!) { updateTask(input: { taskId: $id, autoMerge: $on }) {
  __typename ... on Error { code message } } }"""


async def set_auto_merge(gql: Any, task_id: str, on: bool) -> None:
    done = (await gql(SET_AUTO_MERGE, id=task_id, on=on))["updateTask"]
    assert done["__typename"] != "Error" and "code" not in done, done


async def repository_of(services: Any, task_id: str) -> str:
    async with services.ctx.read() as db:
        found = await db.scalar(select(TaskRepository.repository_id).where(TaskRepository.task_id == task_id))
    assert found is not None
    return found


def queued_merges(redis_url: str) -> list[tuple[Any, ...]]:
    connection = Redis.from_url(redis_url)
    try:
        jobs = Queue(DEFAULT, connection=connection).get_jobs()
        return [tuple(job.args) for job in jobs if job.func_name == AUTO_MERGE_JOB]
    finally:
        connection.close()


def green(github: Any, number: int, head: str, *, approved: bool) -> None:
    github.add_check(REPO, head, "tests", "success")
    github.update_pr(REPO, number, reviews=[("hubot", "APPROVED")] if approved else [], mergeable=True)


async def test_a_green_approved_pull_request_is_merged_once_by_a_worker_and_the_task_moves_to_done(
    services, gql, workspace_id, tmp_path: Path, github, git_server, settings
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    number = (await open_pr(gql, ship.task_id))["pullRequest"]["number"]
    await set_auto_merge(gql, ship.task_id, True)
    green(github, number, ship.head, approved=True)
    repository_id = await repository_of(services, ship.task_id)
    with running_worker(settings, KANDEV_GITHUB_API_URL=github.url, GIT_SSL_CAINFO=git_server.ca_file):
        await services.ship.refresh(ship.task_id, repository_id)
        await services.ship.refresh(ship.task_id, repository_id)  # a second look before the worker merged
        async with asyncio.timeout(60):
            while (task := await pull_requests(gql, ship.task_id))["state"] != "COMPLETED":
                await asyncio.sleep(0.1)
    assert github.merges == [{"merge_method": "merge", "sha": ship.head}]
    assert task["workflowStep"]["isFinalStep"] is True
    assert task["pullRequests"][0]["state"] == "merged"


async def test_a_request_waiting_on_its_review_or_a_task_without_the_setting_queues_no_merge(
    services, gql, workspace_id, tmp_path: Path, github, git_server, settings
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    number = (await open_pr(gql, ship.task_id))["pullRequest"]["number"]
    repository_id = await repository_of(services, ship.task_id)
    assert settings.redis_url
    empty_queues(settings.redis_url)
    green(github, number, ship.head, approved=False)
    await set_auto_merge(gql, ship.task_id, True)
    await services.ship.refresh(ship.task_id, repository_id)
    assert queued_merges(settings.redis_url) == [], "not approved yet"
    await set_auto_merge(gql, ship.task_id, False)
    green(github, number, ship.head, approved=True)
    await services.ship.refresh(ship.task_id, repository_id)
    assert queued_merges(settings.redis_url) == [], "the task does not ask for it"
    await set_auto_merge(gql, ship.task_id, True)
    await services.ship.refresh(ship.task_id, repository_id)
    assert queued_merges(settings.redis_url) == [(ship.task_id, repository_id)]
    assert github.merges == []
    assert (await pull_requests(gql, ship.task_id))["state"] != "COMPLETED"

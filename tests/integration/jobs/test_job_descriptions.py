"""What the RQ dashboard lists for a turn job: its session and task ids and the task's title, redacted and
without markup; a failed turn stays in the Failed registry under that description."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from rq.job import Job
from rq.registry import FailedJobRegistry

from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.sessions.job_labels import TITLE_CHARS, job_title
from kandev.domain.tasks.service import CreateTask
from kandev.platform.database import Database
from kandev.platform.job_queues import TURN_JOB, TURNS, get_queue
from kandev.platform.log_redaction import remember_secrets
from kandev.platform.redis_client import sync_redis
from kandev.runtime.base import REDACTED
from tests.support.watch import watching
from tests.support.workers import running_worker

SECRET = "tok-job-description-8c1e"


def test_a_title_is_redacted_freed_of_markup_and_bounded():
    remember_secrets([SECRET])
    assert (
        job_title(f"Rotate {SECRET} <b>now</b> & 'then'\n\t\"done\"") == f"Rotate {REDACTED} ‹b›now‹/b› + ’then’ ”done”"
    )
    long = job_title("x" * 500)
    assert len(long) == TITLE_CHARS and long.endswith("…")


@pytest.mark.slow
async def test_a_failed_turn_is_in_the_failed_registry_described_by_its_ids_and_redacted_title(
    services, settings, bus, db, workspace_id
):
    # Created through the service, as a person would: this process now keeps the value out of its output.
    await services.secrets.create(workspace_id, "DEPLOY_TOKEN", SECRET)
    title = f"Deploy with {SECRET} <img src=x onerror=alert(1)>"
    task_id = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title=title))).task.id
    with running_worker(settings):
        started = await services.sessions.start_task(task_id, "/fail the model is overloaded", None)
        session_id = started.session.id
        async with watching(bus, db, session_id) as watch:
            turn = await watch.next_turn_end(timeout=60)
        connection = sync_redis(settings.redis_url or "")
        registry = FailedJobRegistry(TURNS, connection=connection)
        async with asyncio.timeout(15):
            while (turn.job_id or "") not in registry.get_job_ids():
                await asyncio.sleep(0.1)
    job = Job.fetch(turn.job_id or "", connection=connection)
    assert job.description == (
        f"turn session={session_id} task={task_id} «Deploy with {REDACTED} ‹img src=x onerror=alert(1)›»"
    )
    assert SECRET not in (job.description or "") and "<" not in (job.description or "")


async def test_a_description_that_cannot_be_read_never_keeps_a_turn_from_being_enqueued(redis_url, bus, tmp_path):
    unreadable = Database(f"sqlite+aiosqlite:///{tmp_path / 'no-such-dir' / 'kandev.db'}", pooled=False)
    dispatcher = RqDispatcher(redis_url, bus, turn_timeout=60, db=unreadable)
    queue = get_queue(f"kandev-test-describe-{uuid.uuid4().hex}", sync_redis(redis_url))
    try:
        await dispatcher.enqueue_turn("session-1", queue.name)
        [job] = queue.jobs
        assert job.args == ("session-1",) and job.func_name == TURN_JOB
    finally:
        queue.delete(delete_jobs=True)
        dispatcher.close()
        await unreadable.dispose()

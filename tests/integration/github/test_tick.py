"""The `github_tick` scheduler hook: one poll job per connected workspace per poll interval (however often
the scheduler ticks), and the due pending firings delivered on every tick; the poll job fires what it
finds."""

from __future__ import annotations

from datetime import timedelta

from rq import Queue
from sqlalchemy import select

from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.github.pull_requests import poll_pull_requests
from kandev.domain.github.webhooks import forget_old_deliveries
from kandev.jobs import scheduler
from kandev.jobs.github_triggers import POLL_JOB, _poll, github_tick, poll_key
from kandev.models import AutomationRun, GithubWebhookDelivery
from kandev.models.base import utcnow
from kandev.models.enums import TriggerType
from kandev.platform.job_queues import DEFAULT
from kandev.platform.redis_client import sync_redis
from tests.integration.github.test_poller import connect


async def pr_automation(services, workspace_id):
    trigger = TriggerFields(type=TriggerType.GITHUB_PR, config={"repositories": ["acme/widgets"]})
    saved = await services.automations.create(
        workspace_id,
        AutomationFields(name="PRs", prompt="review {{pr.url}}", triggers=[trigger], max_concurrent_runs=5),
    )
    return saved.automation.id


async def run_count(db, automation_id):
    async with db.read() as session:
        return len(
            list(await session.scalars(select(AutomationRun).where(AutomationRun.automation_id == automation_id)))
        )


def poll_jobs(redis_url):
    connection = sync_redis(redis_url)
    try:
        return [job.args for job in Queue(DEFAULT, connection=connection).jobs if job.func_name == POLL_JOB]
    finally:
        connection.close()


async def test_the_hook_is_registered_and_enqueues_one_poll_per_workspace_per_interval(
    services, db, settings, redis_url, workspace_id, github
):
    assert github_tick in scheduler.tick_hooks
    connection = sync_redis(redis_url)
    connection.delete(poll_key(workspace_id))
    assert (await github_tick(settings)) == {"delivered": 0, "enqueued": 0}  # not connected: nothing to poll
    await connect(services, workspace_id)
    assert (await github_tick(settings))["enqueued"] == 1
    assert (await github_tick(settings))["enqueued"] == 0  # the interval has not passed
    assert poll_jobs(redis_url) == [(workspace_id,)]
    assert 0 < connection.ttl(poll_key(workspace_id)) <= settings.github_poll_seconds
    connection.close()


async def test_the_poll_job_fires_and_the_hook_delivers_what_a_crashed_poll_left(
    services, db, settings, workspace_id, github
):
    await connect(services, workspace_id)
    automation = await pr_automation(services, workspace_id)
    github.add_pr("acme/widgets", 1)
    assert await _poll(services.ctx, workspace_id) == 1
    assert await run_count(db, automation) == 1
    github.add_pr("acme/widgets", 2)
    await poll_pull_requests(services.ctx, workspace_id)  # recorded; the poller died before firing
    assert await run_count(db, automation) == 1
    assert (await github_tick(settings))["delivered"] == 1
    assert await run_count(db, automation) == 2


async def test_old_webhook_delivery_ids_are_forgotten(services, db):
    async with db.transaction() as session:
        session.add(GithubWebhookDelivery(delivery_id="old", event="push", created_at=utcnow() - timedelta(days=15)))
        session.add(GithubWebhookDelivery(delivery_id="new", event="push"))
    assert await forget_old_deliveries(services.ctx) == 1
    async with db.read() as session:
        assert [d.delivery_id for d in await session.scalars(select(GithubWebhookDelivery))] == ["new"]

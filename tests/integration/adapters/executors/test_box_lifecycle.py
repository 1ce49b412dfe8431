"""A box lives as long as its session's agent: kill -9 of the worker running it (the agent mid-turn) leaves a
container behind, and a new worker's sweep removes it within 30 s of its start; only this installation's boxes
are touched."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from kandev.adapters.executors.docker import DockerExecutor
from kandev.domain.ports import BoxRequest
from kandev.domain.workspace.executor_config import BoxConfig
from kandev.models.enums import ExecutorKind
from tests.support.boxes import TEST_IMAGE, containers, needs
from tests.support.factories import started_task
from tests.support.waiting import wait_until
from tests.support.watch import watching
from tests.support.workers import running_scheduler, running_worker

pytestmark = pytest.mark.slow


async def test_the_containers_of_a_killed_worker_are_gone_within_30_seconds_of_a_new_workers_start(
    live, services, bus, db, workspace_id, box_profile, capability
):
    needs("docker")
    executor = await box_profile(ExecutorKind.DOCKER)
    started = await started_task(services, workspace_id, "/sleep 300", executor_profile_id=executor)
    label = {"kandev.session": started.session_id}

    async def running() -> bool:
        return any(box.running for box in await containers(**label))

    await wait_until(running, timeout=60, interval=0.2)
    os.kill(live.worker_pid, signal.SIGKILL)
    await asyncio.sleep(1.0)
    # Its worker is gone, its container is not (running, or stopped once its agent saw its stdin close).
    assert await containers(**label), "the container went with its worker"
    env = {"KANDEV_WORKER_CAPABILITIES": f"docker,{capability}", "KANDEV_AGENT_UIDS": live.settings.agent_uids or ""}
    # Recovery reaps the killed worker's turn (the scheduler's, as in production).
    with running_worker(live.settings, **env), running_scheduler(live.settings):
        began = time.monotonic()

        async def gone() -> bool:
            return not await containers(**label)

        await wait_until(gone, timeout=30, interval=0.5)
        assert time.monotonic() - began < 30
        # The reaped turn tells the transcript; the session goes on with its next prompt.
        async with watching(bus, db, started.session_id) as watch:
            turn = await watch.next_turn_end(timeout=30)
        assert turn.state == "FAILED"


async def test_another_installations_boxes_are_left_alone(live, services, workspace_id, box_profile):
    needs("docker")
    foreign = {"kandev.managed": "1", "kandev.instance": "someone-else", "kandev.session": "s", "kandev.worker": "w"}
    request = BoxRequest(
        session_id="s",
        task_id="t",
        kind="docker",
        argv=["sleep", "60"],
        env={},
        workdir=str(live.settings.data_path),
        config=BoxConfig(image=TEST_IMAGE, user="65534"),
        labels=foreign,
    )
    box = await DockerExecutor().launch(request)
    try:
        await asyncio.sleep(7)  # longer than a sweep's period
        assert [b.box_id for b in await containers(**{"kandev.instance": "someone-else"})] == [box.box_id]
    finally:
        await box.kill_group()
    assert not await containers(**{"kandev.instance": "someone-else"})

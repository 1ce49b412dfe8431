"""Placement by capability: a turn whose executor profile needs capabilities no live worker offers waits, shown as
the task's pendingAction WAITING_FOR_WORKER naming what is missing, and runs once a worker offering them starts;
a plain worker never takes it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from kandev.models import Turn
from kandev.models.enums import ExecutorKind
from tests.support.boxes import needs, own_capability
from tests.support.factories import started_task
from tests.support.waiting import wait_until
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

PROFILES = "query($w: ID!) { executorProfiles(workspaceId: $w) { id unavailableReason } }"
PLACEMENT = "query($id: ID!) { task(id: $id) { pendingAction placement { executor worker boxId waitingFor } } }"


async def test_a_task_needing_a_capability_waits_for_a_worker_with_it_and_runs_when_one_starts(
    services, gql, bus, db, workspace_id, settings
):
    needs("sandbox")
    capability = own_capability()
    profile = await services.executor_profiles.create(
        workspace_id, "Sandbox", ExecutorKind.SANDBOX, {"capabilities": [capability]}
    )
    assert sorted(profile.config["capabilities"]) == sorted(["sandbox", capability])
    with running_worker(settings, KANDEV_WORKER_CAPABILITIES=""):  # a plain worker: it can't run the turn
        started = await started_task(services, workspace_id, "/say boxed at last", executor_profile_id=profile.id)

        async def waiting() -> bool:
            task = (await gql(PLACEMENT, id=started.task_id))["task"]
            return task["pendingAction"] == "WAITING_FOR_WORKER"

        await wait_until(waiting, timeout=15, interval=0.1)
        task = (await gql(PLACEMENT, id=started.task_id))["task"]
        assert task["placement"]["waitingFor"] == sorted(["sandbox", capability])
        described = (await gql(PROFILES, w=workspace_id))["executorProfiles"]
        [reason] = [p["unavailableReason"] for p in described if p["id"] == profile.id]
        assert reason == f"no live worker offers {', '.join(sorted(['sandbox', capability]))}"
        async with db.read() as s:  # the plain worker never took the turn
            assert await s.scalar(select(Turn.id).where(Turn.session_id == started.session_id)) is None
        with running_worker(settings, KANDEV_WORKER_CAPABILITIES=f"sandbox,{capability}") as capable:
            async with watching(bus, db, started.session_id) as watch:
                turn = await watch.next_turn_end(timeout=60)
            assert turn.state == "COMPLETED", turn.error
            task = (await gql(PLACEMENT, id=started.task_id))["task"]
            assert task["pendingAction"] == "NONE" and task["placement"]["waitingFor"] == []
            assert task["placement"]["executor"] == "sandbox" and task["placement"]["boxId"].startswith("sandbox:")
            assert capable.pid and task["placement"]["worker"]

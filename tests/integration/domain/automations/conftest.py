"""Automations made through their service, and a way to run their jobs the way a worker runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.models import AutomationRun
from kandev.models.enums import TriggerType
from kandev.platform.settings import Settings
from tests.support.factories import settings_for


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


async def new_automation(services: Any, workspace_id: str, **fields: Any) -> str:
    fields.setdefault("name", "Nightly")
    fields.setdefault("prompt", "/say ran for {{trigger.type}}")
    saved = await services.automations.create(workspace_id, AutomationFields(**fields))
    return str(saved.automation.id)


def scheduled() -> list[TriggerFields]:
    return [TriggerFields(type=TriggerType.SCHEDULED, config={"expression": "0 9 * * *", "timezone": "UTC"})]


async def runs_of(db: Any, automation_id: str) -> list[AutomationRun]:
    async with db.read() as session:
        rows = await session.scalars(
            select(AutomationRun).where(AutomationRun.automation_id == automation_id).order_by(AutomationRun.created_at)
        )
        return list(rows)


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """What every RqDispatcher of this process enqueues for task cleanups and worktree retention (recorded
    here: no worker runs in these tests, the jobs are run by calling their domain functions)."""
    from kandev.adapters.rq_dispatch import RqDispatcher

    seen: dict[str, list[str]] = {"cleanups": [], "retention": []}
    for method, key in (("enqueue_task_cleanup", "cleanups"), ("enqueue_worktree_retention", "retention")):
        real = getattr(RqDispatcher, method)

        async def recording(self: RqDispatcher, value: str, real: Any = real, key: str = key) -> None:
            await real(self, value)
            seen[key].append(value)

        monkeypatch.setattr(RqDispatcher, method, recording)
    return seen


async def launched_run(services: Any, automation_id: str, **data: Any) -> AutomationRun:
    """A manual firing, launched (its task and first prompt), as the launch job would."""
    from kandev.domain.automations.firing import fire
    from kandev.domain.automations.launch import launch_run

    outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual", data=data)
    assert outcome.run_id is not None
    await launch_run(services.ctx, outcome.run_id)
    async with services.ctx.read() as session:
        run = await session.get(AutomationRun, outcome.run_id)
    assert run is not None and run.task_id is not None and run.session_id is not None
    return run


async def start_turn(services: Any, session_id: str) -> tuple[str, Path]:
    """Claim the session's next prompt and prepare its turn as a worker does; (turn id, working directory)."""
    from kandev.domain.sessions.turn_setup import prepare_turn
    from kandev.domain.sessions.turns import claim_turn

    claimed = await claim_turn(services.ctx, session_id, worker_name="test", job_id=None, lease_seconds=60)
    assert claimed is not None
    setup = await prepare_turn(services.ctx, claimed)
    return claimed.turn_id, Path(setup.cwd)


async def take_turn(services: Any, session_id: str) -> Path:
    """One whole turn (claimed, prepared, ended): its run settles; returns the working directory."""
    from kandev.domain.sessions.turns import finish_turn

    turn_id, workdir = await start_turn(services, session_id)
    await finish_turn(services.ctx, turn_id, stop_reason="end_turn")
    return workdir

"""The `profile_tick` scheduler hook: it re-checks agent profiles on its first tick and then once per
KANDEV_PROFILE_RECHECK_SECONDS, however often the scheduler ticks; with a real scheduler and worker, a
command installed outside Kandev turns its automation's FAILED ack into OK."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from kandev.domain.automations import thread
from kandev.domain.automations.records import AutomationFields
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.jobs import profile_checks, scheduler
from kandev.jobs.profile_checks import profile_tick
from kandev.models import Automation
from kandev.models.enums import AgentKind
from tests.integration.domain.automations.conftest import scheduled
from tests.support.waiting import wait_until
from tests.support.workers import running_scheduler, running_worker


def test_the_hook_is_registered_on_the_scheduler():
    assert profile_tick in scheduler.tick_hooks


async def test_the_hook_rechecks_on_its_first_tick_and_then_only_once_the_interval_has_passed(
    settings, services, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(profile_checks, "_last", [-math.inf])
    hourly = settings.model_copy(update={"profile_recheck_seconds": 3600.0})
    assert await profile_tick(hourly) == 0
    assert await profile_tick(hourly) is None

    often = settings.model_copy(update={"profile_recheck_seconds": 1e-9})
    assert await profile_tick(often) == 0


@pytest.mark.slow
async def test_a_command_installed_outside_kandev_re_acks_its_automation_through_the_scheduler_and_a_worker(
    services, db, settings, workspace_id, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    fields = AgentProfileFields(name="Later", kind=AgentKind.ACP, command=["kandev-reack-later"])
    profile_id = (await services.agent_profiles.create(workspace_id, fields)).id
    with running_worker(settings), running_scheduler(settings, KANDEV_PROFILE_RECHECK_SECONDS="0.5"):
        automation_id = (
            await services.automations.create(
                workspace_id,
                AutomationFields(name="Nightly", prompt="p", agent_profile_id=profile_id, triggers=scheduled()),
            )
        ).automation.id
        await wait_until(lambda: acked(db, automation_id, "FAILED"), timeout=30, interval=0.1)
        command = folder / "kandev-reack-later"
        command.write_text("#!/bin/sh\nexit 0\n")
        command.chmod(0o755)
        await wait_until(lambda: acked(db, automation_id, "OK"), timeout=30, interval=0.1)
    async with db.read() as session:
        texts = [e.text for e in (await thread.page(session, automation_id, 100, None)).entries]
    assert (
        "Agent profile 'Later' became available again: command 'kandev-reack-later' is on PATH. "
        "The pre-flight check runs again."
    ) in texts


async def acked(db: Any, automation_id: str, status: str) -> bool:
    async with db.read() as session:
        row = await session.get(Automation, automation_id)
        return row is not None and row.last_ack is not None and row.last_ack["status"] == status

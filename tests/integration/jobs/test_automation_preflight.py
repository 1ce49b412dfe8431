"""The pre-flight job on a real worker: a saved automation's ack goes from PENDING to the stored result."""

from __future__ import annotations

import pytest

from kandev.domain.automations.records import AutomationFields
from kandev.models import Automation
from kandev.models.enums import AgentKind
from tests.integration.domain.automations.conftest import scheduled
from tests.support.waiting import wait_until
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow


async def test_a_worker_stores_the_ack_of_a_saved_automation_within_seconds(services, db, settings, workspace_id):
    profiles = await services.agent_profiles.list(workspace_id)
    scripted = next(p.id for p in profiles if p.kind == AgentKind.SCRIPTED)
    with running_worker(settings):
        saved = await services.automations.create(
            workspace_id,
            AutomationFields(name="Nightly", prompt="Tidy up", agent_profile_id=scripted, triggers=scheduled()),
        )
        assert saved.automation.last_ack is not None and saved.automation.last_ack["status"] == "PENDING"

        async def acked() -> bool:
            async with db.read() as session:
                row = await session.get(Automation, saved.automation.id)
                return row is not None and row.last_ack is not None and row.last_ack["status"] != "PENDING"

        await wait_until(acked, timeout=30, interval=0.1)
    async with db.read() as session:
        row = await session.get(Automation, saved.automation.id)
    assert row is not None and row.last_ack is not None
    assert row.last_ack["status"] == "OK" and row.last_ack["routed_profile_id"] == scripted

"""Automations made through their service, and a way to run their jobs the way a worker runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.config import Settings
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.models import AutomationRun
from kandev.models.enums import TriggerType
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

"""AutomationService called directly, as jobs and the CLI call it: values the GraphQL enums can't carry are
refused on their field too, and a delete is soft."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.automations.records import AutomationFields
from kandev.domain.errors import ValidationError
from kandev.models import Automation


@pytest.mark.parametrize("field", ["destination", "context"])
async def test_an_unknown_destination_or_context_is_refused_on_its_field(services, workspace_id, field):
    odd: Any = "elsewhere"
    with pytest.raises(ValidationError) as refused:
        await services.automations.create(workspace_id, AutomationFields(name="N", prompt="p", **{field: odd}))
    assert refused.value.field == field


async def test_a_deleted_automation_keeps_its_row_with_the_time_it_was_deleted(services, db, workspace_id):
    saved = await services.automations.create(workspace_id, AutomationFields(name="N", prompt="p"))
    deleted = await services.automations.delete(saved.automation.id)

    assert deleted.deleted_at is not None
    async with db.read() as session:
        row = await session.scalar(select(Automation).where(Automation.id == saved.automation.id))
    assert row is not None and row.deleted_at == deleted.deleted_at
    assert await services.automations.list(workspace_id) == []

"""Usage totals and budgets: thin adapters over the usage service."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.usage_types import (
    AutomationBudgetPayload,
    Budget,
    SetAutomationBudgetInput,
    SetAutomationBudgetResult,
    UsageGroupBy,
    UsageTotals,
)


async def usage(
    info: Info,
    workspace_id: strawberry.ID,
    from_: Annotated[datetime, strawberry.argument(name="from", description="Turns that began at or after this.")],
    to: Annotated[datetime, strawberry.argument(description="Turns that began before this (at most 366 days on).")],
    group_by: UsageGroupBy = UsageGroupBy.DAY,
) -> list[UsageTotals]:
    totals = await info.context.services.usage.totals(str(workspace_id), from_, to, group_by)
    return [UsageTotals.of(t) for t in totals]


async def set_automation_budget(info: Info, input: SetAutomationBudgetInput) -> SetAutomationBudgetResult:
    service = info.context.services.usage
    automation_id = str(input.automation_id)

    async def save() -> Budget | None:
        await service.set_automation_budget(automation_id, input.limit_tokens, input.limit_usd)
        return Budget.of(await service.automation_budget(automation_id))

    return await attempt(save(), lambda b: AutomationBudgetPayload(automation_id=input.automation_id, budget=b))

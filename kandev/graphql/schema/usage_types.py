"""GraphQL types of usage and cost: a turn's usage, totals, budgets."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.usage.budgets import BudgetView
from kandev.domain.usage.service import UsageGroup as UsageGroupModel
from kandev.domain.usage.service import UsageTotals as UsageTotalsRecord
from kandev.graphql.schema.errors import ExpectedError
from kandev.models import TurnUsage as TurnUsageRow

strawberry.enum(
    UsageGroupModel,
    name="UsageGroupBy",
    description="What usage totals are grouped by (DAY: the UTC day a turn began, as YYYY-MM-DD).",
)
UsageGroupBy = UsageGroupModel


@strawberry.type(description="What one turn used, as its agent reported it (figures it did not report are 0 or null).")
class TurnUsage:
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None = strawberry.field(description="This turn's cost in US dollars, when the agent told it.")
    model: str | None
    context_used: int | None = strawberry.field(description="Tokens in the agent's context window at the end.")
    context_size: int | None = strawberry.field(description="The size of the agent's context window.")
    clamped: bool = strawberry.field(description="A reported figure was out of range and was clamped.")
    clamp_note: str | None

    @classmethod
    def of(cls, row: TurnUsageRow) -> TurnUsage:
        return cls(
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            cache_read_tokens=row.cache_read_tokens,
            cache_write_tokens=row.cache_write_tokens,
            cost_usd=row.cost_usd,
            model=row.model,
            context_used=row.context_used,
            context_size=row.context_size,
            clamped=row.clamped,
            clamp_note=row.clamp_note,
        )


@strawberry.type(description="Usage added up over turns: one group of a `usage` query, or one task's.")
class UsageTotals:
    key: str | None = strawberry.field(
        description="The group: a session, task, automation or workspace id, an agent profile's or model's name, "
        "or a day; null for turns without one (e.g. no automation)."
    )
    turns: int
    completed_turns: int
    failed_turns: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float

    @classmethod
    def of(cls, record: UsageTotalsRecord) -> UsageTotals:
        return cls(
            key=record.key,
            turns=record.turns,
            completed_turns=record.completed,
            failed_turns=record.failed,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            cache_read_tokens=record.cache_read_tokens,
            cache_write_tokens=record.cache_write_tokens,
            cost_usd=record.cost_usd,
        )


@strawberry.type(description="What was spent against a budget in its period: input plus output tokens, and cost.")
class BudgetSpend:
    tokens: int
    cost_usd: float


@strawberry.type(description="A spending limit: a task's over its life (TOTAL), an automation's per UTC month (MONTH).")
class Budget:
    period: str
    limit_tokens: int | None
    limit_usd: float | None
    spent: BudgetSpend
    reached: bool = strawberry.field(
        description="Spent: the task's agent gets nothing more, the automation does not fire."
    )

    @classmethod
    def of(cls, view: BudgetView | None) -> Budget | None:
        if view is None:
            return None
        return cls(
            period=view.period,
            limit_tokens=view.limit_tokens,
            limit_usd=view.limit_usd,
            spent=BudgetSpend(tokens=view.spent.tokens, cost_usd=view.spent.cost_usd),
            reached=view.reached,
        )


@strawberry.input(description="A budget's limits; leave both null to remove the budget.")
class BudgetInput:
    limit_tokens: int | None = strawberry.field(default=None, description="Input plus output tokens.")
    limit_usd: float | None = strawberry.field(default=None, description="US dollars, as agents report cost.")


@strawberry.input(description="An automation's monthly budget; both limits null remove it.")
class SetAutomationBudgetInput:
    automation_id: strawberry.ID
    limit_tokens: int | None = strawberry.field(default=None, description="Input plus output tokens per UTC month.")
    limit_usd: float | None = strawberry.field(default=None, description="US dollars per UTC month.")


@strawberry.type
class AutomationBudgetPayload:
    automation_id: strawberry.ID
    budget: Budget | None = strawberry.field(description="Null: the automation has no budget now.")


SetAutomationBudgetResult: TypeAlias = Annotated[
    AutomationBudgetPayload | ExpectedError, strawberry.union("SetAutomationBudgetResult")
]

"""Budgets: a task's over its whole life, an automation's per calendar month (UTC). Spend counts input and output
tokens (cache reads are cheap re-reads of the same context) and the cost agents report."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.errors import ValidationError
from kandev.domain.usage.figures import MAX_COST_USD
from kandev.models import Budget, TurnUsage

TASK, AUTOMATION = "task", "automation"
TOTAL, MONTH = "TOTAL", "MONTH"
MAX_LIMIT_TOKENS = 10**12


@dataclass(frozen=True)
class Spend:
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class BudgetView:
    """A budget with what was spent against it in its current period."""

    period: str
    limit_tokens: int | None
    limit_usd: float | None
    spent: Spend

    @property
    def reached(self) -> bool:
        return (self.limit_tokens is not None and self.spent.tokens >= self.limit_tokens) or (
            self.limit_usd is not None and self.spent.cost_usd >= self.limit_usd
        )


def month_start(now: datetime) -> datetime:
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def check_limits(limit_tokens: int | None, limit_usd: float | None) -> None:
    """A typed error for a limit that is negative or beyond any believable spend."""
    if limit_tokens is not None and not 0 <= limit_tokens <= MAX_LIMIT_TOKENS:
        raise ValidationError(f"limitTokens must be between 0 and {MAX_LIMIT_TOKENS}", field="limitTokens")
    if limit_usd is not None and not 0 <= limit_usd <= MAX_COST_USD * 1000:
        raise ValidationError(f"limitUsd must be between 0 and {MAX_COST_USD * 1000:g}", field="limitUsd")


async def spent(db: AsyncSession, kind: str, subject_id: str, since: datetime | None = None) -> Spend:
    """Input plus output tokens and cost of a task's turns, or of an automation's since `since`."""
    column = TurnUsage.task_id if kind == TASK else TurnUsage.automation_id
    query = select(
        func.coalesce(func.sum(TurnUsage.input_tokens + TurnUsage.output_tokens), 0),
        func.coalesce(func.sum(TurnUsage.cost_usd), 0.0),
    ).where(column == subject_id)
    if since is not None:
        query = query.where(TurnUsage.recorded_at >= since)
    tokens, cost = (await db.execute(query)).one()
    return Spend(int(tokens or 0), round(float(cost or 0.0), 6))


async def budget_row(db: AsyncSession, kind: str, subject_id: str) -> Budget | None:
    return await db.scalar(select(Budget).where(Budget.subject_kind == kind, Budget.subject_id == subject_id))


async def view(db: AsyncSession, kind: str, subject_id: str, now: datetime) -> BudgetView | None:
    """The subject's budget and its spend this period; None when it has none."""
    row = await budget_row(db, kind, subject_id)
    if row is None:
        return None
    since = month_start(now) if row.period == MONTH else None
    return BudgetView(row.period, row.limit_tokens, row.limit_usd, await spent(db, kind, subject_id, since))


async def save(
    db: AsyncSession,
    workspace_id: str,
    kind: str,
    subject_id: str,
    limit_tokens: int | None,
    limit_usd: float | None,
) -> Budget | None:
    """Set (or, with neither limit, remove) a subject's budget; the stored row, or None when removed."""
    check_limits(limit_tokens, limit_usd)
    row = await budget_row(db, kind, subject_id)
    if limit_tokens is None and limit_usd is None:
        if row is not None:
            await db.delete(row)
        return None
    if row is None:
        row = Budget(workspace_id=workspace_id, subject_kind=kind, subject_id=subject_id, revision=0)
        row.period = MONTH if kind == AUTOMATION else TOTAL
        db.add(row)
    row.limit_tokens, row.limit_usd = limit_tokens, limit_usd
    row.revision = (row.revision or 0) + 1
    row.reached_at = None
    await db.flush()
    return row


async def automation_refusal(db: AsyncSession, automation_id: str, now: datetime) -> str | None:
    """Why the automation must not fire now (its monthly budget is spent), or None."""
    current = await view(db, AUTOMATION, automation_id, now)
    if current is None or not current.reached:
        return None
    limits = [f"{current.limit_tokens} tokens"] if current.limit_tokens is not None else []
    limits += [f"${current.limit_usd:g}"] if current.limit_usd is not None else []
    spent_text = f"{current.spent.tokens} tokens, ${current.spent.cost_usd:g}"
    return (
        f"its monthly budget ({' or '.join(limits)}) is spent ({spent_text} this month); it fires again next "
        "month or once the budget is raised"
    )

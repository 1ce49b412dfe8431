"""The usage aggregate's front door: turns' usage, totals grouped by session, task, automation, agent, model,
workspace or day, and the budgets of tasks and automations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any

from sqlalchemy import String, case, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.scope import load_task, load_workspace
from kandev.domain.automations.preflight import mark_pending
from kandev.domain.automations.references import load_automation
from kandev.domain.context import ServiceContext
from kandev.domain.errors import PermissionDeniedError, ValidationError
from kandev.domain.usage import budgets
from kandev.domain.usage.budgets import BudgetView
from kandev.domain.usage.recording import mark_if_spent
from kandev.domain.workflow.transitions import emit_task_event
from kandev.models import QueuedPrompt, Session, Turn, TurnUsage
from kandev.models.base import utcnow
from kandev.models.enums import PromptState, TurnState

MAX_RANGE = timedelta(days=366)


class UsageGroup(StrEnum):
    SESSION = "SESSION"
    TASK = "TASK"
    AUTOMATION = "AUTOMATION"
    AGENT = "AGENT"
    MODEL = "MODEL"
    WORKSPACE = "WORKSPACE"
    DAY = "DAY"


@dataclass(frozen=True)
class UsageTotals:
    """Sums over a group of turns; `key` names the group (an id, an agent or model name, or a YYYY-MM-DD day)."""

    key: str | None
    turns: int
    completed: int
    failed: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float

    @classmethod
    def none(cls, key: str | None) -> UsageTotals:
        """The totals of a group with no turns (a task just created, for one)."""
        return cls(key, 0, 0, 0, 0, 0, 0, 0, 0.0)


def _day(sqlite: bool) -> Any:
    """The UTC calendar day of a turn's usage, as text, on either database."""
    if not sqlite:
        return func.to_char(func.timezone("UTC", TurnUsage.recorded_at), "YYYY-MM-DD")
    return func.substr(cast(TurnUsage.recorded_at, String), 1, 10)


def _key(group: UsageGroup, sqlite: bool) -> Any:
    return {
        UsageGroup.SESSION: TurnUsage.session_id,
        UsageGroup.TASK: TurnUsage.task_id,
        UsageGroup.AUTOMATION: TurnUsage.automation_id,
        UsageGroup.AGENT: TurnUsage.agent_name,
        UsageGroup.MODEL: TurnUsage.model,
        UsageGroup.WORKSPACE: TurnUsage.workspace_id,
        UsageGroup.DAY: _day(sqlite),
    }[group]


class UsageService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    def _refuse_agents(self) -> None:
        if self.ctx.principal.session_id is not None:
            raise PermissionDeniedError("an agent can't change budgets: a person sets them")

    async def of_turns(self, turn_ids: Sequence[str]) -> list[TurnUsage | None]:
        """Each turn's usage row (None: its agent reported nothing yet); for turns the caller already holds."""
        async with self.ctx.read() as db:
            rows = {r.turn_id: r for r in await db.scalars(select(TurnUsage).where(TurnUsage.turn_id.in_(turn_ids)))}
        return [rows.get(i) for i in turn_ids]

    async def of_tasks(self, task_ids: Sequence[str]) -> list[UsageTotals]:
        """Each task's totals over all its sessions and turns; for tasks the caller already holds."""
        async with self.ctx.read() as db:
            found = {t.key: t for t in await _totals(db, TurnUsage.task_id, TurnUsage.task_id.in_(task_ids))}
        return [found.get(i) or UsageTotals.none(i) for i in task_ids]

    async def totals(
        self, workspace_id: str, start: datetime, end: datetime, group_by: UsageGroup
    ) -> list[UsageTotals]:
        """Totals of the workspace's turns that began in [start, end), one per group, largest cost first."""
        if end <= start or end - start > MAX_RANGE:
            raise ValidationError("`to` must be after `from`, at most 366 days later", field="to")
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            where = [
                TurnUsage.workspace_id == workspace_id,
                TurnUsage.recorded_at >= start,
                TurnUsage.recorded_at < end,
            ]
            rows = await _totals(db, _key(group_by, self.ctx.db.is_sqlite), *where)
        if group_by == UsageGroup.DAY:
            return sorted(rows, key=lambda r: r.key or "")
        return sorted(rows, key=lambda r: (-r.cost_usd, -(r.input_tokens + r.output_tokens), r.key or ""))

    async def task_budget(self, task_id: str) -> BudgetView | None:
        async with self.ctx.read() as db:
            return await budgets.view(db, budgets.TASK, task_id, utcnow())

    async def automation_budget(self, automation_id: str) -> BudgetView | None:
        async with self.ctx.read() as db:
            return await budgets.view(db, budgets.AUTOMATION, automation_id, utcnow())

    async def set_task_budget(self, task_id: str, limit_tokens: int | None, limit_usd: float | None) -> None:
        """Set, raise or remove a task's budget; a budget no longer spent lets its held prompts go to the agent."""
        self._refuse_agents()
        async with self.ctx.unit_of_work() as uow:
            task = await load_task(uow.db, self.ctx.principal, task_id)
            await budgets.save(uow.db, task.workspace_id, budgets.TASK, task_id, limit_tokens, limit_usd)
            if not await mark_if_spent(uow, task_id):
                for session_id in await _sessions_with_queued_prompts(uow.db, task_id):
                    uow.then(partial(self.ctx.jobs.enqueue_turn, session_id))
                emit_task_event(uow, "UPDATED", task)

    async def set_automation_budget(
        self, automation_id: str, limit_tokens: int | None, limit_usd: float | None
    ) -> None:
        """Set, raise or remove an automation's monthly budget."""
        self._refuse_agents()
        async with self.ctx.unit_of_work() as uow:
            automation = await load_automation(uow.db, self.ctx.principal, automation_id)
            await budgets.save(
                uow.db, automation.workspace_id, budgets.AUTOMATION, automation_id, limit_tokens, limit_usd
            )
            mark_pending(uow, self.ctx, automation)  # its pre-flight says whether it fires again


async def _sessions_with_queued_prompts(db: AsyncSession, task_id: str) -> list[str]:
    rows = await db.scalars(
        select(Session.id)
        .join(QueuedPrompt, QueuedPrompt.session_id == Session.id)
        .where(Session.task_id == task_id, QueuedPrompt.state == PromptState.QUEUED)
        .distinct()
    )
    return list(rows)


async def _totals(db: AsyncSession, key: Any, *where: Any) -> list[UsageTotals]:
    """One row per `key` of turn_usage joined to its turn (for the outcome counts)."""
    completed = func.sum(case((Turn.state == TurnState.COMPLETED, 1), else_=0))
    failed = func.sum(case((Turn.state == TurnState.FAILED, 1), else_=0))
    query = (
        select(
            key.label("key"),
            func.count(),
            completed,
            failed,
            func.sum(TurnUsage.input_tokens),
            func.sum(TurnUsage.output_tokens),
            func.sum(TurnUsage.cache_read_tokens),
            func.sum(TurnUsage.cache_write_tokens),
            func.coalesce(func.sum(TurnUsage.cost_usd), 0.0),
        )
        .join(Turn, Turn.id == TurnUsage.turn_id)
        .where(*where)
        .group_by(key)
    )
    return [
        UsageTotals(
            None if k is None else str(k),
            int(n),
            int(ok or 0),
            int(bad or 0),
            int(i or 0),
            int(o or 0),
            int(cr or 0),
            int(cw or 0),
            round(float(cost or 0), 6),
        )
        for k, n, ok, bad, i, o, cr, cw, cost in (await db.execute(query)).all()
    ]

"""Batch reads behind the API's DataLoaders: one statement per batch, whatever its size; and the transcript
page of a session the API already holds.

Callers have already authorized the parent objects whose ids they pass in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import BindParameter, CompoundSelect, String, bindparam, cast, func, literal, select, union_all

from kandev.domain.automations.runs import active_sql
from kandev.domain.context import ServiceContext
from kandev.domain.records import TaskRecord
from kandev.domain.sessions.service import MessagePage, read_messages
from kandev.domain.shipping.requests import RequestRecord
from kandev.domain.tasks.activity import TaskActivity, read_activity
from kandev.models import (
    AutomationRun,
    Budget,
    Clarification,
    ParentQuestion,
    PermissionRequest,
    QueuedPrompt,
    Session,
    Task,
    TaskDependency,
    TaskShipRequest,
    Turn,
    WorkflowStep,
)
from kandev.models.enums import TERMINAL_SESSION_STATES, PendingAction, PromptState, TurnState


class Lookups:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    async def steps_by_workflow(self, workflow_ids: Sequence[str]) -> list[list[WorkflowStep]]:
        async with self.ctx.read() as db:
            rows = await db.scalars(
                select(WorkflowStep).where(WorkflowStep.workflow_id.in_(workflow_ids)).order_by(WorkflowStep.position)
            )
            grouped: dict[str, list[WorkflowStep]] = defaultdict(list)
            for step in rows:
                grouped[step.workflow_id].append(step)
        return [grouped[i] for i in workflow_ids]

    async def steps_by_id(self, step_ids: Sequence[str]) -> list[WorkflowStep | None]:
        async with self.ctx.read() as db:
            rows = await db.scalars(select(WorkflowStep).where(WorkflowStep.id.in_(step_ids)))
            by_id = {s.id: s for s in rows}
        return [by_id.get(i) for i in step_ids]

    async def sessions_by_task(self, task_ids: Sequence[str]) -> list[list[Session]]:
        """Each task's sessions, primary first, then oldest first."""
        async with self.ctx.read() as db:
            rows = await db.scalars(
                select(Session)
                .where(Session.task_id.in_(task_ids))
                .order_by(Session.is_primary.desc(), Session.created_at, Session.id)
            )
            grouped: dict[str, list[Session]] = defaultdict(list)
            for row in rows:
                grouped[row.task_id].append(row)
        return [grouped[i] for i in task_ids]

    async def turns_by_session(self, session_ids: Sequence[str]) -> list[list[Turn]]:
        async with self.ctx.read() as db:
            rows = await db.scalars(select(Turn).where(Turn.session_id.in_(session_ids)).order_by(Turn.seq))
            grouped: dict[str, list[Turn]] = defaultdict(list)
            for turn in rows:
                grouped[turn.session_id].append(turn)
        return [grouped[i] for i in session_ids]

    async def queued_prompts_by_session(self, session_ids: Sequence[str]) -> list[list[QueuedPrompt]]:
        """Each session's prompts still waiting, in delivery order."""
        async with self.ctx.read() as db:
            rows = await db.scalars(
                select(QueuedPrompt)
                .where(QueuedPrompt.session_id.in_(session_ids), QueuedPrompt.state == PromptState.QUEUED)
                .order_by(QueuedPrompt.seq)
            )
            grouped: dict[str, list[QueuedPrompt]] = defaultdict(list)
            for prompt in rows:
                grouped[prompt.session_id].append(prompt)
        return [grouped[i] for i in session_ids]

    async def messages(self, session_id: str, **page: Any) -> MessagePage:
        """A transcript page of a session the caller already holds (see read_messages for the arguments)."""
        return await read_messages(self.ctx, session_id, **page)

    async def blockers_by_task(self, task_ids: Sequence[str]) -> list[list[TaskRecord]]:
        """Each task's live predecessors, in the order they were linked."""
        return await self._linked(task_ids, TaskDependency.task_id, TaskDependency.blocked_by_id)

    async def dependents_by_task(self, task_ids: Sequence[str]) -> list[list[TaskRecord]]:
        """The live tasks waiting on each task, in the order they were linked."""
        return await self._linked(task_ids, TaskDependency.blocked_by_id, TaskDependency.task_id)

    async def _linked(self, task_ids: Sequence[str], near: Any, far: Any) -> list[list[TaskRecord]]:
        async with self.ctx.read() as db:
            rows = await db.execute(
                select(near, Task)
                .join(Task, Task.id == far)
                .where(near.in_(task_ids), Task.deleted_at.is_(None))
                .order_by(TaskDependency.created_at, Task.id)
            )
            grouped: dict[str, list[TaskRecord]] = defaultdict(list)
            for key, task in rows.tuples():
                grouped[key].append(TaskRecord.of(task))
        return [grouped[i] for i in task_ids]

    async def pending_actions(self, task_ids: Sequence[str]) -> list[PendingAction]:
        """Derived from durable waits; when several hold: BUDGET_REACHED (nothing moves until it is raised),
        PERMISSION, CLARIFICATION, then COMPLETION_PENDING. One statement for the whole batch."""
        async with self.ctx.read() as db:
            rows = (await db.execute(_pending_statement(), {"task_ids": list(task_ids)})).all()
        best: dict[str, int] = {}
        for task_id, rank in rows:
            best[task_id] = min(rank, best.get(task_id, rank))
        order = [
            PendingAction.BUDGET_REACHED,
            PendingAction.PERMISSION,
            PendingAction.CLARIFICATION,
            PendingAction.COMPLETION_PENDING,
            PendingAction.WAITING_FOR_WORKER,
        ]
        return [order[best[i]] if i in best else PendingAction.NONE for i in task_ids]

    async def task_activity(self, task_ids: Sequence[str]) -> list[TaskActivity]:
        """Each task's card activity (agent, last activity, preview, attention), in one statement."""
        return await read_activity(self.ctx, task_ids)

    async def ship_requests(self, task_ids: Sequence[str]) -> list[list[RequestRecord]]:
        """Each task's pull and merge requests (board badges, the PR card), in one statement."""
        async with self.ctx.read() as db:
            rows = await db.scalars(select(TaskShipRequest).where(TaskShipRequest.task_id.in_(task_ids)))
            found: dict[str, list[RequestRecord]] = {}
            for row in rows:
                found.setdefault(row.task_id, []).append(RequestRecord.of(row))
        return [found.get(i, []) for i in task_ids]

    async def pending_parent_questions(self, task_ids: Sequence[str]) -> list[ParentQuestion | None]:
        async with self.ctx.read() as db:
            rows = await db.scalars(
                select(ParentQuestion).where(
                    ParentQuestion.child_task_id.in_(task_ids), ParentQuestion.state == "PENDING"
                )
            )
            by_task = {row.child_task_id: row for row in rows}
        return [by_task.get(i) for i in task_ids]

    async def runs_at(self, keys: Sequence[tuple[str, datetime]]) -> list[str | None]:
        """Per (task, moment): the automation run the task was working for then, its newest run created at or
        before that moment (a continue-session task serves many runs); None for a task no automation fired."""
        async with self.ctx.read() as db:
            rows = await db.execute(
                select(AutomationRun.task_id, AutomationRun.created_at, AutomationRun.id)
                .where(AutomationRun.task_id.in_({task_id for task_id, _ in keys}))
                .order_by(AutomationRun.created_at, AutomationRun.id)
            )
            runs: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
            for task_id, created_at, run_id in rows.tuples():
                if task_id is not None:
                    runs[task_id].append((created_at, run_id))
        return [next((r for at, r in reversed(runs[t]) if at <= moment), None) for t, moment in keys]

    async def running_since(self, automation_ids: Sequence[str]) -> list[datetime | None]:
        """Per automation, when its oldest active run fired (None: nothing runs), in one statement."""
        async with self.ctx.read() as db:
            rows = await db.execute(
                select(AutomationRun.automation_id, func.min(AutomationRun.created_at))
                .where(AutomationRun.automation_id.in_(set(automation_ids)), active_sql())
                .group_by(AutomationRun.automation_id)
            )
            found = {automation_id: since for automation_id, since in rows.tuples()}
        return [found.get(automation_id) for automation_id in automation_ids]

    async def last_turn_errors(self, task_ids: Sequence[str]) -> list[Turn | None]:
        """Per task, its newest ended turn when that turn FAILED: an error stands until a later turn
        completes (a cancelled turn neither sets nor clears it)."""
        async with self.ctx.read() as db:
            rows = await db.execute(
                select(Session.task_id, Turn)
                .join(Turn, Turn.session_id == Session.id)
                .where(
                    Session.task_id.in_(task_ids),
                    Turn.state.in_([TurnState.COMPLETED, TurnState.FAILED]),
                    Turn.ended_at.is_not(None),
                )
                .order_by(Turn.ended_at.desc(), Turn.seq.desc())
            )
            newest: dict[str, Turn] = {}
            for task_id, turn in rows.tuples():
                newest.setdefault(task_id, turn)
        return [t if (t := newest.get(i)) is not None and t.state == TurnState.FAILED else None for i in task_ids]


@cache
def _pending_statement() -> CompoundSelect[Any]:
    """Built once, the ids an expanding parameter: it runs for every page and every live task event."""
    task_ids: BindParameter[list[str]] = bindparam("task_ids", expanding=True)
    budget = select(Budget.subject_id.label("task_id"), literal(0).label("rank")).where(
        Budget.subject_id.in_(task_ids), Budget.subject_kind == "task", Budget.reached_at.is_not(None)
    )
    permission = select(PermissionRequest.task_id.label("task_id"), literal(1).label("rank")).where(
        PermissionRequest.task_id.in_(task_ids), PermissionRequest.state == "PENDING"
    )
    question = select(Clarification.task_id.label("task_id"), literal(2).label("rank")).where(
        Clarification.task_id.in_(task_ids), Clarification.state == "PENDING"
    )
    asked_parent = select(ParentQuestion.child_task_id.label("task_id"), literal(2).label("rank")).where(
        ParentQuestion.child_task_id.in_(task_ids), ParentQuestion.state == "PENDING"
    )
    completion = select(Session.task_id.label("task_id"), literal(3).label("rank")).where(
        Session.task_id.in_(task_ids), Session.completion_pending.is_(True)
    )
    # A queued turn no live worker can run (the capabilities it waits for are recorded as it is enqueued).
    waiting = select(Session.task_id.label("task_id"), literal(4).label("rank")).where(
        Session.task_id.in_(task_ids),
        cast(Session.waiting_for, String) != "[]",
        Session.state.not_in([s.value for s in TERMINAL_SESSION_STATES]),
    )
    return union_all(budget, permission, question, asked_parent, completion, waiting)

"""Workflows and steps: reads, the default Kanban workflow, the configuration rules and YAML import/export.

Invariants kept by every write: positions run 0..n-1, a workflow with steps has exactly one start
step (the first one when none is chosen), at most one final step, step names are unique within a
workflow, and every move_to_step action names a step of the same workflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeGuard, TypeVar

from sqlalchemy import ColumnElement, and_, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.context import ServiceContext, UnitOfWork
from kandev.domain.errors import ConflictError, NotFoundError, ValidationError
from kandev.domain.mcp.selections import forget_task_selections
from kandev.domain.scope import load_step, load_workflow, load_workspace
from kandev.domain.validation import clean_name
from kandev.domain.workflow import yaml_io as workflow_yaml
from kandev.domain.workflow.rules import (  # noqa: F401 - the step event vocabulary, re-exported
    AUTO_START_AGENT,
    DISABLE_PLAN_MODE,
    ENABLE_PLAN_MODE,
    EVENT_ACTIONS,
    MOVE_TO_NEXT,
    MOVE_TO_PREVIOUS,
    MOVE_TO_STEP,
    MOVES,
    ON_CHILDREN_COMPLETED,
    ON_ENTER,
    ON_EXIT,
    ON_TURN_COMPLETE,
    ON_TURN_START,
    RESET_AGENT_CONTEXT,
    clean_events,
    loop_warnings,
    references_to,
)
from kandev.domain.workflow.transitions import move_task
from kandev.models import Task, Workflow, WorkflowStep
from kandev.models.base import new_id, utcnow
from kandev.models.enums import TransitionTrigger

DEFAULT_WORKFLOW_NAME = "Kanban"
DEFAULT_KANBAN_STEPS: list[dict[str, Any]] = [
    {"name": "Backlog", "is_start_step": True},
    {
        "name": "In Progress",
        "events": {
            "on_enter": [{"type": AUTO_START_AGENT}],
            "on_turn_complete": [{"type": MOVE_TO_NEXT}],
        },
        # Waiting for step_complete_kandev is opt-in per step: the default workflow requires it nowhere.
    },
    {"name": "Review"},
    {"name": "Done", "is_final_step": True},
]
MAX_DESCRIPTION_LENGTH = 10_000
MAX_PROMPT_LENGTH = 100_000


_T = TypeVar("_T")


class _Missing(Enum):
    MISSING = "missing"


MISSING = _Missing.MISSING
"""An omitted field: unchanged on update, the default on create (unlike an explicit value)."""


@dataclass
class StepFields:
    """Step input. MISSING (or None) leaves a field as it is; for wip_limit, None means no limit."""

    name: str | None | _Missing = MISSING
    position: int | None | _Missing = MISSING
    prompt: str | None | _Missing = MISSING
    is_start_step: bool | None | _Missing = MISSING
    is_final_step: bool | None | _Missing = MISSING
    auto_advance_requires_signal: bool | None | _Missing = MISSING
    allow_manual_move: bool | None | _Missing = MISSING
    wip_limit: int | None | _Missing = MISSING
    events: Any = MISSING


def _given(value: _T | _Missing | None) -> TypeGuard[_T]:
    return value is not MISSING and value is not None


@dataclass(frozen=True)
class SavedWorkflow:
    """A workflow after a write: its steps in order, the loop warnings, and the step written (if one)."""

    workflow: Workflow
    steps: list[WorkflowStep]
    warnings: list[str] = field(default_factory=list)
    step: WorkflowStep | None = None


def add_workflow(
    db: AsyncSession,
    workspace_id: str,
    name: str,
    steps: Sequence[dict[str, Any]],
    description: str = "",
) -> Workflow:
    """Stage a workflow and its steps, positioned in the given order."""
    workflow = Workflow(id=new_id(), workspace_id=workspace_id, name=name, description=description)
    db.add(workflow)
    for position, spec in enumerate(steps):
        db.add(
            WorkflowStep(
                id=spec.get("id") or new_id(),
                workflow_id=workflow.id,
                position=position,
                name=spec["name"],
                is_start_step=spec.get("is_start_step", False),
                is_final_step=spec.get("is_final_step", False),
                prompt=spec.get("prompt", ""),
                events=spec.get("events", {}),
                auto_advance_requires_signal=spec.get("auto_advance_requires_signal", False),
                allow_manual_move=spec.get("allow_manual_move", True),
                wip_limit=spec.get("wip_limit"),
            )
        )
    return workflow


async def ordered_steps(db: AsyncSession, workflow_id: str) -> list[WorkflowStep]:
    result = await db.scalars(
        select(WorkflowStep).where(WorkflowStep.workflow_id == workflow_id).order_by(WorkflowStep.position)
    )
    return list(result)


def start_step_of(steps: Sequence[WorkflowStep]) -> WorkflowStep:
    """The flagged start step, else the first one."""
    if not steps:
        raise ConflictError("the workflow has no steps")
    return next((s for s in steps if s.is_start_step), steps[0])


def final_step_of(steps: Sequence[WorkflowStep]) -> WorkflowStep:
    """The flagged final step, else the last one."""
    if not steps:
        raise ConflictError("the workflow has no steps")
    return next((s for s in steps if s.is_final_step), steps[-1])


def _clean_description(value: str | None) -> str:
    description = (value or "").strip()
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise ValidationError(f"description must be at most {MAX_DESCRIPTION_LENGTH} characters", field="description")
    return description


def _check_unique_name(steps: Sequence[WorkflowStep], name: str, own_id: str | None) -> None:
    if any(s.name.casefold() == name.casefold() and s.id != own_id for s in steps):
        raise ValidationError("another step of this workflow already has this name", field="name")


def _check_step_values(fields: StepFields) -> None:
    """Rules that need no stored state; run before anything is loaded or written."""
    if _given(fields.prompt) and len(fields.prompt) > MAX_PROMPT_LENGTH:
        raise ValidationError(f"prompt must be at most {MAX_PROMPT_LENGTH} characters", field="prompt")
    wip = fields.wip_limit
    if wip is not MISSING and wip is not None and (isinstance(wip, bool) or not isinstance(wip, int) or wip < 1):
        raise ValidationError("wipLimit must be a whole number of at least 1, or null for no limit", field="wipLimit")
    position = fields.position
    if _given(position) and (isinstance(position, bool) or not isinstance(position, int) or position < 0):
        raise ValidationError("position must be 0 or more", field="position")


def _place(steps: list[WorkflowStep], step: WorkflowStep, position: int) -> None:
    """Put `step` at `position` (0-based) and renumber every step from 0."""
    if step in steps:
        steps.remove(step)
    steps.insert(position, step)
    for index, each in enumerate(steps):
        each.position = index


def _normalize_flags(steps: Sequence[WorkflowStep], start: WorkflowStep | None, final: WorkflowStep | None) -> None:
    """One start step (the one just chosen, else the first), at most one final (the one just chosen)."""
    for step in steps:
        if start is not None and step is not start:
            step.is_start_step = False
        if final is not None and step is not final:
            step.is_final_step = False
    if steps and not any(s.is_start_step for s in steps):
        steps[0].is_start_step = True


class WorkflowService:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    # -- reads -----------------------------------------------------------------------------

    async def list_for_workspace(self, workspace_id: str) -> list[Workflow]:
        async with self.ctx.read() as db:
            await load_workspace(db, self.ctx.principal, workspace_id)
            result = await db.scalars(
                select(Workflow).where(Workflow.workspace_id == workspace_id).order_by(Workflow.created_at, Workflow.id)
            )
            return list(result)

    async def get(self, workflow_id: str) -> Workflow:
        async with self.ctx.read() as db:
            return await load_workflow(db, self.ctx.principal, workflow_id)

    async def steps(self, workflow_id: str) -> list[WorkflowStep]:
        async with self.ctx.read() as db:
            await load_workflow(db, self.ctx.principal, workflow_id)
            return await ordered_steps(db, workflow_id)

    async def export_yaml(self, workflow_id: str) -> str:
        async with self.ctx.read() as db:
            workflow = await load_workflow(db, self.ctx.principal, workflow_id)
            return workflow_yaml.to_yaml(workflow, await ordered_steps(db, workflow_id))

    # -- workflows -------------------------------------------------------------------------

    async def create(self, workspace_id: str, name: str, description: str | None = None) -> SavedWorkflow:
        name = clean_name(name, "name")
        description = _clean_description(description)
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            workflow = add_workflow(uow.db, workspace_id, name, [], description)
            await uow.db.flush()
            return SavedWorkflow(workflow, [])

    async def update(
        self, workflow_id: str, *, name: str | None = None, description: str | None = None
    ) -> SavedWorkflow:
        new_name = clean_name(name, "name") if name is not None else None
        new_description = _clean_description(description) if description is not None else None
        async with self.ctx.unit_of_work() as uow:
            workflow = await load_workflow(uow.db, self.ctx.principal, workflow_id)
            if new_name is not None:
                workflow.name = new_name
            if new_description is not None:
                workflow.description = new_description
            workflow.updated_at = utcnow()
            steps = await ordered_steps(uow.db, workflow.id)
            return SavedWorkflow(workflow, steps, loop_warnings(steps))

    async def delete(self, workflow_id: str) -> Workflow:
        """Refused for the workspace's default workflow and while live (also archived) tasks use it."""
        async with self.ctx.unit_of_work() as uow:
            db = uow.db
            workflow = await load_workflow(db, self.ctx.principal, workflow_id)
            workspace = await load_workspace(db, self.ctx.principal, workflow.workspace_id)
            if workspace.default_workflow_id == workflow.id:
                raise ConflictError("the workspace's default workflow can't be deleted")
            live = await _count_live_tasks(db, Task.workflow_id == workflow.id)
            if live:
                raise ConflictError(
                    f"{live} task(s) still use this workflow; move, archive and delete them first", tasks=live
                )
            # Deleted tasks are gone for everyone; only their rows still point here.
            await _purge_deleted_tasks(db, Task.workflow_id == workflow.id)
            await db.delete(workflow)
            return workflow

    # -- steps -----------------------------------------------------------------------------

    async def create_step(self, workflow_id: str, fields: StepFields) -> SavedWorkflow:
        """Append, or insert at `position` shifting the rest; omitted flags false, manual moves allowed."""
        if not _given(fields.name):
            raise ValidationError("name must not be empty", field="name")
        name = clean_name(fields.name, "name")
        _check_step_values(fields)
        async with self.ctx.unit_of_work() as uow:
            workflow = await load_workflow(uow.db, self.ctx.principal, workflow_id)
            steps = await _locked_steps(uow.db, workflow.id)
            _check_unique_name(steps, name, None)
            position = fields.position if _given(fields.position) else len(steps)
            if position > len(steps):
                raise ValidationError(f"position must be between 0 and {len(steps)}", field="position")
            events = clean_events(fields.events if _given(fields.events) else {}, [s.id for s in steps])
            step = WorkflowStep(
                id=new_id(),
                workflow_id=workflow.id,
                name=name,
                position=position,
                prompt=fields.prompt if _given(fields.prompt) else "",
                is_start_step=fields.is_start_step is True,
                is_final_step=fields.is_final_step is True,
                auto_advance_requires_signal=fields.auto_advance_requires_signal is True,
                allow_manual_move=fields.allow_manual_move is not False,
                wip_limit=fields.wip_limit if fields.wip_limit is not MISSING else None,
                events=events,
                created_at=utcnow(),
                updated_at=utcnow(),
            )
            uow.db.add(step)
            _place(steps, step, position)
            _normalize_flags(steps, step if step.is_start_step else None, step if step.is_final_step else None)
            workflow.updated_at = utcnow()
            await uow.db.flush()
            return SavedWorkflow(workflow, steps, loop_warnings(steps), step)

    async def update_step(self, step_id: str, fields: StepFields) -> SavedWorkflow:
        """Only the fields given change; an explicit false is a value, an omitted field is not."""
        name = clean_name(fields.name, "name") if _given(fields.name) else None
        _check_step_values(fields)
        async with self.ctx.unit_of_work() as uow:
            step = await load_step(uow.db, self.ctx.principal, step_id)
            workflow = await load_workflow(uow.db, self.ctx.principal, step.workflow_id)
            steps = await _locked_steps(uow.db, workflow.id)
            if name is not None:
                _check_unique_name(steps, name, step.id)
                step.name = name
            if _given(fields.position):
                if fields.position >= len(steps):
                    raise ValidationError(f"position must be between 0 and {len(steps) - 1}", field="position")
                _place(steps, step, fields.position)
            if _given(fields.events):
                step.events = clean_events(fields.events, [s.id for s in steps])
            if _given(fields.prompt):
                step.prompt = fields.prompt
            for attr in (
                "auto_advance_requires_signal",
                "allow_manual_move",
                "is_start_step",
                "is_final_step",
            ):
                value = getattr(fields, attr)
                if _given(value):
                    setattr(step, attr, bool(value))
            if fields.wip_limit is not MISSING:
                step.wip_limit = fields.wip_limit
            _normalize_flags(
                steps,
                step if fields.is_start_step is True else None,
                step if fields.is_final_step is True else None,
            )
            step.updated_at = workflow.updated_at = utcnow()
            await uow.db.flush()
            return SavedWorkflow(workflow, steps, loop_warnings(steps), step)

    async def delete_step(self, step_id: str, move_tasks_to_step_id: str | None = None) -> SavedWorkflow:
        """Refused while another step's move_to_step leads to it, and while live tasks stand on it unless
        `move_tasks_to_step_id` names another step of the workflow: they move there first, in the same
        transaction, with the MOVED events of a move but none of the steps' event actions (a bulk
        relocation starts no agent; the target's WIP limit and manual-move switch guard moves by hand and
        don't apply)."""
        async with self.ctx.unit_of_work() as uow:
            db = uow.db
            step = await load_step(db, self.ctx.principal, step_id)
            workflow = await load_workflow(db, self.ctx.principal, step.workflow_id)
            steps = await _locked_steps(db, workflow.id)
            target = _relocation_target(steps, step, move_tasks_to_step_id)
            referrers = references_to(steps, step.id)
            if referrers:
                names = ", ".join(f"'{s.name}'" for s in referrers)
                raise ConflictError(f"step(s) {names} move tasks to this step; change their events first")
            if target is None:
                live = await _count_live_tasks(db, Task.workflow_step_id == step.id)
                if live:
                    raise ConflictError(
                        f"{live} task(s) are in this step; move them first, or name moveTasksToStepId", tasks=live
                    )
            else:
                await _relocate_tasks(self.ctx, uow, step, target)
            await _purge_deleted_tasks(db, Task.workflow_step_id == step.id)
            await db.delete(step)
            steps.remove(step)
            for index, each in enumerate(steps):
                each.position = index
            _normalize_flags(steps, None, None)
            workflow.updated_at = utcnow()
            await db.flush()
            return SavedWorkflow(workflow, steps, loop_warnings(steps), step)

    async def reorder_steps(self, workflow_id: str, step_ids: Sequence[str]) -> SavedWorkflow:
        """`step_ids` lists every step of the workflow exactly once, in the new order."""
        async with self.ctx.unit_of_work() as uow:
            workflow = await load_workflow(uow.db, self.ctx.principal, workflow_id)
            steps = await _locked_steps(uow.db, workflow.id)
            by_id = {s.id: s for s in steps}
            ids = [str(i) for i in step_ids]
            if len(ids) != len(steps) or set(ids) != set(by_id):
                raise ValidationError("stepIds must list every step of the workflow exactly once", field="stepIds")
            ordered = [by_id[i] for i in ids]
            for index, step in enumerate(ordered):
                step.position = index
            workflow.updated_at = utcnow()
            await uow.db.flush()
            return SavedWorkflow(workflow, ordered, loop_warnings(ordered))

    # -- YAML ------------------------------------------------------------------------------

    async def import_yaml(self, workspace_id: str, text: str) -> SavedWorkflow:
        """A new workflow in the workspace from an exported document, checked like the mutations."""
        draft = workflow_yaml.parse(text)
        try:
            name = clean_name(draft.name, "name")
            description = _clean_description(draft.description)
        except ValidationError as error:
            raise ValidationError(error.message, field=workflow_yaml.FIELD) from None
        specs = _draft_steps(draft)
        async with self.ctx.unit_of_work() as uow:
            await load_workspace(uow.db, self.ctx.principal, workspace_id)
            workflow = add_workflow(uow.db, workspace_id, name, specs, description)
            await uow.db.flush()
            steps = await ordered_steps(uow.db, workflow.id)
            _normalize_flags(steps, None, None)
            return SavedWorkflow(workflow, steps, loop_warnings(steps))


def _draft_steps(draft: workflow_yaml.WorkflowDraft) -> list[dict[str, Any]]:
    """Step specs for add_workflow, each checked with the rules of createWorkflowStep (field `yaml`)."""
    ids = [new_id() for _ in draft.steps]
    names: dict[str, str] = {}
    specs: list[dict[str, Any]] = []
    for index, (step_id, step) in enumerate(zip(ids, draft.steps, strict=True)):
        where = f"steps[{index}]"
        try:
            name = clean_name(step.name, "name")
            _check_step_values(StepFields(prompt=step.prompt, wip_limit=step.wip_limit))
        except ValidationError as error:
            raise ValidationError(f"{where}: {error.message}", field=workflow_yaml.FIELD) from None
        if name.casefold() in {n.casefold() for n in names}:
            raise ValidationError(f"{where}: another step already has this name", field=workflow_yaml.FIELD)
        names[name] = step_id
        specs.append({"id": step_id, "name": name, **{k: getattr(step, k) for k in _DRAFT_FIELDS}})
    for flag in ("is_start_step", "is_final_step"):
        if sum(1 for s in specs if s[flag]) > 1:
            raise ValidationError(f"only one step may set {flag}", field=workflow_yaml.FIELD)
    for index, spec in enumerate(specs):
        where = f"steps[{index}]"
        try:
            events = workflow_yaml.resolve_step_names(spec["events"], names, where)
            spec["events"] = clean_events(events, ids)
        except ValidationError as error:
            if error.field == workflow_yaml.FIELD:
                raise
            raise ValidationError(f"{where}: {error.message}", field=workflow_yaml.FIELD) from None
    return specs


_DRAFT_FIELDS = (
    "prompt",
    "is_start_step",
    "is_final_step",
    "auto_advance_requires_signal",
    "allow_manual_move",
    "wip_limit",
    "events",
)


async def _locked_steps(db: AsyncSession, workflow_id: str) -> list[WorkflowStep]:
    """The workflow's steps in order, with the workflow row locked so concurrent step writes queue."""
    await db.execute(select(Workflow.id).where(Workflow.id == workflow_id).with_for_update())
    result = await db.scalars(
        select(WorkflowStep)
        .where(WorkflowStep.workflow_id == workflow_id)
        .order_by(WorkflowStep.position)
        .execution_options(populate_existing=True)
    )
    return list(result)


_TARGET = "moveTasksToStepId"


def _relocation_target(steps: Sequence[WorkflowStep], step: WorkflowStep, target_id: str | None) -> WorkflowStep | None:
    """The step a deleted step's tasks move to: another step of the same workflow (an unknown step, or one
    of another workflow, is not found, like a moveTask to it)."""
    if target_id is None:
        return None
    if target_id == step.id:
        raise ValidationError("moveTasksToStepId must name another step than the deleted one", field=_TARGET)
    target = next((s for s in steps if s.id == target_id), None)
    if target is None:
        raise NotFoundError("workflow step", target_id)
    return target


async def _purge_deleted_tasks(db: AsyncSession, where: ColumnElement[bool]) -> None:
    """Removes the rows of deleted tasks matching `where` (those still pointing at a workflow or step being
    deleted), with the MCP selections made at them and their sessions (a scope's target has no foreign key)."""
    deleted = and_(where, Task.deleted_at.is_not(None))
    await forget_task_selections(db, deleted)
    await db.execute(delete(Task).where(deleted))


async def _relocate_tasks(ctx: ServiceContext, uow: UnitOfWork, step: WorkflowStep, target: WorkflowStep) -> None:
    """Every not-deleted task of `step` (archived ones too) onto `target`, oldest first."""
    tasks = await uow.db.scalars(
        select(Task)
        .where(Task.workflow_step_id == step.id, Task.deleted_at.is_(None))
        .order_by(Task.created_at, Task.id)
    )
    details = {"deleted_step_id": step.id, "deleted_step_name": step.name}
    for task in list(tasks):
        await move_task(
            ctx, uow, task, target, trigger=TransitionTrigger.STEP_DELETED, details=details, step_actions=False
        )


async def _count_live_tasks(db: AsyncSession, condition: Any) -> int:
    count = await db.scalar(select(func.count()).select_from(Task).where(condition, Task.deleted_at.is_(None)))
    return count or 0

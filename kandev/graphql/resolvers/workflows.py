"""Workflow and step mutations, YAML import and export."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import strawberry

from kandev.domain.workflow.service import MISSING, SavedWorkflow, StepFields
from kandev.graphql.resolvers.common import attempt, optional_id
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.types import Workflow, WorkflowStep
from kandev.graphql.schema.workflow_inputs import (
    CreateWorkflowInput,
    CreateWorkflowResult,
    CreateWorkflowStepInput,
    CreateWorkflowStepResult,
    DeleteWorkflowPayload,
    DeleteWorkflowResult,
    DeleteWorkflowStepPayload,
    DeleteWorkflowStepResult,
    ImportWorkflowInput,
    ImportWorkflowResult,
    MoveTasksToStepArgument,
    ReorderWorkflowStepsInput,
    ReorderWorkflowStepsResult,
    StepIdArgument,
    UpdateWorkflowInput,
    UpdateWorkflowResult,
    UpdateWorkflowStepInput,
    UpdateWorkflowStepResult,
    WorkflowIdArgument,
    WorkflowPayload,
    WorkflowStepPayload,
)

_STEP_FIELDS = (
    "name",
    "position",
    "prompt",
    "is_start_step",
    "is_final_step",
    "auto_advance_requires_signal",
    "allow_manual_move",
    "wip_limit",
    "events",
)


def _fields(input: CreateWorkflowStepInput | UpdateWorkflowStepInput) -> StepFields:
    """UNSET (omitted) becomes MISSING; an explicit value, false included, goes through as it is."""
    values: dict[str, Any] = {}
    for name in _STEP_FIELDS:
        value = getattr(input, name)
        values[name] = MISSING if value is strawberry.UNSET else value
    return StepFields(**values)


def _fresh(info: Info) -> None:
    """Step writes happened in this request: later step reads must not come from the loaders' cache."""
    info.context.loaders.steps_by_workflow.clear_all()
    info.context.loaders.step.clear_all()


def _workflow_payload(info: Info) -> Callable[[SavedWorkflow], WorkflowPayload]:
    def wrap(saved: SavedWorkflow) -> WorkflowPayload:
        _fresh(info)
        return WorkflowPayload(workflow=Workflow.of(saved.workflow), warnings=saved.warnings)

    return wrap


def _step_payload(info: Info) -> Callable[[SavedWorkflow], WorkflowStepPayload]:
    def wrap(saved: SavedWorkflow) -> WorkflowStepPayload:
        _fresh(info)
        assert saved.step is not None, "a step write always names the step it wrote"
        return WorkflowStepPayload(
            step=WorkflowStep.of(saved.step), workflow=Workflow.of(saved.workflow), warnings=saved.warnings
        )

    return wrap


async def export_workflow(info: Info, workflow_id: strawberry.ID) -> str | None:
    """The workflow as YAML, ready for importWorkflow."""
    return await info.context.services.workflows.export_yaml(str(workflow_id))


async def create_workflow(info: Info, input: CreateWorkflowInput) -> CreateWorkflowResult:
    call = info.context.services.workflows.create(str(input.workspace_id), input.name, input.description)
    return await attempt(call, _workflow_payload(info))


async def update_workflow(info: Info, input: UpdateWorkflowInput) -> UpdateWorkflowResult:
    call = info.context.services.workflows.update(
        str(input.workflow_id), name=input.name, description=input.description
    )
    return await attempt(call, _workflow_payload(info))


async def delete_workflow(info: Info, workflow_id: WorkflowIdArgument) -> DeleteWorkflowResult:
    call = info.context.services.workflows.delete(str(workflow_id))
    return await attempt(call, lambda w: DeleteWorkflowPayload(workflow_id=strawberry.ID(w.id)))


async def create_workflow_step(info: Info, input: CreateWorkflowStepInput) -> CreateWorkflowStepResult:
    call = info.context.services.workflows.create_step(str(input.workflow_id), _fields(input))
    return await attempt(call, _step_payload(info))


async def update_workflow_step(info: Info, input: UpdateWorkflowStepInput) -> UpdateWorkflowStepResult:
    call = info.context.services.workflows.update_step(str(input.step_id), _fields(input))
    return await attempt(call, _step_payload(info))


def _deleted_step(info: Info) -> Callable[[SavedWorkflow], DeleteWorkflowStepPayload]:
    def wrap(saved: SavedWorkflow) -> DeleteWorkflowStepPayload:
        _fresh(info)
        step_id = strawberry.ID(saved.step.id) if saved.step else strawberry.ID("")
        return DeleteWorkflowStepPayload(step_id=step_id, workflow=Workflow.of(saved.workflow), warnings=saved.warnings)

    return wrap


async def delete_workflow_step(
    info: Info, step_id: StepIdArgument, move_tasks_to_step_id: MoveTasksToStepArgument = None
) -> DeleteWorkflowStepResult:
    call = info.context.services.workflows.delete_step(str(step_id), optional_id(move_tasks_to_step_id))
    return await attempt(call, _deleted_step(info))


async def reorder_workflow_steps(info: Info, input: ReorderWorkflowStepsInput) -> ReorderWorkflowStepsResult:
    call = info.context.services.workflows.reorder_steps(str(input.workflow_id), [str(i) for i in input.step_ids])
    return await attempt(call, _workflow_payload(info))


async def import_workflow(info: Info, input: ImportWorkflowInput) -> ImportWorkflowResult:
    call = info.context.services.workflows.import_yaml(str(input.workspace_id), input.yaml)
    return await attempt(call, _workflow_payload(info))

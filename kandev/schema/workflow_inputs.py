"""Inputs, payloads and result unions of the workflow and step mutations."""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

from kandev.schema.payloads import result
from kandev.schema.types import Workflow, WorkflowStep

_EVENTS = (
    "Step events: {on_enter: [auto_start_agent (optional prompt) | enable_plan_mode | reset_agent_context], "
    "on_turn_start: [move_to_next | move_to_previous | move_to_step (step_id)], on_turn_complete: [the moves | "
    "disable_plan_mode], on_exit: [disable_plan_mode], on_children_completed: [the moves]}; each action {type, ...}."
)
_SIGNAL = "Auto-advance waits for the agent's step_complete_kandev signal."


@strawberry.input
class CreateWorkflowInput:
    workspace_id: strawberry.ID
    name: str
    description: str | None = None


@strawberry.input(description="Only the fields given change.")
class UpdateWorkflowInput:
    workflow_id: strawberry.ID
    name: str | None = None
    description: str | None = None


@strawberry.input(description="A new step. Omitted flags are false; manual moves are allowed unless said otherwise.")
class CreateWorkflowStepInput:
    workflow_id: strawberry.ID
    name: str
    position: int | None = strawberry.field(
        default=None, description="0-based; the steps from there on shift one down. Default: append."
    )
    prompt: str | None = None
    is_start_step: bool | None = strawberry.field(default=None, description="True makes it the only start step.")
    is_final_step: bool | None = strawberry.field(default=None, description="True makes it the only final step.")
    auto_advance_requires_signal: bool | None = strawberry.field(default=None, description=_SIGNAL)
    allow_manual_move: bool | None = None
    wip_limit: int | None = strawberry.field(default=None, description="At least 1; null: no limit.")
    events: JSON | None = strawberry.field(default=None, description=_EVENTS)


@strawberry.input(
    description="Only the fields given change: an omitted field (or null) keeps its value, an explicit false is "
    "stored. wipLimit null removes the limit."
)
class UpdateWorkflowStepInput:
    step_id: strawberry.ID
    name: str | None = strawberry.UNSET
    position: int | None = strawberry.field(default=strawberry.UNSET, description="0-based; others shift.")
    prompt: str | None = strawberry.UNSET
    is_start_step: bool | None = strawberry.UNSET
    is_final_step: bool | None = strawberry.UNSET
    auto_advance_requires_signal: bool | None = strawberry.field(default=strawberry.UNSET, description=_SIGNAL)
    allow_manual_move: bool | None = strawberry.UNSET
    wip_limit: int | None = strawberry.field(default=strawberry.UNSET, description="At least 1; null: no limit.")
    events: JSON | None = strawberry.field(default=strawberry.UNSET, description=_EVENTS)


@strawberry.input
class ReorderWorkflowStepsInput:
    workflow_id: strawberry.ID
    step_ids: list[strawberry.ID] = strawberry.field(description="Every step of the workflow once, in the new order.")


@strawberry.input
class ImportWorkflowInput:
    workspace_id: strawberry.ID
    yaml: str = strawberry.field(description="A document as exportWorkflow writes it.")


_WARNINGS = "Steps that would move a task around forever, and other problems worth a look; saved anyway."


@strawberry.type
class WorkflowPayload:
    workflow: Workflow
    warnings: list[str] = strawberry.field(description=_WARNINGS)


@strawberry.type
class WorkflowStepPayload:
    step: WorkflowStep
    workflow: Workflow
    warnings: list[str] = strawberry.field(description=_WARNINGS)


@strawberry.type
class DeleteWorkflowPayload:
    workflow_id: strawberry.ID


@strawberry.type
class DeleteWorkflowStepPayload:
    step_id: strawberry.ID
    workflow: Workflow
    warnings: list[str] = strawberry.field(description=_WARNINGS)


CreateWorkflowResult = result("CreateWorkflowResult", WorkflowPayload)
UpdateWorkflowResult = result("UpdateWorkflowResult", WorkflowPayload)
DeleteWorkflowResult = result("DeleteWorkflowResult", DeleteWorkflowPayload)
CreateWorkflowStepResult = result("CreateWorkflowStepResult", WorkflowStepPayload)
UpdateWorkflowStepResult = result("UpdateWorkflowStepResult", WorkflowStepPayload)
DeleteWorkflowStepResult = result("DeleteWorkflowStepResult", DeleteWorkflowStepPayload)
ReorderWorkflowStepsResult = result("ReorderWorkflowStepsResult", WorkflowPayload)
ImportWorkflowResult = result("ImportWorkflowResult", WorkflowPayload)

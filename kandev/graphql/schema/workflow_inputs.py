"""Inputs, payloads and result unions of the workflow and step mutations."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import strawberry
from strawberry.scalars import JSON

from kandev.domain.validation import MAX_TITLE_LENGTH
from kandev.domain.workflow.rules import ACTION_FIELDS, EVENT_ACTIONS
from kandev.graphql.schema.declare import arg, argument
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.types import Workflow, WorkflowStep

_EVENTS = (
    "Step events: {on_enter: [auto_start_agent (optional prompt) | enable_plan_mode | reset_agent_context], "
    "on_turn_start: [move_to_next | move_to_previous | move_to_step (step_id)], on_turn_complete: [the moves | "
    "disable_plan_mode], on_exit: [disable_plan_mode], on_children_completed: [the moves]}; each action {type, ...}."
)
_EVENTS_FOR_AGENTS = (
    "What the step does on each event, each a list of actions. on_enter: auto_start_agent (starts the agent "
    "with the step prompt, or the action's prompt), enable_plan_mode, reset_agent_context. on_turn_start: "
    "move_to_next, move_to_previous, move_to_step. on_turn_complete: those moves, disable_plan_mode. "
    "on_exit: disable_plan_mode. on_children_completed (all subtasks finished): the moves. Replaces all of "
    "the step's events. Auto-start plus a move on two steps that lead to each other makes a loop: the save "
    "answers with a warning."
)
_ACTION = {
    "type": "object",
    "description": "One action: {type} plus, for auto_start_agent, an optional prompt override, and for "
    "move_to_step the target step_id.",
    "properties": {
        "type": {"type": "string", "enum": sorted({a for actions in EVENT_ACTIONS.values() for a in actions})},
        **{key: {"type": "string"} for fields in ACTION_FIELDS.values() for key in fields},
    },
    "required": ["type"],
}
# Open below the top level: the service checks event names and actions and names what is wrong.
_EVENTS_SHAPE = {
    "type": "object",
    "properties": {event: {"type": "array", "items": _ACTION} for event in EVENT_ACTIONS},
}
_SIGNAL = "Auto-advance waits for the agent's step_complete_kandev signal."
_SIGNAL_FOR_AGENTS = (
    "true: the step's turn-complete moves wait for the agent's step_complete_kandev call. Omit it to keep the "
    "current value (false on a new step); send false to turn it off."
)
_NAME = "Name (at most 200 characters)."
_WORKFLOW_ID = "The workflow's id."
_STEP_ID = "The step's id."
_DESCRIPTION = "What the workflow is for."
_POSITION = "0-based place; later steps shift. Default: last."
_PROMPT = "Instructions the agent gets when the step starts it."
_START = "true makes this the workflow's only start step."
_FINAL = "true makes this the only final step (tasks entering it are COMPLETED)."
_MANUAL = "Whether people may move tasks into it. Default: true."
_WIP = "Most tasks moved in by hand; null: no limit."


@strawberry.input
class CreateWorkflowInput:
    workspace_id: strawberry.ID = arg("The workspace's id.", min_length=1)
    name: str = arg(_NAME, min_length=1, max_length=MAX_TITLE_LENGTH)
    description: str | None = arg(_DESCRIPTION, default=None)


@strawberry.input(description="Only the fields given change.")
class UpdateWorkflowInput:
    workflow_id: strawberry.ID = arg(_WORKFLOW_ID, min_length=1)
    name: str | None = arg(_NAME, default=None, min_length=1, max_length=MAX_TITLE_LENGTH)
    description: str | None = arg(_DESCRIPTION, default=None)


WorkflowIdArgument = Annotated[strawberry.ID, argument(_WORKFLOW_ID, min_length=1)]
StepIdArgument = Annotated[strawberry.ID, argument(_STEP_ID, min_length=1)]
MoveTasksToStepArgument = Annotated[
    strawberry.ID | None,
    argument(
        "Another step of the same workflow: the step's tasks (archived ones too) move there first, without "
        "auto-starting agents. Omitted: the delete is refused while tasks are in the step.",
        agent="Another step of the same workflow to move the step's tasks to before deleting it (they move without "
        "starting agents). Leave it out to have the delete refused while tasks are in the step.",
        min_length=1,
    ),
]


@strawberry.input(description="A new step. Omitted flags are false; manual moves are allowed unless said otherwise.")
class CreateWorkflowStepInput:
    workflow_id: strawberry.ID = arg(_WORKFLOW_ID, min_length=1)
    name: str = arg(_NAME, min_length=1, max_length=MAX_TITLE_LENGTH)
    position: int | None = arg(
        "0-based; the steps from there on shift one down. Default: append.", default=None, agent=_POSITION, minimum=0
    )
    prompt: str | None = arg(_PROMPT, default=None)
    is_start_step: bool | None = arg("True makes it the only start step.", default=None, agent=_START)
    is_final_step: bool | None = arg("True makes it the only final step.", default=None, agent=_FINAL)
    auto_advance_requires_signal: bool | None = arg(_SIGNAL, default=None, agent=_SIGNAL_FOR_AGENTS)
    allow_manual_move: bool | None = arg(_MANUAL, default=None)
    wip_limit: int | None = arg("At least 1; null: no limit.", default=None, agent=_WIP, minimum=1, nullable=True)
    events: JSON | None = arg(_EVENTS, default=None, agent=_EVENTS_FOR_AGENTS, json_schema=_EVENTS_SHAPE)


@strawberry.input(
    description="Only the fields given change: an omitted field (or null) keeps its value, an explicit false is "
    "stored. wipLimit null removes the limit."
)
class UpdateWorkflowStepInput:
    step_id: strawberry.ID = arg(_STEP_ID, min_length=1)
    name: str | None = arg(_NAME, default=strawberry.UNSET, min_length=1, max_length=MAX_TITLE_LENGTH)
    position: int | None = arg("0-based; others shift.", default=strawberry.UNSET, agent=_POSITION, minimum=0)
    prompt: str | None = arg(_PROMPT, default=strawberry.UNSET)
    is_start_step: bool | None = arg(_START, default=strawberry.UNSET)
    is_final_step: bool | None = arg(_FINAL, default=strawberry.UNSET)
    auto_advance_requires_signal: bool | None = arg(_SIGNAL, default=strawberry.UNSET, agent=_SIGNAL_FOR_AGENTS)
    allow_manual_move: bool | None = arg(_MANUAL, default=strawberry.UNSET)
    wip_limit: int | None = arg(
        "At least 1; null: no limit.", default=strawberry.UNSET, agent=_WIP, minimum=1, nullable=True
    )
    events: JSON | None = arg(_EVENTS, default=strawberry.UNSET, agent=_EVENTS_FOR_AGENTS, json_schema=_EVENTS_SHAPE)


@strawberry.input
class ReorderWorkflowStepsInput:
    workflow_id: strawberry.ID = arg(_WORKFLOW_ID, min_length=1)
    step_ids: list[strawberry.ID] = arg(
        "Every step of the workflow once, in the new order.",
        agent="All of the workflow's step ids, in the new order.",
        min_length=1,
    )


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


CreateWorkflowResult: TypeAlias = Annotated[WorkflowPayload | ExpectedError, strawberry.union("CreateWorkflowResult")]
UpdateWorkflowResult: TypeAlias = Annotated[WorkflowPayload | ExpectedError, strawberry.union("UpdateWorkflowResult")]
DeleteWorkflowResult: TypeAlias = Annotated[
    DeleteWorkflowPayload | ExpectedError, strawberry.union("DeleteWorkflowResult")
]
CreateWorkflowStepResult: TypeAlias = Annotated[
    WorkflowStepPayload | ExpectedError, strawberry.union("CreateWorkflowStepResult")
]
UpdateWorkflowStepResult: TypeAlias = Annotated[
    WorkflowStepPayload | ExpectedError, strawberry.union("UpdateWorkflowStepResult")
]
DeleteWorkflowStepResult: TypeAlias = Annotated[
    DeleteWorkflowStepPayload | ExpectedError, strawberry.union("DeleteWorkflowStepResult")
]
ReorderWorkflowStepsResult: TypeAlias = Annotated[
    WorkflowPayload | ExpectedError, strawberry.union("ReorderWorkflowStepsResult")
]
ImportWorkflowResult: TypeAlias = Annotated[WorkflowPayload | ExpectedError, strawberry.union("ImportWorkflowResult")]

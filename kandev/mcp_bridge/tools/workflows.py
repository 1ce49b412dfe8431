"""Configuration tools: create, change, delete and reorder workflows and their steps."""

from __future__ import annotations

from typing import Any

from kandev.domain.workflow.rules import ACTION_FIELDS, EVENT_ACTIONS
from kandev.mcp_bridge.catalogue import ToolCall, ToolSpec, obj, register, string
from kandev.mcp_bridge.tools.fields import ERRORS, STEP

WORKFLOW = f"id name description workspace_id: workspaceId steps {{ {STEP} }}"
WORKFLOW_ID = string("The workflow's id.", minLength=1)
STEP_ID = string("The step's id.", minLength=1)
NAME = string("Name (at most 200 characters).", minLength=1, maxLength=200)
_ACTION_TYPES = sorted({a for actions in EVENT_ACTIONS.values() for a in actions})
_ACTION = {
    "type": "object",
    "description": "One action: {type} plus, for auto_start_agent, an optional prompt override, and for "
    "move_to_step the target step_id.",
    "properties": {
        "type": {"type": "string", "enum": _ACTION_TYPES},
        **{key: {"type": "string"} for fields in ACTION_FIELDS.values() for key in fields},
    },
    "required": ["type"],
}
# Open below the top level: the service checks event names and actions and names what is wrong.
EVENTS = {
    "type": "object",
    "description": (
        "What the step does on each event, each a list of actions. on_enter: auto_start_agent (starts the agent "
        "with the step prompt, or the action's prompt), enable_plan_mode, reset_agent_context. on_turn_start: "
        "move_to_next, move_to_previous, move_to_step. on_turn_complete: those moves, disable_plan_mode. "
        "on_exit: disable_plan_mode. on_children_completed (all subtasks finished): the moves. Replaces all of "
        "the step's events. Auto-start plus a move on two steps that lead to each other makes a loop: the save "
        "answers with a warning."
    ),
    "properties": {event: {"type": "array", "items": _ACTION} for event in EVENT_ACTIONS},
}
STEP_PROPERTIES: dict[str, Any] = {
    "name": NAME,
    "position": {
        "type": "integer",
        "minimum": 0,
        "description": "0-based place; later steps shift. Default: last.",
    },
    "prompt": string("Instructions the agent gets when the step starts it."),
    "is_start_step": {"type": "boolean", "description": "true makes this the workflow's only start step."},
    "is_final_step": {
        "type": "boolean",
        "description": "true makes this the only final step (tasks entering it are COMPLETED).",
    },
    "auto_advance_requires_signal": {
        "type": "boolean",
        "description": (
            "true: the step's turn-complete moves wait for the agent's step_complete_kandev call. Omit it to "
            "keep the current value (false on a new step); send false to turn it off."
        ),
    },
    "allow_manual_move": {
        "type": "boolean",
        "description": "Whether people may move tasks into it. Default: true.",
    },
    "wip_limit": {
        "type": ["integer", "null"],
        "minimum": 1,
        "description": "Most tasks moved in by hand; null: no limit.",
    },
    "events": EVENTS,
}
_CAMEL = {
    "name": "name",
    "position": "position",
    "prompt": "prompt",
    "is_start_step": "isStartStep",
    "is_final_step": "isFinalStep",
    "auto_advance_requires_signal": "autoAdvanceRequiresSignal",
    "allow_manual_move": "allowManualMove",
    "wip_limit": "wipLimit",
    "events": "events",
}


def _step_input(call: ToolCall, key: str, value: str) -> dict[str, Any]:
    """Only the arguments given: an omitted field stays omitted, an explicit false stays false."""
    fields = {_CAMEL[k]: v for k, v in call.arguments.items() if k in _CAMEL}
    return {"input": {key: value, **fields}}


def _workflow_of(field: str):  # noqa: ANN202 - a tiny result factory
    return lambda data: {**data[field]["workflow"], "warnings": data[field]["warnings"]}


def _step_of(field: str):  # noqa: ANN202
    return lambda data: {**data[field]["step"], "warnings": data[field]["warnings"]}


def _deleted_step(data: dict[str, Any]) -> dict[str, Any]:
    payload = data["deleteWorkflowStep"]
    return {
        "id": payload["step_id"],
        "deleted": True,
        "workflow_id": payload["workflow"]["id"],
        "warnings": payload["warnings"],
    }


def _reordered(data: dict[str, Any]) -> dict[str, Any]:
    payload = data["reorderWorkflowSteps"]
    workflow = payload["workflow"]
    return {"workflow_id": workflow["id"], "steps": workflow["steps"], "warnings": payload["warnings"]}


register(
    ToolSpec(
        name="create_workflow_kandev",
        description="Create an empty workflow in a workspace; add steps with create_workflow_step_kandev.",
        input_schema=obj(
            {
                "workspace_id": string("The workspace's id.", minLength=1),
                "name": NAME,
                "description": string("What the workflow is for."),
            },
            ("workspace_id", "name"),
        ),
        document=f"""mutation($input: CreateWorkflowInput!) {{ createWorkflow(input: $input) {{ {ERRORS}
          ... on WorkflowPayload {{ warnings workflow {{ {WORKFLOW} }} }} }} }}""",
        variables=lambda call: {
            "input": {
                "workspaceId": call.arguments["workspace_id"],
                "name": call.arguments["name"],
                "description": call.arguments.get("description"),
            }
        },
        result=_workflow_of("createWorkflow"),
    ),
    ToolSpec(
        name="update_workflow_kandev",
        description="Rename a workflow or change its description; fields left out stay as they are.",
        input_schema=obj(
            {"workflow_id": WORKFLOW_ID, "name": NAME, "description": string("What the workflow is for.")},
            ("workflow_id",),
        ),
        document=f"""mutation($input: UpdateWorkflowInput!) {{ updateWorkflow(input: $input) {{ {ERRORS}
          ... on WorkflowPayload {{ warnings workflow {{ {WORKFLOW} }} }} }} }}""",
        variables=lambda call: {
            "input": {
                "workflowId": call.arguments["workflow_id"],
                **{k: call.arguments[k] for k in ("name", "description") if k in call.arguments},
            }
        },
        result=_workflow_of("updateWorkflow"),
    ),
    ToolSpec(
        name="delete_workflow_kandev",
        description=(
            "Delete a workflow and its steps. Refused for the workspace's default workflow and while any task "
            "(archived ones too) is still in it."
        ),
        input_schema=obj({"workflow_id": WORKFLOW_ID}, ("workflow_id",)),
        document=f"""mutation($id: ID!) {{ deleteWorkflow(workflowId: $id) {{ {ERRORS}
          ... on DeleteWorkflowPayload {{ workflow_id: workflowId }} }} }}""",
        variables=lambda call: {"id": call.arguments["workflow_id"]},
        result=lambda data: {"id": data["deleteWorkflow"]["workflow_id"], "deleted": True},
    ),
    ToolSpec(
        name="create_workflow_step_kandev",
        description=(
            "Add a step to a workflow (at `position`, else last) with its prompt, flags and events. Answers the "
            "step with its id, and `warnings` when the configuration could move tasks around forever."
        ),
        input_schema=obj({"workflow_id": WORKFLOW_ID, **STEP_PROPERTIES}, ("workflow_id", "name")),
        document=f"""mutation($input: CreateWorkflowStepInput!) {{ createWorkflowStep(input: $input) {{ {ERRORS}
          ... on WorkflowStepPayload {{ warnings step {{ {STEP} }} }} }} }}""",
        variables=lambda call: _step_input(call, "workflowId", call.arguments["workflow_id"]),
        result=_step_of("createWorkflowStep"),
    ),
    ToolSpec(
        name="update_workflow_step_kandev",
        description=(
            "Change a step; only the fields you send change (send false to turn a flag off). `events` replaces "
            "all of the step's events. Answers the step and any loop `warnings`."
        ),
        input_schema=obj({"step_id": STEP_ID, **STEP_PROPERTIES}, ("step_id",)),
        document=f"""mutation($input: UpdateWorkflowStepInput!) {{ updateWorkflowStep(input: $input) {{ {ERRORS}
          ... on WorkflowStepPayload {{ warnings step {{ {STEP} }} }} }} }}""",
        variables=lambda call: _step_input(call, "stepId", call.arguments["step_id"]),
        result=_step_of("updateWorkflowStep"),
    ),
    ToolSpec(
        name="delete_workflow_step_kandev",
        description=("Delete a step. Refused while tasks are in it or while another step's move_to_step leads to it."),
        input_schema=obj({"step_id": STEP_ID}, ("step_id",)),
        document=f"""mutation($id: ID!) {{ deleteWorkflowStep(stepId: $id) {{ {ERRORS}
          ... on DeleteWorkflowStepPayload {{ step_id: stepId warnings workflow {{ id }} }} }} }}""",
        variables=lambda call: {"id": call.arguments["step_id"]},
        result=_deleted_step,
    ),
    ToolSpec(
        name="reorder_workflow_steps_kandev",
        description="Put a workflow's steps in a new order: step_ids lists each of its steps exactly once.",
        input_schema=obj(
            {
                "workflow_id": WORKFLOW_ID,
                "step_ids": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1},
                    "description": "All of the workflow's step ids, in the new order.",
                },
            },
            ("workflow_id", "step_ids"),
        ),
        document=f"""mutation($input: ReorderWorkflowStepsInput!) {{ reorderWorkflowSteps(input: $input) {{ {ERRORS}
          ... on WorkflowPayload {{ warnings workflow {{ id steps {{ {STEP} }} }} }} }} }}""",
        variables=lambda call: {
            "input": {"workflowId": call.arguments["workflow_id"], "stepIds": call.arguments["step_ids"]}
        },
        result=_reordered,
    ),
)

"""Configuration tools: create, change, delete and reorder workflows and their steps."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import command_tool, register
from kandev.edge.mcp_bridge.tools.fields import STEP

WORKFLOW = f"id name description workspace_id: workspaceId steps {{ {STEP} }}"


def _workflow(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload["workflow"], "warnings": payload["warnings"]}


def _step(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload["step"], "warnings": payload["warnings"]}


def _deleted_step(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": payload["step_id"],
        "deleted": True,
        "workflow_id": payload["workflow"]["id"],
        "warnings": payload["warnings"],
    }


def _reordered(payload: dict[str, Any]) -> dict[str, Any]:
    workflow = payload["workflow"]
    return {"workflow_id": workflow["id"], "steps": workflow["steps"], "warnings": payload["warnings"]}


WORKFLOW_PAYLOAD = f"... on WorkflowPayload {{ warnings workflow {{ {WORKFLOW} }} }}"
STEP_PAYLOAD = f"... on WorkflowStepPayload {{ warnings step {{ {STEP} }} }}"

register(
    command_tool(
        "create_workflow_kandev",
        "createWorkflow",
        "Create an empty workflow in a workspace; add steps with create_workflow_step_kandev.",
        WORKFLOW_PAYLOAD,
        _workflow,
    ),
    command_tool(
        "update_workflow_kandev",
        "updateWorkflow",
        "Rename a workflow or change its description; fields left out stay as they are.",
        WORKFLOW_PAYLOAD,
        _workflow,
    ),
    command_tool(
        "delete_workflow_kandev",
        "deleteWorkflow",
        "Delete a workflow and its steps. Refused for the workspace's default workflow and while any task "
        "(archived ones too) is still in it.",
        "... on DeleteWorkflowPayload { workflow_id: workflowId }",
        lambda payload: {"id": payload["workflow_id"], "deleted": True},
    ),
    command_tool(
        "create_workflow_step_kandev",
        "createWorkflowStep",
        "Add a step to a workflow (at `position`, else last) with its prompt, flags and events. Answers the "
        "step with its id, and `warnings` when the configuration could move tasks around forever.",
        STEP_PAYLOAD,
        _step,
    ),
    command_tool(
        "update_workflow_step_kandev",
        "updateWorkflowStep",
        "Change a step; only the fields you send change (send false to turn a flag off). `events` replaces "
        "all of the step's events. Answers the step and any loop `warnings`.",
        STEP_PAYLOAD,
        _step,
    ),
    command_tool(
        "delete_workflow_step_kandev",
        "deleteWorkflowStep",
        "Delete a step. Refused while another step's move_to_step leads to it, and while tasks are in it unless "
        "move_tasks_to_step_id names another step of the workflow for them (they move without starting agents).",
        "... on DeleteWorkflowStepPayload { step_id: stepId warnings workflow { id } }",
        _deleted_step,
    ),
    command_tool(
        "reorder_workflow_steps_kandev",
        "reorderWorkflowSteps",
        "Put a workflow's steps in a new order: step_ids lists each of its steps exactly once.",
        f"... on WorkflowPayload {{ warnings workflow {{ id steps {{ {STEP} }} }} }}",
        _reordered,
    ),
)

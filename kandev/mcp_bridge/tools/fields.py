"""GraphQL selections with snake_case aliases, so tool results use the spec's field names as they are."""

from __future__ import annotations

from typing import Any

from kandev.mcp_bridge.catalogue import ToolCall, ToolInputError

TASK = """id title state autopilot origin parent_id: parentId workspace_id: workspaceId
  workflow_id: workflowId workflow_step_id: workflowStepId external_id: externalId
  pending_action: pendingAction block_reason: blockReason created_at: createdAt updated_at: updatedAt
  archived_at: archivedAt"""
STEP = """id name position is_start_step: isStartStep is_final_step: isFinalStep
  auto_advance_requires_signal: autoAdvanceRequiresSignal allow_manual_move: allowManualMove prompt
  workflow_id: workflowId wip_limit: wipLimit events"""
SESSION = """id task_id: taskId state name is_primary: isPrimary agent_profile_id: agentProfileId
  created_at: createdAt ended_at: endedAt"""
ERRORS = "__typename ... on Error { message code fields }"

TASK_ID = {"type": "string", "description": "The task's id.", "minLength": 1}
WORKSPACE_ID = {
    "type": "string",
    "minLength": 1,
    "description": "Workspace id. Default: the workspace of the task this session works on.",
}


async def workspace_of(call: ToolCall) -> str:
    """The workspace_id argument, or the caller's own task workspace."""
    workspace_id = call.arguments.get("workspace_id") or await call.caller_workspace()
    if not workspace_id:
        raise ToolInputError("missing required field: workspace_id (this caller has no task to default to)")
    return workspace_id


def task_id_of(call: ToolCall, key: str = "task_id") -> str:
    """`self` names the caller's own task in a task session."""
    value = call.arguments[key]
    if value == "self":
        if call.caller.task_id is None:
            raise ToolInputError(f"{key} 'self' only works inside a task session")
        return call.caller.task_id
    return value


def pick(data: dict[str, Any], *path: str) -> Any:
    for key in path:
        data = data[key]
    return data

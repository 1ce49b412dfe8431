"""GraphQL selections with snake_case aliases, so tool results use the spec's field names as they are."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolCall
from kandev.graphql.contract import TASK as TASK  # the one task shape, re-exported for the tools

STEP = """id name position is_start_step: isStartStep is_final_step: isFinalStep
  auto_advance_requires_signal: autoAdvanceRequiresSignal allow_manual_move: allowManualMove prompt
  workflow_id: workflowId wip_limit: wipLimit events"""
SESSION = """id task_id: taskId state name is_primary: isPrimary agent_profile_id: agentProfileId
  created_at: createdAt ended_at: endedAt"""

TASK_ID = {"type": "string", "description": "The task's id.", "minLength": 1}
WORKSPACE_ID = {
    "type": "string",
    "minLength": 1,
    "description": "Workspace id. Default: the workspace of the task this session works on.",
}


def workspace_of(call: ToolCall) -> str:
    """The workspace_id argument, or the caller's own task workspace (the principal knows it)."""
    return call.caller.principal.workspace_or_own(call.arguments.get("workspace_id"))


def task_id_of(call: ToolCall, key: str = "task_id") -> str:
    """`self` names the caller's own task in a task session."""
    return call.caller.principal.task_named(call.arguments[key], key)


def pick(data: dict[str, Any], *path: str) -> Any:
    for key in path:
        data = data[key]
    return data

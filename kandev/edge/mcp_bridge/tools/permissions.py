"""Operator tools for agents waiting on a permission (external MCP)."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolCall, ToolSpec, command_tool, obj, register, string
from kandev.edge.mcp_bridge.tools.fields import WORKSPACE_ID, workspace_of

REQUEST = """id task_id: taskId session_id: sessionId pending_id: pendingId title state tool_call: toolCall
  options { option_id: optionId name kind } created_at: createdAt"""


def _pending_variables(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    return {"ws": workspace_of(call), "task": args.get("task_id"), "session": args.get("session_id")}


register(
    ToolSpec(
        name="list_pending_agent_permissions_kandev",
        description="List agents waiting for an operator to allow or deny a tool call, with the options they offer.",
        input_schema=obj(
            {
                "workspace_id": WORKSPACE_ID,
                "task_id": string("Only this task's requests.", minLength=1),
                "session_id": string("Only this session's requests.", minLength=1),
            }
        ),
        document=f"""query($ws: ID!, $task: ID, $session: ID) {{
          pendingPermissions(workspaceId: $ws, taskId: $task, sessionId: $session) {{ {REQUEST} }} }}""",
        variables=_pending_variables,
        result=lambda data: {"permissions": data["pendingPermissions"]},
    ),
    command_tool(
        "resolve_agent_permission_kandev",
        "resolvePermission",
        "Answer a pending permission request with one of its option ids (an allow or a reject option).",
        f"... on ResolvePermissionPayload {{ request {{ {REQUEST} chosen_option_id: chosenOptionId }} }}",
        lambda payload: payload["request"],
    ),
)

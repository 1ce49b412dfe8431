"""Dependency tools: make a task wait on another, or stop it waiting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kandev.edge.mcp_bridge.catalogue import command_tool, register

SELECTION = """task { id state block_reason: blockReason blocked_by: blockedBy { id } }
  depends_on_task_id: dependsOnTaskId changed"""


def _result(flag: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def shape(payload: dict[str, Any]) -> dict[str, Any]:
        task = payload["task"]
        return {
            "task_id": task["id"],
            "depends_on_task_id": payload["depends_on_task_id"],
            flag: payload["changed"],
            "state": task["state"],
            "block_reason": task["block_reason"],
            "blocked_by": [t["id"] for t in task["blocked_by"]],
        }

    return shape


register(
    command_tool(
        "add_task_dependency_kandev",
        "addTaskDependency",
        "Make a task wait on another: it starts only after depends_on_task_id has COMPLETED (a failed "
        "or cancelled one keeps it blocked). Both tasks must be in the same workspace; a link that "
        "would close a cycle is refused with the path. Use it to order work, subtasks to decompose it.",
        f"... on TaskDependencyPayload {{ {SELECTION} }}",
        _result("added"),
    ),
    command_tool(
        "remove_task_dependency_kandev",
        "removeTaskDependency",
        "Stop a task waiting on another. Removing a link that isn't there succeeds (removed: false). "
        "When no open dependency is left, a start recorded for the task fires.",
        f"... on TaskDependencyPayload {{ {SELECTION} }}",
        _result("removed"),
    ),
)

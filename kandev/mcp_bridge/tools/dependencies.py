"""Dependency tools: make a task wait on another, or stop it waiting."""

from __future__ import annotations

from typing import Any

from kandev.mcp_bridge.catalogue import ToolCall, ToolSpec, obj, register, string
from kandev.mcp_bridge.tools.fields import ERRORS

ARGUMENTS = obj(
    {
        "depends_on_task_id": string("The task that must complete first.", minLength=1),
        "task_id": string(
            "The waiting task. In a task session it defaults to, and may only be, your own task.", minLength=1
        ),
    },
    ("depends_on_task_id",),
)
SELECTION = """task { id state block_reason: blockReason blocked_by: blockedBy { id } }
  depends_on_task_id: dependsOnTaskId changed"""


def _variables(call: ToolCall) -> dict[str, Any]:
    value: dict[str, Any] = {"dependsOnTaskId": call.arguments["depends_on_task_id"]}
    task_id = call.arguments.get("task_id")
    if task_id is not None:
        # 'self' is the caller's own task; the domain checks a session only names its own.
        value["taskId"] = call.caller.task_id if task_id == "self" and call.caller.task_id else task_id
    return {"input": value}


def _result(field: str, flag: str):  # noqa: ANN202 - a tiny result factory
    def shape(data: dict[str, Any]) -> dict[str, Any]:
        payload = data[field]
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
    ToolSpec(
        name="add_task_dependency_kandev",
        description=(
            "Make a task wait on another: it starts only after depends_on_task_id has COMPLETED (a failed "
            "or cancelled one keeps it blocked). Both tasks must be in the same workspace; a link that "
            "would close a cycle is refused with the path. Use it to order work, subtasks to decompose it."
        ),
        input_schema=ARGUMENTS,
        document=f"""mutation($input: TaskDependencyInput!) {{ addTaskDependency(input: $input) {{ {ERRORS}
          ... on TaskDependencyPayload {{ {SELECTION} }} }} }}""",
        variables=_variables,
        result=_result("addTaskDependency", "added"),
    ),
    ToolSpec(
        name="remove_task_dependency_kandev",
        description=(
            "Stop a task waiting on another. Removing a link that isn't there succeeds (removed: false). "
            "When no open dependency is left, a start recorded for the task fires."
        ),
        input_schema=ARGUMENTS,
        document=f"""mutation($input: TaskDependencyInput!) {{ removeTaskDependency(input: $input) {{ {ERRORS}
          ... on TaskDependencyPayload {{ {SELECTION} }} }} }}""",
        variables=_variables,
        result=_result("removeTaskDependency", "removed"),
    ),
)

"""Task tools: list, create, update, move, archive, delete."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolCall, ToolSpec, command_tool, obj, register, string
from kandev.edge.mcp_bridge.tools.fields import TASK, WORKSPACE_ID, task_id_of, workspace_of

STATES = [
    "TODO",
    "SCHEDULING",
    "IN_PROGRESS",
    "REVIEW",
    "BLOCKED",
    "WAITING_FOR_INPUT",
    "COMPLETED",
    "FAILED",
    "CANCELLED",
]
TITLE = string("Short task title (at most 200 characters).", minLength=1, maxLength=200)
PROMPT = string("Instructions delivered to the task's agent when it starts.")


def _list_variables(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    return {
        "ws": workspace_of(call),
        "first": args.get("limit", 50),
        "after": args.get("after"),
        "step": args.get("workflow_step_id"),
        "state": args.get("state"),
        "parent": task_id_of(call, "parent_id") if args.get("parent_id") else None,
        "archived": None if args.get("include_archived") else False,
    }


def _list_result(data: dict[str, Any]) -> dict[str, Any]:
    tasks = data["tasks"]
    return {
        "tasks": tasks["nodes"],
        "total_count": tasks["totalCount"],
        "next_cursor": tasks["pageInfo"]["endCursor"] if tasks["pageInfo"]["hasNextPage"] else None,
    }


def _created(payload: dict[str, Any]) -> dict[str, Any]:
    task = dict(payload["task"])
    task["blocked_by"] = [t["id"] for t in task.get("blocked_by", [])]
    flags = {"deduplicated": payload["deduplicated"], "creation_complete": payload["creation_complete"]}
    return {**task, **flags}


def _task(payload: dict[str, Any]) -> dict[str, Any]:
    task: dict[str, Any] = payload["task"]
    return task


TASK_PAYLOAD = f"... on TaskPayload {{ task {{ {TASK} }} }}"


register(
    ToolSpec(
        name="list_tasks_kandev",
        description=(
            "List a workspace's tasks, newest first. Filter by workflow step, state or parent; page with `after` "
            "(the previous answer's next_cursor). Archived tasks are left out unless include_archived is true."
        ),
        input_schema=obj(
            {
                "workspace_id": WORKSPACE_ID,
                "workflow_step_id": string("Only tasks in this step."),
                "state": {"type": "string", "enum": STATES, "description": "Only tasks in this state."},
                "parent_id": string("Only subtasks of this task ('self' for your own task)."),
                "include_archived": {
                    "type": "boolean",
                    "description": "Include archived tasks. Default: false.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 200,
                    "description": "Page size. Default: 50.",
                },
                "after": string("Cursor from a previous page's next_cursor."),
            }
        ),
        document=f"""query($ws: ID!, $first: Int!, $after: String, $step: ID, $state: TaskState, $parent: ID,
          $archived: Boolean) {{ tasks(workspaceId: $ws, first: $first, after: $after, workflowStepId: $step,
          state: $state, parentId: $parent, archived: $archived) {{
          nodes {{ {TASK} }} totalCount pageInfo {{ hasNextPage endCursor }} }} }}""",
        variables=_list_variables,
        result=_list_result,
    ),
    command_tool(
        "create_task_kandev",
        "createTask",
        "Create a task (or a subtask with parent_id; 'self' is your own task). It enters the workflow's start "
        "step; with a prompt its agent starts right away unless start_agent is false, or, with blocked_by, once "
        "every task it waits on has completed. Use a subtask to decompose work and blocked_by to order it. Pass "
        "external_id to make retries safe. To work on an existing GitHub pull request or GitLab merge request, give "
        "its canonical URL as repositories[].repository_url (https://<host>/<owner>/<repo>/pull/<n>, or "
        "https://<host>/<group>/<project>/-/merge_requests/<iid> on the workspace's GitLab): the task starts on its "
        "head commit, pushes go to its source branch and the PR/MR is linked (none is opened).",
        f"""... on CreateTaskPayload {{ deduplicated creation_complete: creationComplete
          task {{ {TASK} blocked_by: blockedBy {{ id }} }} }}""",
        _created,
        # An attachment belongs to one task: an agent's own task's files can't go with a new one. An agent's tasks
        # run where it runs (kandev.domain.tasks.service): it has no executor to choose.
        without=("attachment_ids", "executor_profile_id"),
    ),
    command_tool(
        "update_task_kandev",
        "updateTask",
        "Rename a task or set its state; state COMPLETED moves it to its workflow's final step. While a task waits "
        "on its dependencies, deferred_launch_prompt replaces the prompt its recorded start will send.",
        TASK_PAYLOAD,
        _task,
        # A task's external_id is fixed at creation; an update carrying it leaves the identity as it is.
        ignored={"external_id": {"type": ["string", "null"]}},
        # How its checks are fixed and merged is a person's choice (the task page's).
        without=("fix_failing_checks", "auto_merge"),
    ),
    command_tool(
        "move_task_kandev",
        "moveTask",
        "Move a task to another step of its workflow (entering an auto-start step starts its agent).",
        TASK_PAYLOAD,
        _task,
    ),
    command_tool(
        "archive_task_kandev",
        "archiveTask",
        "Archive a task: it leaves boards and lists but keeps its history and external id. A task already "
        "archived is left as it is and answered with already_archived true.",
        f"... on ArchiveTaskPayload {{ already_archived: alreadyArchived task {{ {TASK} }} }}",
        lambda payload: {**payload["task"], "already_archived": payload["already_archived"]},
    ),
    command_tool(
        "delete_task_kandev",
        "deleteTask",
        "Delete a task. It disappears everywhere and its external id can be used again.",
        "... on TaskPayload { task { id } }",
        lambda payload: {"id": payload["task"]["id"], "deleted": True},
    ),
)

"""Task tools: list, create, update, move, archive, delete."""

from __future__ import annotations

from typing import Any

from kandev.mcp_bridge.catalogue import ToolCall, ToolInputError, ToolSpec, obj, register, string
from kandev.mcp_bridge.tools.fields import ERRORS, TASK, TASK_ID, WORKSPACE_ID, task_id_of, workspace_of

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


async def _list_variables(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    return {
        "ws": await workspace_of(call),
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


async def _create_variables(call: ToolCall) -> dict[str, Any]:
    args = call.arguments
    value: dict[str, Any] = {"workspaceId": await workspace_of(call), "title": args["title"]}
    optional = {
        "prompt": "prompt",
        "workflow_id": "workflowId",
        "workflow_step_id": "workflowStepId",
        "agent_profile_id": "agentProfileId",
        "executor_profile_id": "executorProfileId",
        "start_agent": "startAgent",
        "external_id": "externalId",
        "start_when_unblocked": "startWhenUnblocked",
        "autopilot": "autopilot",
    }
    for key, name in optional.items():
        if key in args:
            value[name] = args[key]
    if args.get("parent_id"):
        value["parentId"] = task_id_of(call, "parent_id")
    if "blocked_by" in args:
        value["blockedBy"] = [_own_task_or(call, task_id) for task_id in args["blocked_by"]]
    if "repositories" in args:
        value["repositories"] = [
            {"repositoryId": r["repository_id"], "baseBranch": r.get("base_branch")} for r in args["repositories"]
        ]
    return {"input": value}


def _own_task_or(call: ToolCall, task_id: str) -> str:
    """'self' names the caller's own task in a task session."""
    if task_id != "self":
        return task_id
    if call.caller.task_id is None:
        raise ToolInputError("blocked_by 'self' only works inside a task session")
    return call.caller.task_id


def _created(data: dict[str, Any]) -> dict[str, Any]:
    payload = data["createTask"]
    task = dict(payload["task"])
    task["blocked_by"] = [t["id"] for t in task.get("blocked_by", [])]
    flags = {"deduplicated": payload["deduplicated"], "creation_complete": payload["creation_complete"]}
    return {**task, **flags}


def _task_of(field: str):  # noqa: ANN202 - a tiny result factory
    return lambda data: data[field]["task"]


def _task_only(call: ToolCall) -> dict[str, Any]:
    return {"id": task_id_of(call)}


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
    ToolSpec(
        name="create_task_kandev",
        description=(
            "Create a task (or a subtask with parent_id; 'self' is your own task). It enters the workflow's "
            "start step; with a prompt its agent starts right away unless start_agent is false, or, with "
            "blocked_by, once every task it waits on has completed. Use a subtask to decompose work and "
            "blocked_by to order it. Pass external_id to make retries safe."
        ),
        input_schema=obj(
            {
                "workspace_id": WORKSPACE_ID,
                "title": TITLE,
                "prompt": PROMPT,
                "parent_id": string("Parent task id, or 'self' for the task this session works on."),
                "workflow_id": string("Workflow to enter. Default: the workspace's default workflow."),
                "workflow_step_id": string("Step to enter. Default: the workflow's start step."),
                "agent_profile_id": string("Agent profile. Default: the workspace default."),
                "executor_profile_id": string("Executor profile. Default: the workspace default."),
                "start_agent": {
                    "type": "boolean",
                    "description": "Start the agent now. Default: true when a prompt is given, else false.",
                },
                "autopilot": {
                    "type": "boolean",
                    "description": (
                        "Start this task in autopilot mode. Default: false. The value is fixed at creation and is "
                        "not inherited by subtasks. The agent does not ask the user directly; it asks its direct "
                        "parent only for critical decisions."
                    ),
                },
                "external_id": string(
                    "Your idempotency key for this create, unique per workspace (case-sensitive, "
                    "trimmed). Retrying with the same value returns the task it made (deduplicated: true) "
                    "instead of a second one. creation_complete: false means that create has not "
                    "finished: ask again later.",
                    maxLength=500,
                ),
                "blocked_by": {
                    "type": "array",
                    "maxItems": 50,
                    "items": string("A task id ('self' for your own task).", minLength=1),
                    "description": (
                        "Tasks this one waits on. Use it to order steps: each step blocked_by the "
                        "previous one, start_agent left at its default. The start is recorded and fires "
                        "once every one of them has COMPLETED; a failed or cancelled one keeps this task "
                        "blocked."
                    ),
                },
                "start_when_unblocked": {
                    "type": "boolean",
                    "description": "With blocked_by: false links without recording any start. Default: true.",
                },
                "repositories": {
                    "type": "array",
                    "description": "Repositories to work in, each with an optional base branch.",
                    "items": obj(
                        {
                            "repository_id": string("Repository id.", minLength=1),
                            "base_branch": string("Base branch."),
                        },
                        ("repository_id",),
                    ),
                },
            },
            ("title",),
        ),
        aliases={"description": "prompt"},
        document=f"""mutation($input: CreateTaskInput!) {{ createTask(input: $input) {{ {ERRORS}
          ... on CreateTaskPayload {{ deduplicated creation_complete: creationComplete
            task {{ {TASK} blocked_by: blockedBy {{ id }} }} }} }} }}""",
        variables=_create_variables,
        result=_created,
    ),
    ToolSpec(
        name="update_task_kandev",
        description=(
            "Rename a task or set its state; state COMPLETED moves it to its workflow's final step. While a "
            "task waits on its dependencies, deferred_launch_prompt replaces the prompt its recorded start "
            "will send."
        ),
        input_schema=obj(
            {
                "task_id": TASK_ID,
                "title": TITLE,
                "state": {"type": "string", "enum": STATES, "description": "New state."},
                "deferred_launch_prompt": string(
                    "New prompt for the start recorded behind blocked_by (agent and executor are kept). "
                    "Refused once the task has started: send new context with message_task_kandev instead.",
                    minLength=1,
                ),
            },
            ("task_id",),
        ),
        # A task's external_id is fixed at creation; an update carrying it leaves the identity as it is.
        ignored={"external_id": {"type": ["string", "null"]}},
        document=f"""mutation($input: UpdateTaskInput!) {{ updateTask(input: $input) {{ {ERRORS}
          ... on TaskPayload {{ task {{ {TASK} }} }} }} }}""",
        variables=lambda call: {
            "input": {
                "taskId": task_id_of(call),
                **({"title": call.arguments["title"]} if "title" in call.arguments else {}),
                **({"state": call.arguments["state"]} if "state" in call.arguments else {}),
                **(
                    {"deferredLaunchPrompt": call.arguments["deferred_launch_prompt"]}
                    if "deferred_launch_prompt" in call.arguments
                    else {}
                ),
            }
        },
        result=_task_of("updateTask"),
    ),
    ToolSpec(
        name="move_task_kandev",
        description="Move a task to another step of its workflow (entering an auto-start step starts its agent).",
        input_schema=obj(
            {"task_id": TASK_ID, "workflow_step_id": string("The step to move to.", minLength=1)},
            ("task_id", "workflow_step_id"),
        ),
        document=f"""mutation($input: MoveTaskInput!) {{ moveTask(input: $input) {{ {ERRORS}
          ... on TaskPayload {{ task {{ {TASK} }} }} }} }}""",
        variables=lambda call: {
            "input": {"taskId": task_id_of(call), "workflowStepId": call.arguments["workflow_step_id"]}
        },
        result=_task_of("moveTask"),
    ),
    ToolSpec(
        name="archive_task_kandev",
        description="Archive a task: it leaves boards and lists but keeps its history and external id.",
        input_schema=obj({"task_id": TASK_ID}, ("task_id",)),
        document=f"""mutation($id: ID!) {{ archiveTask(taskId: $id) {{ {ERRORS}
          ... on TaskPayload {{ task {{ {TASK} }} }} }} }}""",
        variables=_task_only,
        result=_task_of("archiveTask"),
    ),
    ToolSpec(
        name="delete_task_kandev",
        description="Delete a task. It disappears everywhere and its external id can be used again.",
        input_schema=obj({"task_id": TASK_ID}, ("task_id",)),
        document=f"""mutation($id: ID!) {{ deleteTask(taskId: $id) {{ {ERRORS}
          ... on TaskPayload {{ task {{ id }} }} }} }}""",
        variables=_task_only,
        result=lambda data: {"id": data["deleteTask"]["task"]["id"], "deleted": True},
    ),
)

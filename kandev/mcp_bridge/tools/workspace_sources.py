"""Workspace source tools: add repositories and folders to a task, a branch during a turn, a diff base."""

from __future__ import annotations

from typing import Any

from strawberry.utils.str_converters import to_camel_case

from kandev.mcp_bridge.catalogue import ToolCall, ToolSpec, obj, register, string
from kandev.mcp_bridge.tools.fields import ERRORS, TASK, task_id_of

TASK_ID = string(
    "The task. Default: your own task; you may also name your direct child in the same workspace.", minLength=1
)
REPOSITORY_FIELDS = {
    "repository_id": string("A repository saved in the task's workspace.", minLength=1),
    "local_path": string(
        "Absolute path of a git checkout on this machine, under the server's source roots.", minLength=1
    ),
    "remote_url": string(
        "A repository URL to clone (https, ssh, git@host:path, or file:// or an absolute path under the server's "
        "source roots).",
        minLength=1,
    ),
    "base_branch": string("Branch Kandev diffs against. Default: the repository's default branch.", minLength=1),
    "branch": string("An existing branch to work on. Default: a new Kandev branch for the task.", minLength=1),
}
SOURCE = obj(
    {
        "type": {"type": "string", "enum": ["repository", "folder"], "description": "What the source is."},
        **REPOSITORY_FIELDS,
        "path": string("Folder sources: absolute path of the folder, under the server's source roots.", minLength=1),
        "name": string("Folder sources: display name (default: the folder's name).", minLength=1, maxLength=200),
    },
    ("type",),
)
SOURCE_SELECTION = "type id name added path base_branch: baseBranch branch"


def _input(call: ToolCall) -> dict[str, Any]:
    """The tool's arguments as the mutation's input: camelCase, task_id resolved ('self', default)."""
    value = {to_camel_case(key): v for key, v in call.arguments.items() if key not in ("task_id", "sources")}
    if call.arguments.get("task_id"):
        value["taskId"] = task_id_of(call)
    if "sources" in call.arguments:
        value["sources"] = [
            {to_camel_case(key): v.upper() if key == "type" else v for key, v in source.items()}
            for source in call.arguments["sources"]
        ]
    return {"input": value}


def _source(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "type": data["type"].lower()}


def _sources_result(data: dict[str, Any]) -> dict[str, Any]:
    payload = data["addWorkspaceSources"]
    return {
        "task": payload["task"],
        "sources": [_source(s) for s in payload["sources"]],
        "changed": payload["changed"],
        "task_workspace_path": payload["task_workspace_path"],
    }


def _branch_result(data: dict[str, Any]) -> dict[str, Any]:
    payload = data["addBranchToTask"]
    shaped = {
        "task_id": payload["task"]["id"],
        "repository": _source(payload["source"]),
        "agent_cwd_changed": payload["agent_cwd_changed"],
    }
    # Deferred materialization (the task has not launched yet) reports no paths at all.
    if payload["worktree_path"] is not None:
        shaped["worktree_path"] = payload["worktree_path"]
        shaped["task_workspace_path"] = payload["task_workspace_path"]
    return shaped


register(
    ToolSpec(
        name="add_workspace_sources_kandev",
        description=(
            "Add repositories and folders to an idle task in one atomic batch (your direct child's, typically: "
            "your own task is busy while you run; use add_branch_to_task_kandev for that). A repository source "
            "names exactly one of repository_id, local_path or remote_url, with optional base_branch and branch; "
            "a folder source an absolute path and optional name. Repeating the same sources is a no-op; "
            "contradictory duplicates, an active task, or a source that can't be materialized fail the whole batch."
        ),
        input_schema=obj(
            {
                "task_id": TASK_ID,
                "sources": {"type": "array", "items": SOURCE, "minItems": 1, "maxItems": 20},
            },
            ("sources",),
        ),
        document=f"""mutation($input: AddWorkspaceSourcesInput!) {{ addWorkspaceSources(input: $input) {{ {ERRORS}
          ... on AddWorkspaceSourcesPayload {{ task {{ {TASK} }} sources {{ {SOURCE_SELECTION} }} changed
          task_workspace_path: taskWorkspacePath }} }} }}""",
        variables=_input,
        result=_sources_result,
    ),
    ToolSpec(
        name="add_branch_to_task_kandev",
        description=(
            "Worktree executor only: add one repository (or another branch of one) to your task during your "
            "turn. It is checked out as a sibling worktree under the task directory; your working directory "
            "does not change (agent_cwd_changed: false). Returns worktree_path, the new repository's location, "
            "and task_workspace_path, the directory holding all of the task's repositories; both are omitted "
            "when the task has not launched yet (it is checked out at launch)."
        ),
        input_schema=obj({"task_id": TASK_ID, **REPOSITORY_FIELDS}),
        document=f"""mutation($input: AddBranchToTaskInput!) {{ addBranchToTask(input: $input) {{ {ERRORS}
          ... on AddBranchToTaskPayload {{ task {{ id }} source {{ {SOURCE_SELECTION} }}
          worktree_path: worktreePath task_workspace_path: taskWorkspacePath
          agent_cwd_changed: agentCwdChanged }} }} }}""",
        variables=_input,
        result=_branch_result,
    ),
    ToolSpec(
        name="update_repository_base_branch_kandev",
        description=(
            "Change the base branch Kandev diffs a task's repository against. It does not change any pull "
            "request's target branch. repository_id is needed when the task has more than one repository."
        ),
        input_schema=obj(
            {
                "task_id": TASK_ID,
                "repository_id": string("The task's repository; optional when it has only one.", minLength=1),
                "base_branch": string("An existing branch (or ref) of the repository.", minLength=1),
            },
            ("base_branch",),
        ),
        document=f"""mutation($input: UpdateRepositoryBaseBranchInput!) {{
          updateRepositoryBaseBranch(input: $input) {{ {ERRORS} ... on UpdateRepositoryBaseBranchPayload {{
          task {{ id }} repository_id: repositoryId base_branch: baseBranch
          previous_base_branch: previousBaseBranch }} }} }}""",
        variables=_input,
        result=lambda data: {
            "task_id": data["updateRepositoryBaseBranch"]["task"]["id"],
            "repository_id": data["updateRepositoryBaseBranch"]["repository_id"],
            "base_branch": data["updateRepositoryBaseBranch"]["base_branch"],
            "previous_base_branch": data["updateRepositoryBaseBranch"]["previous_base_branch"],
        },
    ),
)

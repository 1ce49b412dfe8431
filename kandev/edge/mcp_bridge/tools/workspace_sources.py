"""Workspace source tools: add repositories and folders to a task, a branch during a turn, a diff base."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import command_tool, register
from kandev.edge.mcp_bridge.tools.fields import TASK

SOURCE_SELECTION = "type id name added path base_branch: baseBranch branch"


def _source(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "type": data["type"].lower()}


def _sources_result(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "task": payload["task"],
        "sources": [_source(s) for s in payload["sources"]],
        "changed": payload["changed"],
        "task_workspace_path": payload["task_workspace_path"],
    }


def _branch_result(payload: dict[str, Any]) -> dict[str, Any]:
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
    command_tool(
        "add_workspace_sources_kandev",
        "addWorkspaceSources",
        "Add repositories and folders to an idle task in one atomic batch (your direct child's, typically: "
        "your own task is busy while you run; use add_branch_to_task_kandev for that). A repository source "
        "names exactly one of repository_id, local_path or remote_url, with optional base_branch and branch; "
        "a folder source an absolute path and optional name. Repeating the same sources is a no-op; "
        "contradictory duplicates, an active task, or a source that can't be materialized fail the whole batch.",
        f"""... on AddWorkspaceSourcesPayload {{ task {{ {TASK} }} sources {{ {SOURCE_SELECTION} }} changed
          task_workspace_path: taskWorkspacePath }}""",
        _sources_result,
    ),
    command_tool(
        "add_branch_to_task_kandev",
        "addBranchToTask",
        "Worktree executor only: add one repository (or another branch of one) to your task during your "
        "turn. It is checked out as a sibling worktree under the task directory; your working directory "
        "does not change (agent_cwd_changed: false). Returns worktree_path, the new repository's location, "
        "and task_workspace_path, the directory holding all of the task's repositories; both are omitted "
        "when the task has not launched yet (it is checked out at launch).",
        f"""... on AddBranchToTaskPayload {{ task {{ id }} source {{ {SOURCE_SELECTION} }}
          worktree_path: worktreePath task_workspace_path: taskWorkspacePath agent_cwd_changed: agentCwdChanged }}""",
        _branch_result,
    ),
    command_tool(
        "update_repository_base_branch_kandev",
        "updateRepositoryBaseBranch",
        "Change the base branch Kandev diffs a task's repository against. It does not change any pull "
        "request's target branch. repository_id is needed when the task has more than one repository.",
        """... on UpdateRepositoryBaseBranchPayload { task { id } repository_id: repositoryId
          base_branch: baseBranch previous_base_branch: previousBaseBranch }""",
        lambda payload: {
            "task_id": payload["task"]["id"],
            "repository_id": payload["repository_id"],
            "base_branch": payload["base_branch"],
            "previous_base_branch": payload["previous_base_branch"],
        },
    ),
)

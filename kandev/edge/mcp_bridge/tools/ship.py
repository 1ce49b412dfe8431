"""Ship tools for the task's own agent: commit its changes, push its branch, open its pull request, under its
profile's permission policy (ASK: a person allows each call first). The task comes from the session, never from an
argument; the commit is authored by the person the workspace belongs to, with the agent named in a trailer."""

from __future__ import annotations

from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolSpec, register
from kandev.graphql.contract import command

_POLICY = (
    " Under your profile's permission policy: with ASK, the call waits until a person allows it (at most 10 "
    "minutes; then call again once allowed)."
)
_ERRORS = (
    " Errors (code, fields.reason): CONFLICT (nothing_to_commit, turn_running, protected_branch, no_remote, "
    "already_open, identity_missing, waiting_for_permission, in_progress), UNPROCESSABLE (push_rejected, stale_lease, "
    "auth, unreachable), PROVIDER_ERROR (the code host refused: duplicate_request, base_missing, ...), "
    "PERMISSION_DENIED (your policy or a person said no)."
)


def _own_task(name: str, mutation: str, description: str, selection: str, shape: Any) -> ToolSpec:
    declared = command(mutation)
    return ToolSpec(
        name=name,
        description=description,
        input_schema=declared.json_schema(without=("task_id",)),
        document=declared.document(selection),
        variables=lambda call: declared.variables({**call.arguments, "task_id": "self"}),
        result=lambda data: shape(data[mutation]),
    )


register(
    _own_task(
        "commit_changes_kandev",
        "commitTaskChanges",
        "Commit your task's uncommitted changes (all, or the files in paths) on the task's branch. Input: "
        "{message (a summary line, then optionally a blank line and a body), repository_id? (only when the task has "
        "several repositories), paths?: [string], amend?: bool}. Returns {sha, message, repository_id}."
        + _POLICY
        + _ERRORS,
        "... on CommitPayload { commit { repository_id: repositoryId sha message } }",
        lambda payload: payload["commit"],
    ),
    _own_task(
        "push_branch_kandev",
        "pushTaskBranch",
        "Push your task's branch to the repository's remote (never its default or a protected branch). Input: "
        "{repository_id?, force_with_lease?: bool (after an amend; only replaces what Kandev pushed last)}. Returns "
        "{branch, sha, changed (false: the remote had it already), repository_id}." + _POLICY + _ERRORS,
        "... on PushPayload { push { repository_id: repositoryId branch sha changed } }",
        lambda payload: payload["push"],
    ),
    _own_task(
        "open_pull_request_kandev",
        "openPullRequest",
        "Open the pull request (GitHub) or merge request (GitLab) of your task's pushed branch, linked to the task: "
        "one per repository. Input: {repository_id?, title? (default: the task's title), body? (Markdown; default: "
        "your last message), draft?: bool, base? (default: the task's base branch)}. Returns {id: the number, url, "
        "state, draft, repository, base_branch}." + _POLICY + _ERRORS,
        "... on PullRequestPayload { pull_request: pullRequest { number url state draft repository "
        "base_branch: baseBranch } }",
        lambda payload: {"id": payload["pull_request"]["number"], **payload["pull_request"]},
    ),
)

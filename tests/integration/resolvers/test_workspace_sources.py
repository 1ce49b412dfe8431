"""Workspace sources through schema.execute: the payloads, the typed errors and the session's profile."""

from __future__ import annotations

from kandev.domain.sessions.tool_profiles import refresh_profile
from kandev.models import Session, Task
from tests.support.git_repos import make_repository

ERRORS = "... on Error { __typename code message } ... on ValidationError { field }"
ADD = f"""mutation($input: AddWorkspaceSourcesInput!) {{ addWorkspaceSources(input: $input) {{ __typename
  ... on AddWorkspaceSourcesPayload {{ changed taskWorkspacePath task {{ id }}
    sources {{ type id name added path baseBranch branch }} }} {ERRORS} }} }}"""
BASE = f"""mutation($input: UpdateRepositoryBaseBranchInput!) {{ updateRepositoryBaseBranch(input: $input) {{
  __typename ... on UpdateRepositoryBaseBranchPayload {{ baseBranch previousBaseBranch }} {ERRORS} }} }}"""
CAPABILITIES = "query($id: ID!) { session(id: $id) { mcpCapabilities mcpTools } }"


async def test_sources_added_through_graphql_show_in_the_payload_and_the_sessions_profile(
    gql, services, workspace_id, tmp_path
):
    created = await gql(
        "mutation($i: CreateTaskInput!) { createTask(input: $i) { ... on CreateTaskPayload { task { id } } } }",
        i={"workspaceId": workspace_id, "title": "T"},
    )
    task_id = created["createTask"]["task"]["id"]
    session_id = (await services.sessions.start_task(task_id, "hi", None)).session.id
    async with services.ctx.unit_of_work() as uow:  # launched: the profile is live
        await refresh_profile(uow, await uow.db.get(Session, session_id), await uow.db.get(Task, task_id))
    hosted = make_repository(tmp_path / "hosted", remote="git@gitlab.example.com:acme/hosted.git", branches=("dev",))
    source = {"type": "REPOSITORY", "localPath": str(hosted)}
    result = (await gql(ADD, input={"taskId": task_id, "sources": [source]}))["addWorkspaceSources"]
    assert result["__typename"] == "AddWorkspaceSourcesPayload" and result["changed"] is True
    [added] = result["sources"]
    assert (added["type"], added["name"], added["baseBranch"], added["path"]) == ("REPOSITORY", "hosted", "main", None)
    session = (await gql(CAPABILITIES, id=session_id))["session"]
    assert "gitlab-mr" in session["mcpCapabilities"] and "user-question" in session["mcpCapabilities"]
    assert "add_workspace_sources_kandev" in session["mcpTools"]
    moved = (await gql(BASE, input={"taskId": task_id, "baseBranch": "dev"}))["updateRepositoryBaseBranch"]
    assert (moved["previousBaseBranch"], moved["baseBranch"]) == ("main", "dev")


async def test_graphql_answers_each_refusal_with_its_typed_error(gql, services, workspace_id, tmp_path):
    created = await gql(
        "mutation($i: CreateTaskInput!) { createTask(input: $i) { ... on CreateTaskPayload { task { id } } } }",
        i={"workspaceId": workspace_id, "title": "T"},
    )
    task_id = created["createTask"]["task"]["id"]
    cases = [
        ({"type": "FOLDER", "path": "relative"}, ("ValidationError", "VALIDATION")),
        ({"type": "REPOSITORY", "repositoryId": "nope"}, ("NotFoundError", "NOT_FOUND")),
        ({"type": "FOLDER", "path": str(tmp_path / "missing")}, ("ConflictError", "UNPROCESSABLE")),
    ]
    for source, expected in cases:
        result = (await gql(ADD, input={"taskId": task_id, "sources": [source]}))["addWorkspaceSources"]
        assert (result["__typename"], result["code"]) == expected, result
    outside = (await gql(ADD, input={"sources": [{"type": "FOLDER", "path": "/tmp"}]}))["addWorkspaceSources"]
    assert outside["__typename"] == "ValidationError" and outside["field"] == "taskId"

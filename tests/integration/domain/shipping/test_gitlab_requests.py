"""Shipping to GitLab: a task's branch pushed with the workspace's GitLab token (as GitLab's `oauth2` user, through
the credential helper) to a served repository, a merge request opened from it on the fake GitLab and linked to
the task, then merged there, which moves the task to its workflow's final step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.factories import settings_for
from tests.support.fake_gitlab import FakeGitLab
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, make_repository
from tests.support.shipping import (
    MERGE,
    OPEN,
    PULL_REQUESTS,
    commit_and_push,
    ref,
    shippable_task,
    task_branch,
    with_identity,
)

TOKEN = "glpat-ship-4b1f9e0c"
PROJECT = "acme/app"


@pytest.fixture
def settings(database_url, redis_url, tmp_path, gitlab):
    return settings_for(database_url, redis_url, tmp_path, gitlab_url=gitlab.url)


@pytest.fixture
def git_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHttpServer]:
    with git_http_server(tmp_path / "git-http", read_tokens=set(), push_tokens={TOKEN}) as server:
        monkeypatch.setenv("GIT_SSL_CAINFO", server.ca_file)
        yield server


async def pushed_task(
    services: Any, gql: Any, workspace_id: str, tmp_path: Path, gitlab: FakeGitLab, server: GitHttpServer
) -> tuple[str, str, str, Path]:
    """A workspace connected to the fake GitLab, acme/app served and backing it, a task with one commit pushed:
    (task id, branch, head, bare repository)."""
    await with_identity(gql)
    gitlab.tokens[TOKEN] = "tanuki"
    gitlab.add_project(PROJECT)
    await services.gitlab.connect(workspace_id, TOKEN)
    work = make_repository(tmp_path / "app")
    bare = bare_from(work, server, PROJECT)
    gitlab.git_roots[PROJECT] = bare
    git(work, "remote", "add", "origin", server.repository_url(PROJECT))
    task_id, folder = await shippable_task(services, workspace_id, work, title="Add the greeting")
    head = await commit_and_push(gql, task_id, folder)
    return task_id, await task_branch(services, task_id), head, bare


async def test_a_task_branch_is_pushed_to_gitlab_opened_as_a_merge_request_and_merged_to_done(
    services, gql, workspace_id, tmp_path, gitlab, git_server
):
    task_id, branch, head, bare = await pushed_task(services, gql, workspace_id, tmp_path, gitlab, git_server)
    assert ref(bare, f"refs/heads/{branch}") == head
    assert {token for method, _, token in git_server.requests if method == "POST"} == {TOKEN}

    opened = (await gql(OPEN, input={"taskId": task_id, "body": "What changed"}))["openPullRequest"]
    assert opened["__typename"] == "PullRequestPayload", opened
    mr = opened["pullRequest"]
    assert (mr["title"], mr["state"], mr["headBranch"], mr["baseBranch"], mr["repository"]) == (
        "Add the greeting",
        "open",
        branch,
        "main",
        PROJECT,
    )
    created = [body for method, path, body in gitlab.writes if method == "POST" and path.endswith("/merge_requests")]
    assert [(b["source_branch"], b["target_branch"], b["description"]) for b in created] == [
        (branch, "main", "What changed")
    ]
    [shown] = (await gql(PULL_REQUESTS, id=task_id))["task"]["pullRequests"]
    assert (shown["number"], shown["headSha"]) == (mr["number"], head)

    again = (await gql(OPEN, input={"taskId": task_id}))["openPullRequest"]
    assert (again["code"], again["fields"]["reason"]) == ("CONFLICT", "already_open")

    merged = (await gql(MERGE, input={"taskId": task_id, "method": "SQUASH"}))["mergePullRequest"]
    assert merged["__typename"] == "PullRequestPayload", merged
    assert merged["pullRequest"]["state"] == "merged"
    [merge] = [body for method, path, body in gitlab.writes if path.endswith(f"/{mr['number']}/merge")]
    assert (merge.get("sha"), merge.get("squash")) == (head, True)
    assert gitlab.merge_requests[PROJECT][mr["number"]].state == "merged"
    task = (await gql(PULL_REQUESTS, id=task_id))["task"]
    assert (task["state"], task["workflowStep"]["isFinalStep"]) == ("COMPLETED", True)


async def test_a_gitlab_merge_request_gitlab_will_not_merge_is_refused_and_the_task_stays(
    services, gql, workspace_id, tmp_path, gitlab, git_server
):
    task_id, _, _, _ = await pushed_task(services, gql, workspace_id, tmp_path, gitlab, git_server)
    number = (await gql(OPEN, input={"taskId": task_id}))["openPullRequest"]["pullRequest"]["number"]
    gitlab.merge_requests[PROJECT][number].merge_status = "conflict"
    refused = (await gql(MERGE, input={"taskId": task_id, "method": "MERGE"}))["mergePullRequest"]
    assert (refused["code"], refused["fields"]["reason"]) == ("PROVIDER_ERROR", "not_mergeable"), refused
    assert not [path for method, path, _ in gitlab.writes if path.endswith("/merge")]
    task = (await gql(PULL_REQUESTS, id=task_id))["task"]
    assert task["state"] != "COMPLETED" and task["pullRequests"][0]["mergeable"] == "conflicting"

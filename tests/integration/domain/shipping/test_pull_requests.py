"""openPullRequest and mergePullRequest on the fake GitHub (backed by a real bare repository served over TLS): one
request per repository, linked to the task; the code host sees one create for one click, whatever the click's
fate (a double click, a timeout); every refusal (duplicate, base deleted, 5xx, not mergeable, merged or closed
outside Kandev, new commits since shown) is typed and leaves the task as it was; a merge moves the task to its
workflow's final step and removes its worktree, its branch kept."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import select

from kandev.adapters.github.client import GitHubClient
from kandev.domain.github import api as github_api_module
from kandev.models import Task, TaskPullRequest
from tests.support.fake_github import Fault
from tests.support.git_repos import git, make_repository
from tests.support.shipping import REPO, TOKEN, merge_pr, open_pr, pull_requests, pushed_task, ref, shippable_task


async def test_a_pull_request_is_opened_from_the_tasks_branch_linked_and_shown_on_the_task(
    services, gql, workspace_id, tmp_path, github, git_server, db
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    opened = await open_pr(gql, ship.task_id, body="What changed")
    assert opened["__typename"] == "PullRequestPayload", opened
    pr = opened["pullRequest"]
    assert (pr["title"], pr["state"], pr["headBranch"], pr["baseBranch"], pr["repository"]) == (
        "Add the greeting",
        "open",
        ship.branch,
        "main",
        REPO,
    )
    assert [c["head"] for c in github.created] == [ship.branch]
    [shown] = (await pull_requests(gql, ship.task_id))["pullRequests"]
    assert (shown["number"], shown["headSha"], shown["mergeable"]) == (pr["number"], ship.head, "mergeable")
    async with db.read() as session:
        links = list(await session.scalars(select(TaskPullRequest).where(TaskPullRequest.task_id == ship.task_id)))
    assert [(link.repository, link.number) for link in links] == [(REPO, pr["number"])]
    again = await open_pr(gql, ship.task_id)
    assert (again["code"], again["fields"]["reason"]) == ("CONFLICT", "already_open")
    assert len(github.created) == 1


CODE_HOSTS = "query($id: ID!) { task(id: $id) { repositories { name codeHost } } }"


async def test_the_task_names_the_code_host_its_repository_is_on_and_none_for_one_without(
    services, gql, workspace_id, tmp_path, github, git_server
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    hosted = (await gql(CODE_HOSTS, id=ship.task_id))["task"]["repositories"]
    assert [r["codeHost"] for r in hosted] == ["github"]
    local_id, _ = await shippable_task(services, workspace_id, make_repository(tmp_path / "local"), title="Local")
    local = (await gql(CODE_HOSTS, id=local_id))["task"]["repositories"]
    assert [r["codeHost"] for r in local] == [None]


async def test_a_double_click_opens_one_pull_request(services, gql, workspace_id, tmp_path, github, git_server):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    github.faults.append(Fault("POST", "/pulls", delay=0.5, effect=True))
    first, second = await asyncio.gather(open_pr(gql, ship.task_id), open_pr(gql, ship.task_id))
    outcomes = sorted([first["__typename"], second.get("fields", {}).get("reason", second["__typename"])])
    assert outcomes in (["PullRequestPayload", "in_progress"], ["PullRequestPayload", "already_open"]), (first, second)
    assert len(github.created) == 1


@pytest.fixture
def impatient_github() -> Iterator[None]:
    """GitHub calls give up after a second (the fake answers later than that)."""
    kept = list(github_api_module._connect)
    github_api_module.use_github_api(lambda base, token: GitHubClient(base, token, timeout=1.0))
    try:
        yield
    finally:
        github_api_module._connect[:] = kept


async def test_a_timed_out_open_is_checked_before_trying_again_so_github_sees_one_create(
    services, gql, workspace_id, tmp_path, github, git_server, impatient_github
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    github.faults.append(Fault("POST", "/pulls", delay=2.0))  # made, but answered too late
    lost = await open_pr(gql, ship.task_id)
    assert (lost["code"], lost["fields"]["reason"]) == ("PROVIDER_ERROR", "unreachable"), lost
    assert (await pull_requests(gql, ship.task_id))["pullRequests"] == []
    async with asyncio.timeout(10):
        while not github.pulls.get(REPO):
            await asyncio.sleep(0.05)
    taken_up = await open_pr(gql, ship.task_id)
    assert taken_up["__typename"] == "PullRequestPayload", taken_up
    assert len(github.created) == 1
    assert taken_up["pullRequest"]["number"] == next(iter(github.pulls[REPO]))


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (
            Fault(
                "POST",
                "/pulls",
                422,
                {"message": "Validation Failed", "errors": [{"message": "A pull request already exists for acme:x."}]},
            ),
            "duplicate_request",
        ),
        (Fault("POST", "/pulls", 502), "unreachable"),
        (Fault("POST", "/pulls", 401, {"message": "Bad credentials"}), "auth"),
    ],
)
async def test_a_refused_open_is_typed_and_records_nothing(
    services, gql, workspace_id, tmp_path, github, git_server, fault, reason
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    github.faults.append(fault)
    refused = await open_pr(gql, ship.task_id)
    assert (refused["code"], refused["fields"]["reason"]) == ("PROVIDER_ERROR", reason), refused
    assert TOKEN not in refused["message"]
    assert (await pull_requests(gql, ship.task_id))["pullRequests"] == []


async def test_a_base_deleted_upstream_is_named(services, gql, workspace_id, tmp_path, github, git_server):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    refused = await open_pr(gql, ship.task_id, base="release-1")
    assert (refused["code"], refused["fields"]["reason"]) == ("PROVIDER_ERROR", "base_missing"), refused
    assert "release-1" in refused["message"]


async def test_a_merge_moves_the_task_to_done_and_removes_its_worktree_keeping_the_branch(
    services, gql, workspace_id, tmp_path, github, git_server, db
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    number = (await open_pr(gql, ship.task_id))["pullRequest"]["number"]
    merged = await merge_pr(gql, ship.task_id, "SQUASH")
    assert merged["__typename"] == "PullRequestPayload", merged
    assert merged["pullRequest"]["state"] == "merged"
    assert github.merges == [{"merge_method": "squash", "sha": ship.head}]
    assert ref(ship.bare, "refs/heads/main") == ship.head  # a fast-forward on the served repository
    task = await pull_requests(gql, ship.task_id)
    assert (task["state"], task["workflowStep"]["isFinalStep"]) == ("COMPLETED", True)
    assert task["pullRequests"][0]["number"] == number
    async with asyncio.timeout(10):
        while ship.folder.exists():
            await asyncio.sleep(0.05)
    async with db.read() as session:
        assert (await session.get(Task, ship.task_id)).worktree_reclaimed_at is not None
    assert ref(tmp_path / "app", f"refs/heads/{ship.branch}") == ship.head


async def test_a_pull_request_github_will_not_merge_is_refused_with_its_reason(
    services, gql, workspace_id, tmp_path, github, git_server
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    number = (await open_pr(gql, ship.task_id))["pullRequest"]["number"]
    github.update_pr(REPO, number, mergeable=False)
    refused = await merge_pr(gql, ship.task_id)
    assert (refused["code"], refused["fields"]["reason"]) == ("PROVIDER_ERROR", "not_mergeable"), refused
    assert "conflicts" in refused["message"]
    assert github.merges == []
    task = await pull_requests(gql, ship.task_id)
    assert task["state"] != "COMPLETED" and task["pullRequests"][0]["mergeable"] == "conflicting"


async def test_a_pull_request_merged_or_closed_outside_kandev_is_reported_not_merged_again(
    services, gql, workspace_id, tmp_path, github, git_server
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    number = (await open_pr(gql, ship.task_id))["pullRequest"]["number"]
    github.update_pr(REPO, number, state="closed")
    closed = await merge_pr(gql, ship.task_id)
    assert (closed["code"], closed["fields"]["reason"]) == ("PROVIDER_ERROR", "closed")
    github.merge_pr(REPO, number)
    merged = await merge_pr(gql, ship.task_id)
    assert (merged["code"], merged["fields"]["reason"]) == ("PROVIDER_ERROR", "merged")
    assert github.merges == []
    # A merge is a merge: the task is done all the same.
    task = await pull_requests(gql, ship.task_id)
    assert (task["state"], task["pullRequests"][0]["state"]) == ("COMPLETED", "merged")


async def test_new_commits_since_the_card_was_shown_refuse_the_merge(
    services, gql, workspace_id, tmp_path, github, git_server
):
    ship = await pushed_task(services, gql, workspace_id, tmp_path, github, git_server)
    await open_pr(gql, ship.task_id)
    # Someone pushes to the branch on the code host, not through Kandev (a push through Kandev moves what it shows).
    tree = git(ship.bare, "rev-parse", f"{ship.head}^{{tree}}")
    env = ("-c", "user.name=Other", "-c", "user.email=other@example.com")
    outside = git(ship.bare, *env, "commit-tree", tree, "-p", ship.head, "-m", "Pushed elsewhere")
    git(ship.bare, "update-ref", f"refs/heads/{ship.branch}", outside, ship.head)
    refused = await merge_pr(gql, ship.task_id)
    assert (refused["code"], refused["fields"]["reason"]) == ("PROVIDER_ERROR", "head_moved"), refused
    assert github.merges == []

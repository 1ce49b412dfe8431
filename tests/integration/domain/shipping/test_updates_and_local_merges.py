"""updateTaskBranch brings the base's new commits in (merge or rebase; conflicts left UNMERGED in the worktree for
Task.changes, the branch itself unmoved), and mergeTaskBranch merges a repository without a code host locally: on
its local bare remote, or in the repository when the base is not checked out; a conflict refuses it unchanged."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.support.git_repos import git, make_repository
from tests.support.shipping import (
    COMMIT,
    MERGE_LOCAL,
    PULL_REQUESTS,
    UPDATE,
    bare_remote,
    ref,
    shippable_task,
    task_branch,
    with_identity,
)

CHANGES = """query($id: ID!) { task(id: $id) { changes { repositories { files { nodes { path status } } } } } }"""


async def commit(gql: Any, task_id: str, message: str) -> str:
    found = (await gql(COMMIT, input={"taskId": task_id, "message": message}))["commitTaskChanges"]
    assert found["__typename"] == "CommitPayload", found
    return str(found["commit"]["sha"])


async def update(gql: Any, task_id: str, strategy: str) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(UPDATE, input={"taskId": task_id, "strategy": strategy}))["updateTaskBranch"]
    return found


def advance(repository: Path, name: str, text: str, branch: str = "main") -> str:
    """A new commit on `branch` of a non-bare `repository` (checked out there)."""
    git(repository, "checkout", "-q", branch)
    (repository / name).write_text(text)
    git(repository, "add", name)
    git(repository, "commit", "-q", "-m", f"upstream {name}")
    return ref(repository, "HEAD") or ""


async def test_updating_by_merge_brings_the_bases_new_commits_in(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "mine.txt").write_text("mine\n")
    mine = await commit(gql, task_id, "Mine")
    upstream = advance(repository, "theirs.txt", "theirs\n")
    found = await update(gql, task_id, "MERGE")
    assert (found["status"], found["conflicts"]) == ("UPDATED", []), found
    assert git(folder, "log", "-1", "--format=%P").split() == [mine, upstream]
    assert (folder / "theirs.txt").read_text() == "theirs\n"
    assert (await update(gql, task_id, "MERGE"))["status"] == "UP_TO_DATE"


async def test_updating_by_rebase_replays_the_tasks_commits_on_the_base(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "mine.txt").write_text("mine\n")
    await commit(gql, task_id, "Mine")
    upstream = advance(repository, "theirs.txt", "theirs\n")
    found = await update(gql, task_id, "REBASE")
    assert found["status"] == "UPDATED", found
    assert git(folder, "log", "-1", "--format=%P") == upstream
    assert git(folder, "log", "-1", "--format=%s|%an") == "Mine|Ada Lovelace"


async def test_conflicts_are_left_unmerged_for_the_changes_panel_and_the_branch_does_not_move(
    services, gql, workspace_id, tmp_path
):
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "README").write_text("mine\n")
    mine = await commit(gql, task_id, "Mine")
    advance(repository, "README", "theirs\n")
    branch = await task_branch(services, task_id)
    found = await update(gql, task_id, "MERGE")
    assert (found["status"], found["conflicts"], found["head"]) == ("CONFLICTS", ["README"], mine), found
    assert ref(repository, f"refs/heads/{branch}") == mine
    [repo] = (await gql(CHANGES, id=task_id))["task"]["changes"]["repositories"]
    assert {f["path"]: f["status"] for f in repo["files"]["nodes"]}["README"] == "UNMERGED"
    again = await update(gql, task_id, "MERGE")
    assert (again["code"], again["fields"]["reason"]) == ("CONFLICT", "in_progress")
    refused = await gql(COMMIT, input={"taskId": task_id, "message": "x"})
    assert refused["commitTaskChanges"]["fields"]["reason"] == "in_progress"


async def test_uncommitted_work_keeps_the_branch_from_being_updated(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "README").write_text("edited\n")
    advance(repository, "theirs.txt", "theirs\n")
    refused = await update(gql, task_id, "MERGE")
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "uncommitted_changes")
    assert (folder / "README").read_text() == "edited\n"


async def test_updating_fetches_the_base_from_the_remote(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "mine.txt").write_text("mine\n")
    await commit(gql, task_id, "Mine")
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(bare), str(other)], check=True)
    git(other, "config", "user.email", "o@x")
    git(other, "config", "user.name", "O")
    upstream = advance(other, "remote.txt", "remote\n")
    git(other, "push", "-q", "origin", "main")
    found = await update(gql, task_id, "MERGE")
    assert found["status"] == "UPDATED", found
    assert upstream in git(folder, "log", "-1", "--format=%P").split()
    assert ref(work, "refs/remotes/origin/main") == upstream


async def test_a_repository_without_a_code_host_merges_into_its_local_remote(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "mine.txt").write_text("mine\n")
    mine = await commit(gql, task_id, "Mine")
    found = (await gql(MERGE_LOCAL, input={"taskId": task_id}))["mergeTaskBranch"]
    assert found == {"__typename": "MergeTaskBranchPayload", "sha": mine}  # a fast-forward
    assert ref(bare, "refs/heads/main") == mine
    task = (await gql(PULL_REQUESTS, id=task_id))["task"]
    assert (task["state"], task["workflowStep"]["isFinalStep"]) == ("COMPLETED", True)


async def test_a_local_merge_that_conflicts_changes_nothing(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "README").write_text("mine\n")
    await commit(gql, task_id, "Mine")
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(bare), str(other)], check=True)
    git(other, "config", "user.email", "o@x")
    git(other, "config", "user.name", "O")
    theirs = advance(other, "README", "theirs\n")
    git(other, "push", "-q", "origin", "main")
    refused = (await gql(MERGE_LOCAL, input={"taskId": task_id}))["mergeTaskBranch"]
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "merge_conflict"), refused
    assert ref(bare, "refs/heads/main") == theirs
    assert (await gql(PULL_REQUESTS, id=task_id))["task"]["state"] != "COMPLETED"


async def test_a_checked_out_base_is_not_moved_under_its_owner(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    repository = make_repository(tmp_path / "repo")
    before = ref(repository, "refs/heads/main")
    task_id, folder = await shippable_task(services, workspace_id, repository)
    (folder / "mine.txt").write_text("mine\n")
    await commit(gql, task_id, "Mine")
    refused = (await gql(MERGE_LOCAL, input={"taskId": task_id}))["mergeTaskBranch"]
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "base_checked_out"), refused
    assert ref(repository, "refs/heads/main") == before
    git(repository, "checkout", "-q", "--detach")
    merged = (await gql(MERGE_LOCAL, input={"taskId": task_id}))["mergeTaskBranch"]
    assert merged["__typename"] == "MergeTaskBranchPayload"
    assert ref(repository, "refs/heads/main") == merged["sha"]

"""Tasks ready to ship, for the shipping tests: a person with a commit identity, a task whose worktree exists (as a
turn's launch makes it) on a repository with (or without) a remote, and the GraphQL calls the Ship panel makes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from sqlalchemy import select

from kandev.models import TaskRepository
from tests.support.changes import materialized_task
from tests.support.git_repos import git, make_repository

NAME, EMAIL = "Ada Lovelace", "ada@example.com"
COMMIT = """mutation($input: CommitTaskChangesInput!) { commitTaskChanges(input: $input) {
  __typename ... on CommitPayload { commit { sha message repositoryId } }
  ... on Error { code message fields } } }"""
PUSH = """mutation($input: PushTaskBranchInput!) { pushTaskBranch(input: $input) {
  __typename ... on PushPayload { push { branch sha changed } } ... on Error { code message fields } } }"""
OPEN = """mutation($input: OpenPullRequestInput!) { openPullRequest(input: $input) {
  __typename ... on PullRequestPayload { pullRequest { number url state draft title body repository repositoryId
  headBranch baseBranch mergeable reviewDecision checks { name status conclusion url } } }
  ... on Error { code message fields } } }"""
MERGE = """mutation($input: MergePullRequestInput!) { mergePullRequest(input: $input) {
  __typename ... on PullRequestPayload { pullRequest { number state mergedAt } }
  ... on Error { code message fields } } }"""
MERGE_LOCAL = """mutation($input: MergeTaskBranchInput!) { mergeTaskBranch(input: $input) {
  __typename ... on MergeTaskBranchPayload { sha } ... on Error { code message fields } } }"""
UPDATE = """mutation($input: UpdateTaskBranchInput!) { updateTaskBranch(input: $input) {
  __typename ... on UpdateTaskBranchPayload { status head conflicts } ... on Error { code message fields } } }"""
IDENTITY = """mutation($name: String!, $email: String!) { updateAccount(input: { gitName: $name, gitEmail: $email }) {
  __typename ... on AccountPayload { account { login gitIdentity { name email } } } ... on Error { code fields } } }"""
PULL_REQUESTS = """query($id: ID!) { task(id: $id) { state workflowStep { name isFinalStep } autoMerge
  fixFailingChecks { enabled maxRounds stopped }
  checkFixRounds { round checkName checkNames state promptId headSha }
  pullRequests { number state url mergeable mergeableReason reviewDecision headSha reviewComments
  checks { name status conclusion url } } } }"""


async def with_identity(gql: Any) -> None:
    found = (await gql(IDENTITY, name=NAME, email=EMAIL))["updateAccount"]
    assert found["__typename"] == "AccountPayload", found


def bare_remote(tmp_path: Path, name: str = "origin.git") -> tuple[Path, Path]:
    """A work repository on main and a bare clone of it as its `origin` (a local remote under the temp dir)."""
    work = make_repository(tmp_path / "work-repo")
    bare = tmp_path / name
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    git(work, "remote", "add", "origin", str(bare))
    return work, bare


async def shippable_task(
    services: Any, workspace_id: str, repository: Path, title: str = "Ship it"
) -> tuple[str, Path]:
    """A task on `repository` with its worktree made (its agent's launch would make it)."""
    return await materialized_task(services, workspace_id, repository, title)


async def commit_and_push(gql: Any, task_id: str, folder: Path) -> str:
    """A new file in the task's worktree committed and pushed through the Ship panel's calls: the commit's sha."""
    (folder / "hello.txt").write_text("hello\n")
    done = (await gql(COMMIT, input={"taskId": task_id, "message": "Greet"}))["commitTaskChanges"]
    assert done["__typename"] == "CommitPayload", done
    pushed = (await gql(PUSH, input={"taskId": task_id}))["pushTaskBranch"]
    assert pushed["__typename"] == "PushPayload", pushed
    sha: str = done["commit"]["sha"]
    return sha


async def task_branch(services: Any, task_id: str) -> str:
    async with services.ctx.read() as db:
        branch = await db.scalar(select(TaskRepository.branch).where(TaskRepository.task_id == task_id))
    assert branch
    return branch


def ref(repository: Path, name: str) -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", name], cwd=repository, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None


def show(repository: Path, revision: str, fmt: str) -> str:
    return git(repository, "log", "-1", f"--format={fmt}", revision)

"""What the new-task form needs: a repository's branches (its default first) and the workspace remembering the
caller's last choice of repositories, base branches and profiles (written by their createTask)."""

from __future__ import annotations

import subprocess

from kandev.domain.context import Principal
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models.enums import TaskOrigin
from tests.conftest import GraphQLCaller
from tests.support.git_repos import git, make_repository

BRANCHES = """query($w: ID!, $startsWith: String, $first: Int) { repositories(workspaceId: $w) {
  name defaultBranch branches(startsWith: $startsWith, first: $first) } }"""
CHOICE = """query { workspaces { id lastTaskChoice { executorProfileId agentProfileId
  repositories { repositoryId baseBranch } } } }"""
CREATE = """mutation($i: CreateTaskInput!) { createTask(input: $i) { __typename
  ... on CreateTaskPayload { task { id } } } }"""


async def test_branches_come_default_first_with_the_remotes_and_filter_by_prefix(gql, services, workspace_id, tmp_path):
    upstream = make_repository(tmp_path / "upstream", branches=("release-1",))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(upstream), str(clone)], check=True)
    git(clone, "branch", "feature-a")
    git(clone, "branch", "feature-b")
    await services.repositories.create(workspace_id, "app", str(clone))
    [repository] = (await gql(BRANCHES, w=workspace_id))["repositories"]
    assert repository["defaultBranch"] == "main" and repository["branches"][0] == "main"
    assert set(repository["branches"]) == {"main", "feature-a", "feature-b", "release-1"}
    assert len(repository["branches"]) == 4  # origin/main is main
    [filtered] = (await gql(BRANCHES, w=workspace_id, startsWith="feature"))["repositories"]
    assert sorted(filtered["branches"]) == ["feature-a", "feature-b"]
    [one] = (await gql(BRANCHES, w=workspace_id, first=1))["repositories"]
    assert one["branches"] == ["main"]
    refused = await gql.raw(BRANCHES, w=workspace_id, first=0)
    assert refused.errors and refused.errors[0].extensions["code"] == "VALIDATION"


async def test_a_persons_create_is_remembered_as_their_next_choice(
    gql: GraphQLCaller, services, workspace_id, tmp_path
):
    repository = await services.repositories.create(
        workspace_id, "app", str(make_repository(tmp_path / "app", branches=("dev",)))
    )
    executor = (await services.executor_profiles.list(workspace_id))[0]
    [before] = (await gql(CHOICE))["workspaces"]
    assert before["lastTaskChoice"] is None

    created = await gql(
        CREATE,
        i={
            "workspaceId": workspace_id,
            "title": "One",
            "repositories": [{"repositoryId": repository.id, "baseBranch": "dev"}],
            "executorProfileId": executor.id,
        },
    )
    [after] = (await gql(CHOICE))["workspaces"]
    assert after["lastTaskChoice"] == {
        "executorProfileId": executor.id,
        "agentProfileId": None,
        "repositories": [{"repositoryId": repository.id, "baseBranch": "dev"}],
    }

    # An agent's subtask is not the person's choice.
    task_id = created["createTask"]["task"]["id"]
    agent = Services(
        services.ctx.with_principal(
            Principal(
                user_id=services.principal.user_id,
                login="agent",
                session_id="s1",
                task_id=task_id,
                workspace_id=workspace_id,
            )
        )
    )
    await agent.tasks.create(
        CreateTask(workspace_id=workspace_id, title="Sub", parent_id=task_id, origin=TaskOrigin.AGENT)
    )
    [still] = (await gql(CHOICE))["workspaces"]
    assert still["lastTaskChoice"] == after["lastTaskChoice"]
    # Nor is a person's subtask: its form chooses no repositories.
    await gql(CREATE, i={"workspaceId": workspace_id, "title": "Person's sub", "parentId": task_id})
    [kept] = (await gql(CHOICE))["workspaces"]
    assert kept["lastTaskChoice"] == after["lastTaskChoice"]

    await gql(CREATE, i={"workspaceId": workspace_id, "title": "Two"})
    [latest] = (await gql(CHOICE))["workspaces"]
    assert latest["lastTaskChoice"] == {"executorProfileId": None, "agentProfileId": None, "repositories": []}


async def test_each_person_has_their_own_last_choice(services, bob, bob_workspace, tmp_path):
    repository = await bob.repositories.create(bob_workspace, "bobs", str(make_repository(tmp_path / "bobs")))
    await GraphQLCaller(bob)(
        CREATE, i={"workspaceId": bob_workspace, "title": "Bob's", "repositories": [{"repositoryId": repository.id}]}
    )
    bobs = {w["id"]: w for w in (await GraphQLCaller(bob)(CHOICE))["workspaces"]}
    assert bobs[bob_workspace]["lastTaskChoice"]["repositories"] == [
        {"repositoryId": repository.id, "baseBranch": None}
    ]
    mine = {w["id"]: w for w in (await GraphQLCaller(services)(CHOICE))["workspaces"]}
    assert mine[bob_workspace]["lastTaskChoice"] is None  # the local user sees the workspace, chose nothing there

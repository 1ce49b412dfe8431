"""Task.changes over GraphQL: per repository against its base, file by file, with hunks, for those who can read
the task only."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import GraphQLCaller
from tests.support.changes import materialized_task
from tests.support.factories import new_task
from tests.support.git_repos import git, make_repository
from tests.support.users import services_as

CHANGES = """query($id: ID!, $scope: ChangeScope, $first: Int, $after: String, $paths: [String!]) {
  task(id: $id) { changes(scope: $scope, paths: $paths) { scope reason repositories {
    repositoryId name branch baseBranch baseCommit headCommit ahead behind note
    stats { files additions deletions }
    commits { sha message author authoredAt }
    files(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor }
      nodes { path oldPath status additions deletions binary tooLarge reviewed untracked
        hunks { header oldStart oldLines newStart newLines lines { kind oldNumber newNumber text } } } } } } } }"""


async def test_a_task_without_repositories_has_an_empty_list_and_a_reason(gql, services, workspace_id):
    task_id = await new_task(services, workspace_id)
    changes = (await gql(CHANGES, id=task_id))["task"]["changes"]
    assert changes["repositories"] == [] and changes["reason"] == "the task works in no repository"


async def test_a_task_not_started_lists_its_repository_with_a_note(gql, services, workspace_id, tmp_path: Path):
    repository = await services.repositories.create(workspace_id, "repo", str(make_repository(tmp_path / "repo")))
    task_id = await new_task(services, workspace_id, repositories=[repository.id])
    [only] = (await gql(CHANGES, id=task_id))["task"]["changes"]["repositories"]
    assert only["name"] == "repo" and only["branch"] is None and only["baseBranch"] == "main"
    assert "not created yet" in only["note"] and only["files"]["totalCount"] == 0


async def test_changes_list_files_with_counts_hunks_commits_and_base(
    gql: GraphQLCaller, services, workspace_id, tmp_path
):
    repository = make_repository(tmp_path / "repo")
    task_id, folder = await materialized_task(services, workspace_id, repository)
    (folder / "README").write_text("hello\nworld\n")
    (folder / "committed.txt").write_text("one\n")
    git(folder, "add", "committed.txt")
    git(folder, "commit", "-q", "-m", "Add committed.txt")
    (folder / "new.txt").write_text("a\nb\n")

    [repo] = (await gql(CHANGES, id=task_id))["task"]["changes"]["repositories"]

    assert repo["branch"].startswith("kandev/") and repo["note"] is None
    assert repo["baseCommit"] == git(repository, "rev-parse", "main")
    assert repo["headCommit"] == git(folder, "rev-parse", "HEAD")
    assert (repo["ahead"], repo["behind"]) == (1, 0)
    assert [c["message"] for c in repo["commits"]] == ["Add committed.txt"]
    assert repo["stats"] == {"files": 3, "additions": 4, "deletions": 0}
    files = {f["path"]: f for f in repo["files"]["nodes"]}
    assert {p: (f["status"], f["additions"], f["deletions"], f["untracked"]) for p, f in files.items()} == {
        "README": ("MODIFIED", 1, 0, False),
        "committed.txt": ("ADDED", 1, 0, False),
        "new.txt": ("ADDED", 2, 0, True),
    }
    [hunk] = files["README"]["hunks"]
    assert [(x["kind"], x["oldNumber"], x["newNumber"], x["text"]) for x in hunk["lines"]] == [
        ("CONTEXT", 1, 1, "hello"),
        ("ADD", None, 2, "world"),
    ]
    assert all(not f["reviewed"] for f in files.values())


async def test_files_come_a_page_at_a_time_by_path(gql, services, workspace_id, tmp_path):
    task_id, folder = await materialized_task(services, workspace_id, make_repository(tmp_path / "repo"))
    for name in ("c.txt", "a.txt", "b.txt"):
        (folder / name).write_text(name)
    first = (await gql(CHANGES, id=task_id, first=2))["task"]["changes"]["repositories"][0]["files"]
    assert [f["path"] for f in first["nodes"]] == ["a.txt", "b.txt"] and first["pageInfo"]["hasNextPage"]
    rest = (await gql(CHANGES, id=task_id, first=2, after=first["pageInfo"]["endCursor"]))["task"]["changes"]
    page = rest["repositories"][0]["files"]
    assert [f["path"] for f in page["nodes"]] == ["c.txt"] and not page["pageInfo"]["hasNextPage"]


async def test_paths_limit_the_read_and_keep_a_rename_whole(gql, services, workspace_id, tmp_path):
    task_id, folder = await materialized_task(services, workspace_id, make_repository(tmp_path / "repo"))
    git(folder, "mv", "README", "READ_ME.md")
    (folder / "other.txt").write_text("x\n")
    found = (await gql(CHANGES, id=task_id, paths=["READ_ME.md", "README"]))["task"]["changes"]
    [renamed] = found["repositories"][0]["files"]["nodes"]
    assert (renamed["path"], renamed["oldPath"], renamed["status"]) == ("READ_ME.md", "README", "RENAMED")


async def test_a_path_outside_the_worktree_is_refused(gql, services, workspace_id, tmp_path):
    task_id, _ = await materialized_task(services, workspace_id, make_repository(tmp_path / "repo"))
    for bad in ("../secret", "/etc/passwd", ".git/config", "a//b"):
        result = await gql.raw(CHANGES, id=task_id, paths=[bad])
        assert result.errors and result.errors[0].extensions["code"] == "VALIDATION", bad


async def test_someone_who_cannot_read_the_task_gets_not_found(services, workspace_id, tmp_path):
    task_id, _ = await materialized_task(services, workspace_id, make_repository(tmp_path / "repo"))
    stranger = GraphQLCaller(await services_as(services, "mallory"))
    result = await stranger.raw(CHANGES, id=task_id)
    assert result.errors and result.errors[0].extensions["code"] == "NOT_FOUND"

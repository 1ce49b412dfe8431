"""discardChanges undoes uncommitted work (files or one hunk), never while a turn runs and never outside the
worktree; setFileReviewed marks a file at its current diff, which another change of the file undoes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import select

from kandev.models import Session, Turn
from kandev.models.base import new_id, utcnow
from tests.support.changes import materialized_task
from tests.support.git_repos import git, make_repository

ERRORS = "__typename ... on Error { code message fields } ... on ValidationError { field }"
DISCARD = f"""mutation($i: DiscardChangesInput!) {{ discardChanges(input: $i) {{ {ERRORS}
  ... on DiscardChangesPayload {{ repositoryId paths }} }} }}"""
REVIEWED = f"""mutation($i: SetFileReviewedInput!) {{ setFileReviewed(input: $i) {{ {ERRORS}
  ... on FileReviewedPayload {{ path reviewed diffKey }} }} }}"""
FILES = """query($id: ID!, $scope: ChangeScope) { task(id: $id) { changeStats { files additions deletions }
  changes(scope: $scope) { repositories { reviewedFiles files { nodes { path status reviewed diffKey
    hunks { header } } } } } } }"""
LONG = "".join(f"row {n}\n" for n in range(1, 41))


async def started(services, workspace_id: str, tmp_path: Path) -> tuple[str, str, Path]:
    repository = make_repository(tmp_path / "repo")
    (repository / "long.txt").write_text(LONG)
    (repository / "keep.txt").write_text("keep\n")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "files")
    task_id, folder = await materialized_task(services, workspace_id, repository)
    repository_id = (await services.repositories.list(workspace_id))[0].id
    return task_id, repository_id, folder


async def files(gql, task_id: str, scope: str = "ALL") -> dict[str, dict[str, Any]]:
    found = (await gql(FILES, id=task_id, scope=scope))["task"]["changes"]["repositories"][0]["files"]["nodes"]
    return {f["path"]: f for f in found}


async def test_discarding_files_restores_tracked_ones_deletes_new_ones_and_keeps_commits(
    gql, services, workspace_id, tmp_path
):
    task_id, repository_id, folder = await started(services, workspace_id, tmp_path)
    (folder / "committed.txt").write_text("in a commit\n")
    git(folder, "add", "committed.txt")
    git(folder, "commit", "-q", "-m", "commit")
    (folder / "long.txt").write_text(LONG.replace("row 3\n", "ROW THREE\n"))
    (folder / "fresh.txt").write_text("new\n")
    git(folder, "mv", "keep.txt", "kept.txt")
    assert set(await files(gql, task_id)) == {"committed.txt", "long.txt", "fresh.txt", "kept.txt"}

    answer = (
        await gql(
            DISCARD,
            i={"taskId": task_id, "repositoryId": repository_id, "paths": ["long.txt", "fresh.txt", "kept.txt"]},
        )
    )["discardChanges"]
    assert answer["paths"] == ["long.txt", "fresh.txt", "kept.txt"]
    assert (folder / "long.txt").read_text() == LONG and not (folder / "fresh.txt").exists()
    assert (folder / "keep.txt").exists() and not (folder / "kept.txt").exists()
    assert set(await files(gql, task_id)) == {"committed.txt"}
    stats = (await gql(FILES, id=task_id))["task"]["changeStats"]
    assert stats == {"files": 1, "additions": 1, "deletions": 0}  # measured again after the discard


async def test_discarding_one_hunk_leaves_the_others(gql, services, workspace_id, tmp_path):
    task_id, repository_id, folder = await started(services, workspace_id, tmp_path)
    (folder / "long.txt").write_text(LONG.replace("row 2\n", "ROW TWO\n").replace("row 35\n", "ROW 35\n"))
    hunks = (await files(gql, task_id, "UNCOMMITTED"))["long.txt"]["hunks"]
    assert len(hunks) == 2
    answer = (
        await gql(
            DISCARD,
            i={
                "taskId": task_id,
                "repositoryId": repository_id,
                "hunk": {"path": "long.txt", "header": hunks[0]["header"]},
            },
        )
    )["discardChanges"]
    assert answer["paths"] == ["long.txt"]
    assert (folder / "long.txt").read_text() == LONG.replace("row 35\n", "ROW 35\n")
    stale = (
        await gql(
            DISCARD,
            i={
                "taskId": task_id,
                "repositoryId": repository_id,
                "hunk": {"path": "long.txt", "header": hunks[0]["header"]},
            },
        )
    )["discardChanges"]
    assert (stale["code"], stale["fields"]["reason"]) == ("CONFLICT", "stale_hunk")


async def test_bad_discards_are_refused_and_change_nothing(gql, services, workspace_id, tmp_path):
    task_id, repository_id, folder = await started(services, workspace_id, tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched\n")
    (folder / "long.txt").write_text("changed\n")
    base = {"taskId": task_id, "repositoryId": repository_id}
    cases = [
        ({**base, "paths": ["../outside.txt"]}, "VALIDATION"),
        ({**base, "paths": ["/etc/hostname"]}, "VALIDATION"),
        ({**base, "paths": [".git/HEAD"]}, "VALIDATION"),
        ({**base, "paths": ["keep.txt"]}, "NOT_FOUND"),  # nothing uncommitted there
        ({**base, "paths": ["long.txt"], "hunk": {"path": "long.txt", "header": "@@ -1 +1 @@"}}, "VALIDATION"),
        ({**base}, "VALIDATION"),
        ({**base, "repositoryId": "nope", "paths": ["long.txt"]}, "NOT_FOUND"),
        ({**base, "taskId": "nope", "paths": ["long.txt"]}, "NOT_FOUND"),
    ]
    for variables, code in cases:
        assert (await gql(DISCARD, i=variables))["discardChanges"]["code"] == code, variables
    assert outside.read_text() == "untouched\n" and (folder / "long.txt").read_text() == "changed\n"


async def test_a_discard_while_a_turn_runs_is_a_conflict(gql, services, db, workspace_id, tmp_path):
    task_id, repository_id, folder = await started(services, workspace_id, tmp_path)
    (folder / "long.txt").write_text("changed\n")
    session = (await services.sessions.start_task(task_id, "hi", None)).session
    async with db.transaction() as s:
        s.add(Turn(id=new_id(), session_id=session.id, seq=1, state="RUNNING", started_at=utcnow()))
    refused = await gql(DISCARD, i={"taskId": task_id, "repositoryId": repository_id, "paths": ["long.txt"]})
    assert (refused["discardChanges"]["code"], refused["discardChanges"]["fields"]["reason"]) == (
        "CONFLICT",
        "turn_running",
    )
    assert (folder / "long.txt").read_text() == "changed\n"
    async with db.read() as s:
        assert await s.scalar(select(Session.id).where(Session.task_id == task_id)) == session.id


async def test_a_file_marked_reviewed_turns_unreviewed_when_it_changes_again(gql, services, workspace_id, tmp_path):
    task_id, repository_id, folder = await started(services, workspace_id, tmp_path)
    (folder / "long.txt").write_text("first version\n")
    (folder / "fresh.txt").write_text("new\n")
    seen = (await files(gql, task_id))["long.txt"]
    marked = (
        await gql(
            REVIEWED,
            i={
                "taskId": task_id,
                "repositoryId": repository_id,
                "path": "long.txt",
                "reviewed": True,
                "diffKey": seen["diffKey"],
            },
        )
    )["setFileReviewed"]
    assert marked == {
        "__typename": "FileReviewedPayload",
        "path": "long.txt",
        "reviewed": True,
        "diffKey": seen["diffKey"],
    }
    without_key = (
        await gql(REVIEWED, i={"taskId": task_id, "repositoryId": repository_id, "path": "fresh.txt", "reviewed": True})
    )["setFileReviewed"]
    assert without_key["reviewed"]
    now = await files(gql, task_id)
    assert now["long.txt"]["reviewed"] and now["fresh.txt"]["reviewed"]
    [repository] = (await gql(FILES, id=task_id, scope="ALL"))["task"]["changes"]["repositories"]
    assert repository["reviewedFiles"] == 2

    (folder / "long.txt").write_text("second version, longer\n")
    os.utime(folder / "long.txt", ns=(1, 1))
    later = await files(gql, task_id)
    assert not later["long.txt"]["reviewed"] and later["fresh.txt"]["reviewed"]

    unmarked = (
        await gql(
            REVIEWED, i={"taskId": task_id, "repositoryId": repository_id, "path": "fresh.txt", "reviewed": False}
        )
    )["setFileReviewed"]
    assert not unmarked["reviewed"] and unmarked["diffKey"] is None
    assert not (await files(gql, task_id))["fresh.txt"]["reviewed"]
    unchanged = (
        await gql(REVIEWED, i={"taskId": task_id, "repositoryId": repository_id, "path": "keep.txt", "reviewed": True})
    )["setFileReviewed"]
    assert unchanged["code"] == "NOT_FOUND"

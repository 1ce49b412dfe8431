"""After the worktree changes, a measure stores the task's change stats (one CHANGES event naming the files)
and moves each open thread on a changed file to where its lines are now, or makes it OUTDATED."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from kandev.domain.reviews.follow import refresh_changes
from kandev.domain.reviews.service import NewComment
from kandev.graphql.root import schema
from kandev.graphql.schema.context import Context
from tests.support.changes import materialized_task
from tests.support.git_repos import git, make_repository

CODE = "".join(f"line {n}\n" for n in range(1, 13))
EVENTS = """subscription($ws: ID!) { taskEvents(workspaceId: $ws) { kind task { id changeStats { files additions
  deletions } } changedFiles { repositoryId path } reviewThread { id state path line endLine } } }"""


async def started(services, workspace_id, tmp_path) -> tuple[str, Any]:
    repository = make_repository(tmp_path / "repo")
    (repository / "code.py").write_text(CODE)
    (repository / "other.py").write_text(CODE)
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "code")
    return await materialized_task(services, workspace_id, repository)


def touch(path, text: str) -> None:
    path.write_text(text)
    info = os.stat(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))  # a new version, even within a tick


async def state(services, task_id: str, thread_id: str) -> tuple[str, str | None, int | None, int | None]:
    [thread] = [t for t in await services.reviews.threads(task_id) if t.id == thread_id]
    return thread.state, thread.path, thread.line, thread.end_line


async def test_threads_follow_inserted_lines_and_renames_and_go_outdated_when_edited_or_deleted(
    services, workspace_id, tmp_path
):
    task_id, folder = await started(services, workspace_id, tmp_path)
    touch(folder / "code.py", CODE.replace("line 2\n", "line two\n"))
    assert await refresh_changes(services.ctx, task_id)
    follows = (await services.reviews.add_comment(NewComment(task_id, "a", path="code.py", line=6, end_line=7))).id
    edited = (await services.reviews.add_comment(NewComment(task_id, "b", path="code.py", line=9))).id
    deleted = (await services.reviews.add_comment(NewComment(task_id, "c", path="code.py", line=11))).id
    renamed = (await services.reviews.add_comment(NewComment(task_id, "d", path="other.py", line=3))).id
    resolved = (await services.reviews.add_comment(NewComment(task_id, "e", path="code.py", line=12))).id
    await services.reviews.resolve(resolved)

    lines = CODE.replace("line 2\n", "line two\n").splitlines(keepends=True)
    lines[8] = "line NINE\n"  # line 9 edited
    del lines[10]  # line 11 deleted
    lines[0:0] = ["# added\n", "# added too\n"]  # two lines above everything
    touch(folder / "code.py", "".join(lines))
    git(folder, "mv", "other.py", "moved.py")
    assert await refresh_changes(services.ctx, task_id)

    assert await state(services, task_id, follows) == ("OPEN", "code.py", 8, 9)
    assert await state(services, task_id, edited) == ("OUTDATED", "code.py", 9, 9)  # where it was last seen
    assert await state(services, task_id, deleted) == ("OUTDATED", "code.py", 11, 11)
    assert await state(services, task_id, renamed) == ("OPEN", "moved.py", 3, 3)
    assert await state(services, task_id, resolved) == ("RESOLVED", "code.py", 12, 12)  # left as resolved
    [outdated] = [t for t in await services.reviews.threads(task_id) if t.id == edited]
    assert outdated.anchor_text == "line 9"  # its original lines stay shown

    assert not await refresh_changes(services.ctx, task_id)  # nothing changed since: nothing stored or sent


async def test_a_measure_that_changed_is_one_changes_event_with_the_stats_and_the_files(
    services, workspace_id, tmp_path
):
    task_id, folder = await started(services, workspace_id, tmp_path)
    thread = await services.reviews.add_comment(NewComment(task_id, "watch", path="code.py", line=5))
    stream = await schema.subscribe(
        EVENTS, variable_values={"ws": workspace_id}, context_value=Context.for_services(services)
    )
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        assert (await anext(stream)).data["taskEvents"]["kind"] == "SUBSCRIBED"  # type: ignore[union-attr,index]
        touch(folder / "code.py", "# top\n" + CODE)
        (folder / "new.txt").write_text("n\n")
        assert await refresh_changes(services.ctx, task_id)
        while len(seen) < 2:
            seen.append((await anext(stream)).data["taskEvents"])  # type: ignore[union-attr,index]
    await stream.aclose()  # type: ignore[union-attr]
    changes, moved = seen
    repository_id = (await services.repositories.list(workspace_id))[0].id
    assert changes["kind"] == "CHANGES" and changes["task"]["changeStats"] == {
        "files": 2,
        "additions": 2,
        "deletions": 0,
    }
    assert changes["changedFiles"] == [
        {"repositoryId": repository_id, "path": "code.py"},
        {"repositoryId": repository_id, "path": "new.txt"},
    ]
    assert moved["kind"] == "REVIEW_THREAD" and moved["reviewThread"] == {
        "id": thread.id,
        "state": "OPEN",
        "path": "code.py",
        "line": 6,
        "endLine": 6,
    }

"""Workspace sources: atomic batches of repositories and folders, a branch during a turn, the diff base."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select, update

from kandev.domain.errors import (
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    UnprocessableError,
    ValidationError,
)
from kandev.domain.sessions.tool_profiles import refresh_profile
from kandev.domain.workspace.sources import SourceRequest
from kandev.domain.workspace.workdirs import prepare_workdir, task_directory
from kandev.models import ExecutorProfile, Repository, Session, Task, TaskFolder, TaskRepository
from kandev.platform.event_bus import tools_channel
from tests.support.factories import new_task
from tests.support.git_repos import git, make_repository
from tests.support.users import as_agent


def repo(**fields: str) -> SourceRequest:
    return SourceRequest(type="repository", **fields)


def folder(path: Path, name: str | None = None) -> SourceRequest:
    return SourceRequest(type="folder", path=str(path), name=name)


async def executor_id(db, workspace_id: str, kind: str) -> str:
    async with db.read() as s:
        return await s.scalar(
            select(ExecutorProfile.id).where(ExecutorProfile.workspace_id == workspace_id, ExecutorProfile.name == kind)
        )


async def launch(services, task_id: str) -> Path:
    """What a worker does before the first turn: prepare the task's working directory."""
    async with services.ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        return await prepare_workdir(uow.db, services.ctx.settings.work_path, task, task.executor_profile_id)


async def task_links(db, task_id: str) -> tuple[list[str], list[str]]:
    async with db.read() as s:
        repos = await s.scalars(select(TaskRepository.repository_id).where(TaskRepository.task_id == task_id))
        folders = await s.scalars(select(TaskFolder.name).where(TaskFolder.task_id == task_id))
        return list(repos), list(folders)


@pytest.fixture
async def first(services, workspace_id, tmp_path):
    path = make_repository(tmp_path / "first", branches=("develop",))
    return await services.repositories.create(workspace_id, "first", str(path))


async def test_a_mixed_batch_is_attached_and_an_exact_retry_changes_nothing(
    services, db, workspace_id, first, tmp_path
):
    task_id = await new_task(services, workspace_id)
    second = make_repository(tmp_path / "second")
    notes = tmp_path / "notes"
    notes.mkdir()
    batch = [repo(repository_id=first.id, base_branch="develop"), repo(local_path=str(second)), folder(notes, "Notes")]
    added = await services.workspace_sources.add(task_id, batch)
    assert added.changed and [s.added for s in added.sources] == [True, True, True]
    assert [s.kind for s in added.sources] == ["repository", "repository", "folder"]
    assert added.sources[0].base_branch == "develop" and added.sources[1].base_branch == "main"
    # Not launched yet: nothing is on disk until the first turn prepares the task directory.
    assert all(s.path is None for s in added.sources) and added.task_workspace_path is None
    repositories, folders = await task_links(db, task_id)
    assert len(repositories) == 2 and folders == ["Notes"]
    again = await services.workspace_sources.add(task_id, batch)
    assert not again.changed and [s.id for s in again.sources] == [s.id for s in added.sources]
    assert await task_links(db, task_id) == (repositories, folders)
    async with db.read() as s:
        registered = list(await s.scalars(select(Repository.name).where(Repository.workspace_id == workspace_id)))
    assert sorted(registered) == ["first", "second"]


async def test_sources_added_after_launch_sit_beside_the_first_repository(services, workspace_id, first, tmp_path):
    task_id = await new_task(services, workspace_id, repositories=[first.id])
    workdir = await launch(services, task_id)
    root = task_directory(services.ctx.settings.work_path, task_id)
    assert workdir == root / "first"
    second = make_repository(tmp_path / "second")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("plan")
    added = await services.workspace_sources.add(task_id, [repo(local_path=str(second)), folder(notes)])
    assert added.task_workspace_path == str(root)
    assert added.sources[0].path == str(root / "second") and added.sources[1].path == str(root / "notes")
    assert (root / "second" / "README").read_text() == "hello\n"
    assert git(root / "second", "branch", "--show-current") == added.sources[0].branch
    assert added.sources[0].branch.startswith("kandev/")
    assert (root / "notes" / "plan.md").read_text() == "plan"
    # The sibling is its own worktree, not an untracked folder of the first repository.
    assert git(workdir, "status", "--porcelain") == ""


async def test_sources_added_before_launch_are_materialized_at_launch(services, workspace_id, first, tmp_path):
    task_id = await new_task(services, workspace_id, repositories=[first.id])
    second = make_repository(tmp_path / "second", branches=("feature",))
    notes = tmp_path / "notes"
    notes.mkdir()
    await services.workspace_sources.add(task_id, [repo(local_path=str(second), branch="feature"), folder(notes)])
    workdir = await launch(services, task_id)
    root = task_directory(services.ctx.settings.work_path, task_id)
    assert workdir == root / "first"
    assert git(root / "second", "branch", "--show-current") == "feature"
    assert (root / "notes").resolve() == notes.resolve()


async def test_a_batch_that_fails_part_way_leaves_nothing_behind(services, db, workspace_id, first, tmp_path):
    task_id = await new_task(services, workspace_id, repositories=[first.id])
    await launch(services, task_id)
    second = make_repository(tmp_path / "second")
    third = make_repository(tmp_path / "third")
    notes = tmp_path / "notes"
    notes.mkdir()
    before = await task_links(db, task_id)
    with pytest.raises(UnprocessableError, match="base branch"):
        await services.workspace_sources.add(
            task_id,
            [repo(local_path=str(second)), folder(notes), repo(local_path=str(third), base_branch="no-such-branch")],
        )
    root = task_directory(services.ctx.settings.work_path, task_id)
    assert not (root / "second").exists() and not (root / "notes").is_symlink()
    assert len(git(second, "worktree", "list").splitlines()) == 1
    assert git(second, "branch", "--list", "kandev/*") == ""
    assert await task_links(db, task_id) == before
    async with db.read() as s:
        names = set(await s.scalars(select(Repository.name).where(Repository.workspace_id == workspace_id)))
    assert names == {"first"}


async def test_contradictory_duplicates_conflict(services, workspace_id, first):
    task_id = await new_task(services, workspace_id)
    with pytest.raises(ConflictError, match="twice"):
        await services.workspace_sources.add(
            task_id, [repo(repository_id=first.id), repo(repository_id=first.id, base_branch="develop")]
        )
    await services.workspace_sources.add(task_id, [repo(repository_id=first.id)])
    with pytest.raises(ConflictError, match="already on the task"):
        await services.workspace_sources.add(task_id, [repo(repository_id=first.id, base_branch="develop")])
    # The same source twice in one batch is simply one source.
    same = await services.workspace_sources.add(task_id, [repo(repository_id=first.id)] * 2)
    assert len(same.sources) == 1 and not same.changed


async def test_a_task_with_an_active_turn_refuses_sources(services, db, workspace_id, first):
    task_id = await new_task(services, workspace_id)
    session = (await services.sessions.start_task(task_id, "hi", None)).session
    async with db.transaction() as s:
        await s.execute(update(Session).where(Session.id == session.id).values(state="RUNNING"))
    with pytest.raises(ConflictError, match="active turn") as refused:
        await services.workspace_sources.add(task_id, [repo(repository_id=first.id)])
    assert not isinstance(refused.value, UnprocessableError)
    assert await task_links(db, task_id) == ([], [])


@pytest.mark.parametrize(
    ("source", "field"),
    [
        (SourceRequest(type="repository"), "sources[0]"),
        (SourceRequest(type="repository", repository_id="a", local_path="/tmp"), "sources[0]"),
        (SourceRequest(type="repository", local_path="relative/path"), "sources[0].local_path"),
        (SourceRequest(type="repository", remote_url="not a url"), "sources[0].remote_url"),
        (SourceRequest(type="repository", repository_id="a", branch="two words"), "sources[0].branch"),
        (SourceRequest(type="folder", path="/tmp", branch="main"), "sources[0]"),
        (SourceRequest(type="folder"), "sources[0].path"),
        (SourceRequest(type="folder", path="/tmp", name="a/b"), "sources[0].name"),
        (SourceRequest(type="submodule", path="/tmp"), "sources[0].type"),
    ],
)
async def test_malformed_sources_are_refused_naming_the_field(services, db, workspace_id, source, field):
    task_id = await new_task(services, workspace_id)
    with pytest.raises(ValidationError) as refused:
        await services.workspace_sources.add(task_id, [source])
    assert refused.value.field == field
    assert await task_links(db, task_id) == ([], [])


async def test_an_empty_batch_is_refused(services, workspace_id):
    task_id = await new_task(services, workspace_id)
    with pytest.raises(ValidationError, match="at least one"):
        await services.workspace_sources.add(task_id, [])


async def test_the_scratch_executor_cannot_take_sources(services, db, workspace_id, first):
    scratch = await executor_id(db, workspace_id, "scratch")
    task_id = await new_task(services, workspace_id, executor_profile_id=scratch)
    with pytest.raises(UnprocessableError, match="scratch"):
        await services.workspace_sources.add(task_id, [repo(repository_id=first.id)])


async def test_unknown_repositories_and_folders_that_do_not_exist_fail_the_batch(
    services, db, workspace_id, first, tmp_path
):
    task_id = await new_task(services, workspace_id)
    with pytest.raises(NotFoundError):
        await services.workspace_sources.add(task_id, [repo(repository_id=first.id), repo(repository_id="nope")])
    with pytest.raises(UnprocessableError, match="does not exist"):
        await services.workspace_sources.add(task_id, [folder(tmp_path / "missing")])
    not_git = tmp_path / "plain"
    not_git.mkdir()
    with pytest.raises(UnprocessableError, match="not a git repository"):
        await services.workspace_sources.add(task_id, [repo(local_path=str(not_git))])
    assert await task_links(db, task_id) == ([], [])


async def test_a_remote_url_is_cloned_once_and_reused_by_later_tasks(services, db, workspace_id, tmp_path):
    upstream = make_repository(tmp_path / "upstream.git")
    url = f"file://{upstream}"
    one = await new_task(services, workspace_id)
    two = await new_task(services, workspace_id)
    first_add = await services.workspace_sources.add(one, [repo(remote_url=url)])
    second_add = await services.workspace_sources.add(two, [repo(remote_url=url + "/")])
    assert first_add.sources[0].id == second_add.sources[0].id
    async with db.read() as s:
        clone = await s.get(Repository, first_add.sources[0].id)
    assert clone.name == "upstream" and clone.remote_url == url and clone.default_branch == "main"
    assert (Path(clone.path) / "README").read_text() == "hello\n"
    assert Path(clone.path).is_relative_to(services.ctx.settings.work_path)
    with pytest.raises(UnprocessableError, match="could not be cloned") as failed:
        await services.workspace_sources.add(one, [repo(remote_url=f"file://{tmp_path}/no/such/place?token=s3cret")])
    assert "s3cret" not in failed.value.message


async def test_an_agent_adds_sources_to_its_own_task_or_its_direct_child_only(services, workspace_id, first):
    parent_id = await new_task(services, workspace_id)
    child_id = await new_task(services, workspace_id, parent_id=parent_id)
    stranger_id = await new_task(services, workspace_id)
    agent = as_agent(services, "s", parent_id)
    added = await agent.workspace_sources.add(None, [repo(repository_id=first.id)])
    assert added.task.id == parent_id
    assert (await agent.workspace_sources.add(child_id, [repo(repository_id=first.id)])).task.id == child_id
    with pytest.raises(PermissionDeniedError):
        await agent.workspace_sources.add(stranger_id, [repo(repository_id=first.id)])


async def test_a_github_source_refreshes_a_launched_sessions_profile_once(
    services, bus, db, workspace_id, first, tmp_path
):
    task_id = await new_task(services, workspace_id)
    session = (await services.sessions.start_task(task_id, "hi", None)).session
    async with services.ctx.unit_of_work() as uow:  # what launching does: the profile becomes live
        await refresh_profile(uow, await uow.db.get(Session, session.id), await uow.db.get(Task, task_id))
    assert "github-pr" not in (await services.sessions.mcp_profile(session.id)).to_json()["capabilities"]
    hosted = make_repository(tmp_path / "hosted", remote="https://github.com/acme/hosted.git")
    async with bus.subscribe(tools_channel(session.id)) as changes:
        await services.workspace_sources.add(task_id, [repo(repository_id=first.id)])  # no provider: no change
        await services.workspace_sources.add(task_id, [repo(local_path=str(hosted))])
        revision = await asyncio.wait_for(anext(changes), timeout=10)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(changes), timeout=0.3)
    profile = await services.sessions.mcp_profile(session.id)
    assert "github-pr" in profile.to_json()["capabilities"]
    async with db.read() as s:
        assert (await s.get(Session, session.id)).mcp_profile_revision == revision["revision"]


async def test_a_branch_is_added_during_a_turn_on_a_sibling_worktree(services, db, workspace_id, first, tmp_path):
    task_id = await new_task(services, workspace_id, repositories=[first.id])
    session = (await services.sessions.start_task(task_id, "hi", None)).session
    workdir = await launch(services, task_id)
    async with db.transaction() as s:  # mid-turn: the batch path would refuse, this one must not
        await s.execute(update(Session).where(Session.id == session.id).values(state="RUNNING"))
    second = make_repository(tmp_path / "second", branches=("topic",))
    added = await services.workspace_sources.add_branch(task_id, repo(local_path=str(second), branch="topic"))
    root = task_directory(services.ctx.settings.work_path, task_id)
    assert added.worktree_path == str(root / "second") and added.task_workspace_path == str(root)
    assert git(root / "second", "branch", "--show-current") == "topic"
    # The agent's directory stays the first repository's, on this launch and the next.
    assert await launch(services, task_id) == workdir


async def test_a_branch_added_before_launch_reports_no_paths(services, workspace_id, first):
    task_id = await new_task(services, workspace_id)
    added = await services.workspace_sources.add_branch(task_id, repo(repository_id=first.id, branch="develop"))
    assert added.source.added and added.worktree_path is None and added.task_workspace_path is None


async def test_adding_a_branch_needs_the_worktree_executor(services, db, workspace_id, first):
    local = await executor_id(db, workspace_id, "local")
    task_id = await new_task(services, workspace_id, executor_profile_id=local)
    with pytest.raises(UnprocessableError, match="worktree executor"):
        await services.workspace_sources.add_branch(task_id, repo(repository_id=first.id))
    with pytest.raises(ValidationError):
        await services.workspace_sources.add_branch(task_id, SourceRequest(type="folder", path="/tmp"))


async def test_the_diff_base_of_a_tasks_repository_changes_only_to_a_real_branch(
    services, workspace_id, first, tmp_path
):
    task_id = await new_task(services, workspace_id, repositories=[first.id])
    changed = await services.workspace_sources.update_base_branch(task_id, None, "develop")
    assert (changed.previous_base_branch, changed.base_branch) == ("main", "develop")
    with pytest.raises(ValidationError, match="not a branch"):
        await services.workspace_sources.update_base_branch(task_id, first.id, "nope")
    other = make_repository(tmp_path / "other")
    await services.workspace_sources.add(task_id, [repo(local_path=str(other))])
    with pytest.raises(ValidationError) as ambiguous:
        await services.workspace_sources.update_base_branch(task_id, None, "main")
    assert ambiguous.value.field == "repository_id"
    with pytest.raises(NotFoundError):
        await services.workspace_sources.update_base_branch(task_id, "not-on-the-task", "main")

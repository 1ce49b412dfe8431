"""Local sources are confined: allowed roots only, never system folders, the data or work dir, or another
user's repository or attached folder, whichever came first; refused sources create nothing."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from kandev.domain.context import Principal
from kandev.domain.errors import ValidationError
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.service import add_workspace
from kandev.domain.workspace.sources import SourceRequest
from kandev.models import Repository, TaskFolder, TaskRepository, User
from kandev.models.base import new_id
from tests.support.git_repos import make_repository
from tests.support.users import services_as


def configured(services: Services, **settings: Any) -> Services:
    """The same caller on a server with other settings (auth, source roots)."""
    return Services(replace(services.ctx, settings=services.ctx.settings.model_copy(update=settings)))


async def counts(db: Any) -> tuple[int, int, int]:
    async with db.read() as s:
        return (
            await s.scalar(select(func.count()).select_from(Repository)),
            await s.scalar(select(func.count()).select_from(TaskRepository)),
            await s.scalar(select(func.count()).select_from(TaskFolder)),
        )


def as_sources(kind: str, path: str) -> list[SourceRequest]:
    if kind == "local_path":
        return [SourceRequest(type="repository", local_path=path)]
    if kind == "folder":
        return [SourceRequest(type="folder", path=path)]
    if kind == "file_url":
        return [SourceRequest(type="repository", remote_url=f"file://{path}")]
    return [SourceRequest(type="repository", remote_url=path)]


SURFACES = ("repository", "local_path", "folder", "file_url", "plain_remote")
FIELDS = {
    "repository": "path",
    "local_path": "sources[0].local_path",
    "folder": "sources[0].path",
    "file_url": "sources[0].remote_url",
    "plain_remote": "sources[0].remote_url",
}


async def try_source(services: Services, workspace_id: str, kind: str, path: str) -> ValidationError:
    """Offer `path` through one surface; returns the refusal."""
    with pytest.raises(ValidationError) as refused:
        if kind == "repository":
            await services.repositories.create(workspace_id, "candidate", path)
        else:
            task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Sources"))).task
            await services.workspace_sources.add(task.id, as_sources(kind, path))
    assert refused.value.field == FIELDS[kind]
    return refused.value


def forbidden_targets(settings: Any, tmp_path: Path) -> dict[str, str]:
    link = tmp_path / "innocent"
    if not link.is_symlink():
        link.symlink_to("/etc", target_is_directory=True)
    for folder in (settings.data_path, settings.work_path):
        if not (folder / ".git").exists():
            make_repository(folder / "checkout")  # a real repository inside: refused for where it is
    return {
        "root": "/",
        "etc": "/etc",
        "data dir": str(settings.data_path),
        "inside the data dir": str(settings.data_path / "checkout"),
        "work dir": str(settings.work_path),
        "inside the work dir": str(settings.work_path / "checkout"),
        "symlink to /etc": str(link),
        "around the data dir": str(tmp_path),
    }


@pytest.mark.parametrize("kind", SURFACES)
async def test_system_folders_the_data_and_work_dirs_and_a_symlink_to_etc_are_refused(
    services, db, workspace_id, settings, tmp_path, kind
):
    # default roots (auth off): home and the temp dir, which holds tmp_path, the data dir and the work dir
    for target, path in forbidden_targets(settings, tmp_path).items():
        before = await counts(db)
        refusal = await try_source(services, workspace_id, kind, path)
        assert "not an allowed source location" in refusal.message, target
        assert (await counts(db))[0] == before[0] and (await counts(db))[1:] == (0, 0), target
    assert not (settings.work_path / "repositories").exists()


@pytest.mark.parametrize("kind", SURFACES)
async def test_a_repository_outside_the_source_roots_is_refused(services, db, workspace_id, tmp_path, kind):
    outside = make_repository(tmp_path / "outside")
    confined = configured(services, source_roots=str(tmp_path / "roots"))
    (tmp_path / "roots").mkdir()
    before = await counts(db)
    refusal = await try_source(confined, workspace_id, kind, str(outside))
    assert "KANDEV_SOURCE_ROOTS" in refusal.message
    assert await counts(db) == before


async def test_a_file_url_on_another_host_is_refused(services, db, workspace_id, tmp_path):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Sources"))).task
    with pytest.raises(ValidationError) as refused:
        await services.workspace_sources.add(
            task.id, [SourceRequest(type="repository", remote_url=f"file://fileserver{tmp_path}")]
        )
    assert refused.value.field == "sources[0].remote_url"


@pytest.mark.parametrize("kind", SURFACES)
async def test_with_auth_on_and_no_source_roots_every_local_path_is_refused_naming_the_setting(
    services, db, workspace_id, tmp_path, kind
):
    repo = make_repository(tmp_path / "roots" / "project")
    secured = configured(services, auth="on", source_roots=None)
    before = await counts(db)
    refusal = await try_source(secured, workspace_id, kind, str(repo))
    assert "KANDEV_SOURCE_ROOTS" in refusal.message and "admin" in refusal.message
    assert await counts(db) == before


async def test_paths_under_an_allowed_root_are_accepted_resolved(services, db, workspace_id, tmp_path):
    roots = tmp_path / "roots"
    confined = configured(services, auth="on", source_roots=os.pathsep.join([str(tmp_path / "elsewhere"), str(roots)]))
    project = make_repository(roots / "project")
    (roots / "alias").symlink_to(project, target_is_directory=True)
    registered = await confined.repositories.create(workspace_id, "project", str(roots / "alias"))
    assert registered.path == str(project.resolve())
    task = (await confined.tasks.create(CreateTask(workspace_id=workspace_id, title="Sources"))).task
    notes = roots / "notes"
    notes.mkdir()
    other = make_repository(roots / "other")
    upstream = make_repository(roots / "upstream")
    plain = make_repository(roots / "plain")
    added = await confined.workspace_sources.add(
        task.id,
        [
            SourceRequest(type="repository", local_path=str(other)),
            SourceRequest(type="folder", path=str(notes)),
            SourceRequest(type="repository", remote_url=f"file://{upstream}"),
            SourceRequest(type="repository", remote_url=str(plain)),
        ],
    )
    assert [source.name for source in added.sources] == ["other", "notes", "upstream", "plain"]
    assert all(source.added for source in added.sources)


async def mallory_services(services: Services, db: Any, tmp_path: Path) -> tuple[Services, str]:
    """A second user with a workspace of her own, on a server with auth on and the tmp dir as its root."""
    async with db.transaction() as s:
        user = User(id=new_id(), login="mallory", name="Mallory")
        s.add(user)
        await s.flush()
        workspace = await add_workspace(s, user.id, "Mallory's")
    mallory = Principal(user_id=user.id, login="mallory")
    secured = configured(services, auth="on", source_roots=str(tmp_path))
    return Services(secured.ctx.with_principal(mallory)), workspace.id


@pytest.mark.parametrize("kind", SURFACES)
async def test_another_users_registered_repository_is_refused(services, db, workspace_id, tmp_path, kind):
    theirs = make_repository(tmp_path / "shared" / "theirs")
    (theirs / "src").mkdir()
    await services.repositories.create(workspace_id, "theirs", str(theirs))
    mallory, her_workspace = await mallory_services(services, db, tmp_path)
    for path in (theirs, theirs / "src", tmp_path / "shared"):
        before = await counts(db)
        refusal = await try_source(mallory, her_workspace, kind, str(path))
        assert "not an allowed source location" in refusal.message
        assert await counts(db) == before
    mine = make_repository(tmp_path / "mine")
    assert (await mallory.repositories.create(her_workspace, "mine", str(mine))).path == str(mine)


def decoys(tmp_path: Path, target: Path) -> dict[str, Path]:
    """Checkouts inside the roots that make git read `target`'s repository: a `.git` file pointing at its
    git dir, and an object store borrowing its objects."""
    gitfile = tmp_path / "roots" / "gitfile"
    gitfile.mkdir(parents=True)
    (gitfile / ".git").write_text(f"gitdir: {target / '.git'}\n")
    borrowing = make_repository(tmp_path / "roots" / "borrowing")
    (borrowing / ".git" / "objects" / "info" / "alternates").write_text(f"{target / '.git' / 'objects'}\n")
    return {"gitfile": gitfile, "alternates": borrowing}


@pytest.mark.parametrize("kind", ("repository", "local_path", "file_url", "plain_remote"))
async def test_a_checkout_whose_git_data_lies_outside_the_roots_is_refused(services, db, workspace_id, tmp_path, kind):
    outside = make_repository(tmp_path / "outside")
    confined = configured(services, source_roots=str(tmp_path / "roots"))
    for name, decoy in decoys(tmp_path, outside).items():
        before = await counts(db)
        refusal = await try_source(confined, workspace_id, kind, str(decoy))
        assert "KANDEV_SOURCE_ROOTS" in refusal.message, name
        assert await counts(db) == before, name


async def test_a_checkout_borrowing_another_users_repository_is_refused(services, db, workspace_id, tmp_path):
    theirs = make_repository(tmp_path / "theirs")
    await services.repositories.create(workspace_id, "theirs", str(theirs))
    mallory, her_workspace = await mallory_services(services, db, tmp_path)
    for name, decoy in decoys(tmp_path, theirs).items():
        before = await counts(db)
        for kind in ("repository", "local_path"):
            refusal = await try_source(mallory, her_workspace, kind, str(decoy))
            assert "not an allowed source location" in refusal.message, name
        assert await counts(db) == before, name


async def test_a_branch_added_during_a_turn_is_confined_too(services, db, workspace_id, tmp_path):
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Sources"))).task
    for path in ("/etc", str(services.ctx.settings.data_path)):
        with pytest.raises(ValidationError) as refused:
            await services.workspace_sources.add_branch(
                task.id, SourceRequest(type="repository", local_path=path, branch="topic")
            )
        assert refused.value.field == "sources[0].local_path"
    assert await counts(db) == (0, 0, 0)


async def person(services: Services, db: Any, tmp_path: Path, login: str) -> tuple[Services, str]:
    """A user of a server with auth on and the tmp dir as its root, with a workspace of their own."""
    confined = configured(services, auth="on", source_roots=str(tmp_path))
    someone = await services_as(confined, login)
    async with db.transaction() as s:
        workspace = await add_workspace(s, someone.ctx.principal.user_id, f"{login}'s")
    return someone, workspace.id


async def take(services: Services, workspace_id: str, kind: str, path: Path) -> str:
    """Register `path` as a repository, or attach it as a folder to a new task; returns the task (or "")."""
    if kind == "repository":
        await services.repositories.create(workspace_id, "taken", str(path))
        return ""
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Mine"))).task
    await services.workspace_sources.add(task.id, [SourceRequest(type="folder", path=str(path))])
    return task.id


@pytest.mark.parametrize("first", ("folder", "repository"))
async def test_another_users_attached_folder_or_repository_is_refused_inside_around_and_as_itself(
    services, db, tmp_path, first
):
    # Whichever came first, the other user's folder attachment or repository registration, the second
    # user can neither attach nor register it, anything inside it, or anything around it.
    shared = make_repository(tmp_path / "shared")
    taken = make_repository(shared / "alices")
    (taken / "deep").mkdir()
    inner = make_repository(taken / "deep" / "inner")
    alice, hers = await person(services, db, tmp_path, "alice")
    await take(alice, hers, first, taken)
    mallory, mine = await person(services, db, tmp_path, "mallory")
    for path in (taken, taken / "deep", inner, shared):
        for kind in SURFACES:
            before = await counts(db)
            refusal = await try_source(mallory, mine, kind, str(path))
            assert refusal.message == f"{FIELDS[kind].split('.')[-1]} is not an allowed source location"
            # Typed, and naming neither the other user nor where her files are.
            wire = json.dumps({"message": refusal.message, **refusal.wire_fields()})
            assert "alice" not in wire and str(tmp_path) not in wire and refusal.code == "VALIDATION"
            assert await counts(db) == before, (path, kind)
    # Her own next to it is hers to take, and Alice keeps using hers.
    await take(mallory, mine, "folder", make_repository(tmp_path / "mallorys"))
    await take(alice, hers, "folder", inner)


async def test_a_folder_of_a_deleted_task_no_longer_holds_its_place(services, db, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    alice, hers = await person(services, db, tmp_path, "alice")
    task_id = await take(alice, hers, "folder", notes)
    mallory, mine = await person(services, db, tmp_path, "mallory")
    await try_source(mallory, mine, "folder", str(notes))
    await alice.tasks.delete(task_id)
    assert await take(mallory, mine, "folder", notes)


async def test_a_symlink_to_another_users_folder_is_refused(services, db, tmp_path):
    notes = tmp_path / "alice" / "notes"
    notes.mkdir(parents=True)
    alice, hers = await person(services, db, tmp_path, "alice")
    await take(alice, hers, "folder", notes)
    mallory, mine = await person(services, db, tmp_path, "mallory")
    (tmp_path / "innocent").symlink_to(notes, target_is_directory=True)
    (tmp_path / "around").symlink_to(tmp_path / "alice", target_is_directory=True)
    for link in ("innocent", "around"):
        for kind in ("folder", "repository", "local_path"):
            await try_source(mallory, mine, kind, str(tmp_path / link))

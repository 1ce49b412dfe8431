"""Adding and launching a hostile repository runs none of its code: no hook, no fsmonitor, no filter, and
no `kandev/` package of its own shadowing ours in the scripted agent that works inside it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.domain.workspace.sources import SourceRequest
from kandev.models import Message
from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.git_repos import git, make_repository
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


def executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def hostile_repository(folder: Path, markers: Path) -> Path:
    """A repository whose hook, fsmonitor, filter driver and `kandev/__init__.py` each leave a marker."""
    repo = make_repository(folder)
    (repo / "kandev").mkdir()
    (repo / "kandev" / "__init__.py").write_text(f"open({str(markers / 'package')!r}, 'w').close()\n")
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "payload")
    executable(repo / ".git" / "hooks" / "post-checkout", f"#!/bin/sh\ntouch '{markers / 'hook'}'\n")
    monitor = executable(folder.parent / f"{folder.name}-fsmonitor", f"#!/bin/sh\ntouch '{markers / 'fsmonitor'}'\n")
    git(repo, "config", "core.fsmonitor", str(monitor))
    git(repo, "config", "filter.evil.smudge", f"touch '{markers / 'filter'}'; cat")
    return repo


async def agent_texts(db, session_id: str) -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message.text).where(Message.session_id == session_id, Message.kind == "AGENT").order_by(Message.seq)
        )
        return list(rows)


async def test_a_hostile_repository_added_and_launched_runs_none_of_its_code(
    services, settings, bus, db, workspace_id, tmp_path
):
    markers = tmp_path / "markers"
    markers.mkdir()
    registered = hostile_repository(tmp_path / "registered", markers)
    as_source = hostile_repository(tmp_path / "as-source", markers)
    # the payload works when Python runs unguarded in the checkout
    subprocess.run([sys.executable, "-c", "import kandev"], cwd=registered, check=True)
    assert (markers / "package").exists()
    (markers / "package").unlink()

    repository = await services.repositories.create(workspace_id, "registered", str(registered))
    with_repository = await services.tasks.create(
        CreateTask(workspace_id=workspace_id, title="Registered", repositories=[RepositoryChoice(repository.id)])
    )
    with_source = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Source"))).task
    await services.workspace_sources.add(with_source.id, [SourceRequest(type="repository", local_path=str(as_source))])
    assert os.listdir(markers) == []

    with running_worker(settings):
        for task_id in (with_repository.task.id, with_source.id):
            started = await services.sessions.start_task(task_id, "/say still here", None)
            async with watching(bus, db, started.session.id) as watch:
                [turn] = await watch.turns_ended(1, timeout=60)
            assert turn.state == "COMPLETED"
            assert await agent_texts(db, started.session.id) == ["still here"]
            session = await services.sessions.get(started.session.id)
            workdir = Path(session.working_dir)
            assert (workdir / "kandev" / "__init__.py").exists()  # the agent really ran beside the payload
            assert (workdir / "notes.txt").read_text() == "notes\n"
    assert sorted(os.listdir(markers)) == []

"""Repositories with a task worktree on a branch of their own, for reading changes as Kandev does."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kandev.domain.changes.git_reader import GitPlace, RunAs
from kandev.domain.changes.places import common_dir
from kandev.domain.changes.reading import Checkout
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.domain.workspace.workdirs import prepare_workdir
from kandev.models import Task
from tests.support.git_repos import git, make_repository


@dataclass
class Worktree:
    repository: Path
    folder: Path
    checkout: Checkout

    def write(self, path: str, text: str | bytes) -> Path:
        target = self.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text)
        return target

    def commit(self, message: str = "work") -> None:
        git(self.folder, "add", "-A")
        git(self.folder, "commit", "-q", "-m", message)


def task_worktree(base: Path, files: dict[str, str] | None = None, run_as: RunAs | None = None) -> Worktree:
    """A repository on `main` holding `files` (plus README), and a worktree on `kandev/task` as a task gets one."""
    repository = make_repository(base / "repository")
    for name, text in (files or {}).items():
        (repository / name).parent.mkdir(parents=True, exist_ok=True)
        (repository / name).write_text(text)
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "--allow-empty", "-m", "files")
    folder = base / "work" / "task" / "repository"
    folder.parent.mkdir(parents=True)
    git(repository, "worktree", "add", "-q", "-b", "kandev/task", str(folder), "main")
    common = common_dir(str(repository))
    assert common is not None
    pointer = (folder / ".git").read_text().split(":", 1)[1].strip()
    place = GitPlace(str(folder), os.path.realpath(folder / pointer), common, run_as)
    return Worktree(repository, folder, Checkout(place, "main"))


async def materialized_task(
    services: Any, workspace_id: str, repository_path: Path, title: str = "Task"
) -> tuple[str, Path]:
    """A task on the repository with its worktree made as a turn's launch makes it: (task id, worktree folder)."""
    repository = await services.repositories.create(workspace_id, repository_path.name, str(repository_path))
    created = await services.tasks.create(
        CreateTask(workspace_id=workspace_id, title=title, repositories=[RepositoryChoice(repository.id)])
    )
    task_id = created.task.id
    async with services.ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        folder = await prepare_workdir(uow.db, services.ctx.settings.work_path, task, task.executor_profile_id)
    return task_id, folder

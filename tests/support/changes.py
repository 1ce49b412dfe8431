"""Repositories with a task worktree on a branch of their own, for reading changes as Kandev does."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kandev.domain.changes.git_reader import GitPlace, RunAs
from kandev.domain.changes.places import common_dir
from kandev.domain.changes.reading import Checkout
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

"""Small real git repositories for tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True).stdout.strip()


def make_repository(folder: Path, *, remote: str | None = None, branches: tuple[str, ...] = ()) -> Path:
    """A repository on `main` with one commit, optional extra branches and an `origin` remote URL."""
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.email", "t@example.com")
    git(folder, "config", "user.name", "T")
    (folder / "README").write_text("hello\n")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "init")
    for branch in branches:
        git(folder, "branch", branch)
    if remote:
        git(folder, "remote", "add", "origin", remote)
    return folder


def with_branch_ahead(folder: Path, branch: str = "feature") -> tuple[Path, str, str]:
    """A repository on `main` and `branch` one commit ahead of it, back on main: (its folder, the branch's head,
    main's head), for a provider event to name that branch."""
    work = make_repository(folder)
    git(work, "checkout", "-q", "-b", branch)
    (work / f"{branch}.txt").write_text("new\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", f"work on {branch}")
    head = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "main")
    return work, head, git(work, "rev-parse", "main")

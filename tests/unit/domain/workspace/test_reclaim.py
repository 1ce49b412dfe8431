"""Reclaiming a task's directories removes only what the task's id names under the work dir and never walks
through a link: an attached folder's link goes, its target stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev.domain.workspace.reclaim import ReclaimError, reclaim_task_directories, task_directories

TASK = "0b7c6f7e-8d0a-4c1e-9a53-2f6d1c0e4b11"


def target_with_a_file(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "precious.txt").write_text("keep me\n")
    return folder


def test_the_task_and_scratch_directories_go_with_their_contents(tmp_path: Path):
    work = tmp_path / "work"
    worktree, scratch = task_directories(work, TASK)
    (worktree / "app" / "src").mkdir(parents=True)
    (worktree / "app" / "src" / "main.py").write_text("print()\n")
    scratch.mkdir(parents=True)
    (scratch / "notes").write_text("x\n")

    assert reclaim_task_directories(work, TASK, []) is True
    assert not worktree.exists() and not scratch.exists()
    assert reclaim_task_directories(work, TASK, []) is False  # a second time finds nothing to do


def test_an_attached_folder_link_is_removed_and_its_target_survives(tmp_path: Path):
    work = tmp_path / "work"
    target = target_with_a_file(tmp_path / "attached")
    worktree, _ = task_directories(work, TASK)
    worktree.mkdir(parents=True)
    (worktree / "attached").symlink_to(target, target_is_directory=True)
    (worktree / "app").mkdir()
    (worktree / "app" / "deep-link").symlink_to(target, target_is_directory=True)

    reclaim_task_directories(work, TASK, [])

    assert not worktree.exists()
    assert (target / "precious.txt").read_text() == "keep me\n"


def test_a_task_directory_that_is_itself_a_link_is_unlinked_not_followed(tmp_path: Path):
    work = tmp_path / "work"
    target = target_with_a_file(tmp_path / "elsewhere")
    worktree, _ = task_directories(work, TASK)
    worktree.parent.mkdir(parents=True)
    worktree.symlink_to(target, target_is_directory=True)

    assert reclaim_task_directories(work, TASK, []) is True
    assert not worktree.is_symlink() and (target / "precious.txt").exists()


@pytest.mark.parametrize("task_id", ["..", "../..", "a/b", "", "not-a-uuid", f"{TASK}/..", "/etc"])
def test_anything_but_a_task_id_names_no_directory(tmp_path: Path, task_id: str):
    with pytest.raises(ReclaimError):
        reclaim_task_directories(tmp_path, task_id, [])

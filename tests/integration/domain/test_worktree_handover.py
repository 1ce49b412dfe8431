"""A hostile agent cannot turn the worktree hand-over against the server: while the server (root) creates and hands
over worktrees, a process of the agent's identity keeps rewriting their `.git` files to point at a root-only folder
and planting links where the next worktree goes; nothing outside the agent's trees changes owner or mode."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev.domain.errors import ConflictError
from kandev.domain.workspace.workdirs import add_worktree, clone_folder, prepare_task_directory, remove_worktree
from kandev.models import Repository
from kandev.platform.agent_host import numeric_identity
from tests.support.git_repos import make_repository

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="handing folders to another identity needs root (CI runs as root)"),
]

AGENT_UID = 61950
ROUNDS = 40

# Runs as the agent's identity: rewrite every `.git` file it can reach, and put a link where a worktree will go.
REWRITER = """
import json, os, sys
folders, victim, stop = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
rewrites = plants = 0
current = 0
while current < len(folders) and not os.path.exists(stop):
    folder = folders[current]
    try:
        os.symlink(victim, folder)
        plants += 1
    except OSError:
        pass
    try:
        with open(os.path.join(folder, ".git"), "w") as f:
            f.write("gitdir: " + victim + "\\n")
        rewrites += 1
        current += 1  # this one is rewritten the moment it became possible: on to the next worktree
    except OSError:
        pass
print(json.dumps({"rewrites": rewrites, "plants": plants}))
"""


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-traversable folder: only kandev's own modes keep the agent out."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-handover-"))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def snapshot(*roots: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, int, int]]:
    """Owner, group and mode of everything under `roots` (without following links), but `skip` and below."""
    seen = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            if any(Path(folder).is_relative_to(s) for s in skip):
                dirs.clear()
                continue
            for name in [folder, *(os.path.join(folder, f) for f in files + dirs)]:
                if any(Path(name).is_relative_to(s) for s in skip):
                    continue
                info = os.lstat(name)
                seen[name] = (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
    return seen


def test_rewriting_git_files_during_the_hand_over_never_hands_the_agent_another_folder(base: Path) -> None:
    owner = numeric_identity(AGENT_UID, base / "work")
    victim = base / "root-only"
    victim.mkdir(mode=0o700)
    (victim / "shadow").write_text("root's")
    repository = make_repository(base / "project")
    row = Repository(id="r1", workspace_id="w1", name="project", path=str(repository), default_branch="main")
    folders = [base / "work" / "worktrees" / f"task-{n}" / "project" for n in range(ROUNDS)]
    before = snapshot(victim, repository)
    stop = base / "stop"
    rewriter = subprocess.Popen(
        ["/usr/bin/python3", "-I", "-c", REWRITER, json.dumps([str(f) for f in folders]), str(victim), str(stop)],
        user=owner.uid,
        group=owner.gid,
        extra_groups=[],
        cwd="/",
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for number, folder in enumerate(folders):
            add_worktree(row, folder, f"kandev/task-{number}", "main", owner)
    finally:
        stop.touch()
        out, _ = rewriter.communicate(timeout=30)
    tally = json.loads(out)
    # The rewriter was at work: it rewrote the `.git` files it was given (each only once it was its own).
    assert tally["rewrites"] > 0
    assert tally["plants"] == 0  # a task directory is the server's: nothing can be planted in it
    after = snapshot(victim, repository, skip=(repository / ".git" / "worktrees",))
    assert {path: after.get(path) for path in before} == before  # nothing that was there changed hands
    assert {uid for uid, _, _ in after.values()} == {0}  # what git added (branches, logs) is the server's
    for folder in folders:
        assert (folder.lstat().st_uid, stat.S_IMODE(folder.lstat().st_mode)) == (owner.uid, 0o700)
        assert (folder.parent.lstat().st_uid, folder.parent.lstat().st_gid) == (0, owner.gid)
        assert stat.S_IMODE(folder.parent.lstat().st_mode) == 0o750
    assert stat.S_IMODE((base / "work" / "worktrees").stat().st_mode) == 0o711


def test_removing_a_worktree_whose_admin_folder_the_agent_filled_with_links_removes_only_the_links(
    base: Path,
) -> None:
    owner = numeric_identity(AGENT_UID, base / "work")
    victim = base / "root-only"
    victim.mkdir(mode=0o700)
    (victim / "shadow").write_text("root's")
    repository = make_repository(base / "project")
    row = Repository(id="r1", workspace_id="w1", name="project", path=str(repository), default_branch="main")
    folder = base / "work" / "worktrees" / "task-1" / "project"
    add_worktree(row, folder, "kandev/task-1", "main", owner)
    admin = repository / ".git" / "worktrees" / "project"
    # What the agent may do in what it owns: its admin folder links to a root-only folder, its gitdir points away.
    (admin / "logs").mkdir(exist_ok=True)
    (admin / "logs" / "planted").symlink_to(victim)
    (admin / "gitdir").write_text(f"{victim}/.git\n")
    remove_worktree(row, folder, "kandev/task-1")
    assert (victim / "shadow").read_text() == "root's"
    assert not folder.exists() and not admin.exists()
    assert (
        subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "refs/heads/kandev/task-1"], cwd=repository, check=False
        ).returncode
        != 0
    )


def test_a_worktree_is_not_created_over_an_entry_already_in_the_task_directory(base: Path) -> None:
    owner = numeric_identity(AGENT_UID, base / "work")
    repository = make_repository(base / "project")
    row = Repository(id="r1", workspace_id="w1", name="project", path=str(repository), default_branch="main")
    task_dir = prepare_task_directory(base / "work", "task-1", owner)
    (task_dir / "project").symlink_to(base)
    with pytest.raises(ConflictError, match="already has an entry named project"):
        add_worktree(row, task_dir / "project", "kandev/task-1", "main", owner)
    assert base.lstat().st_uid == 0


def test_a_workspaces_clones_are_reachable_only_by_its_owners_agents(base: Path) -> None:
    owner = numeric_identity(AGENT_UID, base / "work")
    target = clone_folder(base / "work", "workspace-1", "clone-1", owner)
    assert target == base / "work" / "repositories" / "workspace-1" / "clone-1" and not target.exists()
    workspace, root = target.parent.lstat(), target.parent.parent.lstat()
    assert (workspace.st_uid, workspace.st_gid, stat.S_IMODE(workspace.st_mode)) == (0, owner.gid, 0o750)
    assert (root.st_uid, stat.S_IMODE(root.st_mode)) == (0, 0o711)

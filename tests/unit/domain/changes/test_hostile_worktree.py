"""A hostile agent owns its worktree, the `.git` file in it, its git folder (`commondir` included) and may write
config and `.gitattributes`: reading its changes runs none of what they name and shows nothing from outside."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev.domain.changes.diffs import ChangeScope
from kandev.domain.changes.git_reader import GitReadError, RunAs, with_filters_emptied
from kandev.domain.changes.places import MOVED, _place
from kandev.domain.changes.reading import Checkout, file_lines, file_patch, snapshot
from tests.support.changes import Worktree, task_worktree
from tests.support.git_repos import git, make_repository

SECRET = "the server's key: never shown"


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder another identity can traverse (a test's own temp folder is the server's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-hostile-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def program(path: Path, marker: Path) -> str:
    """A script that leaves `marker` if anything ever runs it (and passes its input through)."""
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def arm(tree: Worktree, tmp_path: Path) -> Path:
    """Every program a git config or attribute can name, in the repository's config, the worktree's own config
    and `.gitattributes`; each leaves a marker named after it."""
    markers = tmp_path / "markers"
    markers.mkdir()
    tools = tmp_path / "tools"
    tools.mkdir()
    hooks = tools / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "post-checkout", "pre-commit", "reference-transaction"):
        program(hooks / hook, markers / f"hook-{hook}")

    def named(name: str) -> str:
        return program(tools / name, markers / name)

    settings = {
        "filter.evil.clean": named("filter-clean"),
        "filter.evil.smudge": named("filter-smudge"),
        "filter.evil.process": named("filter-process"),
        "filter.evil.required": "true",
        "diff.evil.command": named("diff-command"),
        "diff.evil.textconv": named("textconv"),
        "diff.external": named("external-diff"),
        "core.fsmonitor": named("fsmonitor"),
        "core.hooksPath": str(hooks),
        "core.pager": named("pager"),
        "pager.diff": named("pager-diff"),
        "credential.helper": "!" + named("credential-helper"),
        "core.sshCommand": named("ssh-command"),
        "gpg.program": named("gpg"),
        "log.showSignature": "true",
        "core.askPass": named("askpass"),
        "remote.origin.url": "ext::" + named("ext-transport") + " %S",
        "remote.origin.promisor": "true",
        "core.worktree": str(tmp_path),  # would put the working tree elsewhere
        "extensions.worktreeConfig": "true",
    }
    for key, value in settings.items():
        git(tree.repository, "config", key, value)
    git(tree.folder, "config", "--worktree", "filter.worse.clean", named("worktree-filter"))
    git(tree.folder, "config", "--worktree", "diff.worse.textconv", named("worktree-textconv"))
    attributes = "* filter=evil diff=evil\n*.py filter=worse diff=worse\n"
    tree.write(".gitattributes", attributes)
    (Path(tree.checkout.place.git_dir) / "info").mkdir(exist_ok=True)
    (Path(tree.checkout.place.git_dir) / "info" / "attributes").write_text(attributes)
    return markers


def read_everything(checkout: Checkout) -> str:
    """Every view of the changes a person can ask for, as one text."""
    seen = []
    for scope in ChangeScope:
        found = snapshot(checkout, scope)
        seen.append(repr(found))
        for change in found.files:
            seen.append(repr(file_patch(checkout, scope, change, 3, include_large=True)))
            seen.append(repr(file_lines(checkout, change.path)))
    return "\n".join(seen)


def test_reading_a_hostile_worktree_runs_none_of_the_programs_its_config_and_attributes_name(tmp_path: Path):
    tree = task_worktree(tmp_path, {"app.py": "print('hi')\n", "notes.txt": "notes\n"})
    markers = arm(tree, tmp_path)
    tree.write("app.py", "print('changed')\n")
    tree.write("notes.txt", "changed notes\n")
    tree.write("new.py", "fresh\n")
    git(
        tree.folder,
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "filter.evil.clean=cat",
        "-c",
        "filter.evil.smudge=cat",
        "-c",
        "filter.evil.process=",
        "-c",
        "filter.worse.clean=cat",
        "-c",
        "core.fsmonitor=false",
        "add",
        "notes.txt",
    )
    for marker in markers.iterdir():
        marker.unlink()  # staging above was ours, with programs off; from here on nothing may run

    place = with_filters_emptied(tree.checkout.place)
    shown = read_everything(Checkout(place, "main"))

    assert sorted(os.listdir(markers)) == []
    assert "print('changed')" in shown and "changed notes" in shown and "fresh" in shown


def test_a_dot_git_file_pointing_at_another_repository_is_not_followed(tmp_path: Path):
    tree = task_worktree(tmp_path, {"app.py": "mine\n"})
    other = make_repository(tmp_path / "other")
    (other / "secret.txt").write_text(SECRET + "\n")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "secret")
    tree.write("app.py", "changed\n")
    (tree.folder / ".git").write_text(f"gitdir: {other / '.git'}\n")

    # Found from the agent's pointer: refused, not followed.
    assert _place(str(tree.repository), tree.folder, None) == (None, MOVED)
    # Read with the git folders the server knows: the pointer is never consulted.
    shown = read_everything(tree.checkout)
    assert SECRET not in shown and "changed" in shown


def test_a_commondir_pointing_at_another_repository_is_not_followed(tmp_path: Path):
    tree = task_worktree(tmp_path, {"app.py": "mine\n"})
    other = make_repository(tmp_path / "other")
    (other / "secret.txt").write_text(SECRET + "\n")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "secret")
    git(other, "branch", "kandev/task")
    (Path(tree.checkout.place.git_dir) / "commondir").write_text(str(other / ".git") + "\n")
    tree.write("app.py", "changed\n")

    place, note = _place(str(tree.repository), tree.folder, None)
    assert place is not None and note is None
    assert place.common_dir == os.path.realpath(tree.repository / ".git")
    shown = read_everything(Checkout(place, "main"))
    assert SECRET not in shown and "secret.txt" not in shown and "changed" in shown


def test_a_link_to_a_server_file_shows_only_its_target_text(tmp_path: Path):
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    key = data_dir / "secret.key"
    key.write_text(SECRET)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "inside.txt").write_text(SECRET)
    tree = task_worktree(tmp_path, {"app.py": "mine\n"})
    (tree.folder / "key").symlink_to(key)
    (tree.folder / "folder").symlink_to(secrets, target_is_directory=True)
    (tree.folder / "tracked_key").symlink_to(key)
    git(tree.folder, "add", "tracked_key")

    shown = read_everything(tree.checkout)

    assert SECRET not in shown
    assert str(key) in shown  # the link's own text is what it is
    assert "inside.txt" not in shown


def test_a_file_swapped_for_a_link_after_listing_is_not_read(tmp_path: Path):
    tree = task_worktree(tmp_path, {})
    tree.write("later.txt", "innocent\n")
    [listed] = snapshot(tree.checkout, ChangeScope.ALL).files
    (tree.folder / "later.txt").unlink()
    (tree.folder / "later.txt").symlink_to("/etc/hostname")
    patch = file_patch(tree.checkout, ChangeScope.ALL, listed, 3, False)
    assert [line.text for hunk in patch.hunks for line in hunk.lines] == ["/etc/hostname"]


@pytest.mark.skipif(os.geteuid() != 0, reason="running git as another identity needs root (CI runs as root)")
def test_with_an_agent_identity_git_reads_with_that_identitys_rights_only(open_folder: Path):
    tmp_path = open_folder
    tree = task_worktree(tmp_path, {"app.py": "mine\n"})
    identity = RunAs(61977, 61977)
    for root, dirs, files in os.walk(tmp_path / "work"):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, identity.uid, identity.gid)
    admin = Path(tree.checkout.place.git_dir)
    for root, dirs, files in os.walk(admin):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.lchown(name, identity.uid, identity.gid)
    tree.write("app.py", "changed\n")
    os.lchown(tree.folder / "app.py", identity.uid, identity.gid)
    hard = tmp_path / "root-only"
    hard.write_text(SECRET)
    hard.chmod(0o600)
    os.link(hard, tree.folder / "hardlink.txt")
    as_agent = Checkout(type(tree.checkout.place)(**{**tree.checkout.place.__dict__, "run_as": identity}), "main")

    shown = read_everything(as_agent)
    assert "changed" in shown and SECRET not in shown and "hardlink.txt" not in shown

    (admin / "index").chmod(0o600)
    os.chown(admin / "index", 0, 0)  # now only the server could read the worktree's index
    with pytest.raises(GitReadError):
        snapshot(as_agent, ChangeScope.ALL)


def test_discarding_in_a_hostile_worktree_runs_nothing_and_stays_inside(tmp_path: Path):
    from kandev.domain.changes.discard import HunkChoice, discard_files, discard_hunk

    lines = "".join(f"row {n}\n" for n in range(1, 30))
    tree = task_worktree(tmp_path, {"app.py": lines, "notes.txt": "notes\n"})
    markers = arm(tree, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET)
    tree.write("app.py", lines.replace("row 2\n", "ROW 2\n").replace("row 25\n", "ROW 25\n"))
    tree.write("notes.txt", "changed notes\n")
    for marker in markers.iterdir():
        marker.unlink()
    checkout = Checkout(with_filters_emptied(tree.checkout.place), "main")

    [change] = [f for f in snapshot(checkout, ChangeScope.UNCOMMITTED).files if f.path == "app.py"]
    first = file_patch(checkout, ChangeScope.UNCOMMITTED, change, 3, False).hunks[0]
    assert discard_hunk(checkout, HunkChoice("app.py", first.header)) == ["app.py"]
    assert discard_files(checkout, ["notes.txt"]) == ["notes.txt"]

    assert sorted(os.listdir(markers)) == []
    assert (tree.folder / "app.py").read_text() == lines.replace("row 25\n", "ROW 25\n")
    assert (tree.folder / "notes.txt").read_text() == "notes\n"
    assert (outside / "notes.txt").read_text() == SECRET

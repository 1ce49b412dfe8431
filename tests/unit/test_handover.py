"""Handing folders to an agent identity through descriptors: never through a link, never outside the tree."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kandev.platform.handover import Owner, UnsafePath, ensure_dir, give_tree, make_dir, opened_dir, remove_tree

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="changing owners needs root (CI runs the suite as root)")

AGENT = Owner(61990, 61990)
PREVIOUS = Owner(61991, 61991)


def owner_of(path: Path) -> tuple[int, int]:
    info = path.lstat()
    return info.st_uid, info.st_gid


def test_a_tree_is_given_whole_with_links_changed_as_links_and_their_targets_untouched(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("root's")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "file").write_text("x")
    (tree / "link-dir").symlink_to(outside)
    (tree / "a" / "link-file").symlink_to(outside / "secret")
    give_tree(tree, AGENT, top_mode=0o700)
    mine = [tree, tree / "a", tree / "a" / "b", tree / "a" / "b" / "file", tree / "link-dir", tree / "a" / "link-file"]
    assert {owner_of(path) for path in mine} == {(AGENT.uid, AGENT.gid)}
    assert stat.S_IMODE(tree.stat().st_mode) == 0o700
    assert owner_of(outside) == owner_of(outside / "secret") == (0, 0)


def test_a_second_hard_link_to_a_file_is_left_as_it_was(tmp_path: Path) -> None:
    elsewhere = tmp_path / "passwd"
    elsewhere.write_text("root's")
    tree = tmp_path / "tree"
    tree.mkdir()
    os.link(elsewhere, tree / "planted")
    give_tree(tree, AGENT)
    assert owner_of(elsewhere) == (0, 0)


def test_re_owning_a_tree_changes_only_what_the_previous_identity_or_the_server_owned(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "theirs").mkdir(parents=True)
    (tree / "stranger").write_text("someone else's")
    os.chown(tree, PREVIOUS.uid, PREVIOUS.gid)
    os.chown(tree / "theirs", PREVIOUS.uid, PREVIOUS.gid)
    os.chown(tree / "stranger", 4242, 4242)
    give_tree(tree, AGENT, previous=PREVIOUS)
    assert owner_of(tree) == owner_of(tree / "theirs") == (AGENT.uid, AGENT.gid)
    assert owner_of(tree / "stranger") == (4242, 4242)


def test_making_a_folder_over_a_planted_link_is_refused_and_the_target_keeps_its_owner(tmp_path: Path) -> None:
    target = tmp_path / "root-only"
    target.mkdir(mode=0o700)
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "task").symlink_to(target)
    with opened_dir(parent) as fd, pytest.raises(UnsafePath):
        make_dir(fd, "task", 0o750, AGENT)
    assert owner_of(target) == (0, 0) and stat.S_IMODE(target.stat().st_mode) == 0o700


def test_a_folder_is_made_with_exactly_its_mode_and_owner_and_kept_when_it_exists(tmp_path: Path) -> None:
    folder = ensure_dir(tmp_path / "roots", 0o711)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o711 and owner_of(folder) == (0, 0)
    with opened_dir(folder) as fd:
        assert make_dir(fd, "task", 0o750, Owner(0, AGENT.gid)) is True
        assert make_dir(fd, "task", 0o750, Owner(0, AGENT.gid)) is False
    assert owner_of(folder / "task") == (0, AGENT.gid) and stat.S_IMODE((folder / "task").stat().st_mode) == 0o750
    with opened_dir(folder) as fd, pytest.raises(UnsafePath):
        make_dir(fd, "../escape", 0o700)


def test_removing_a_tree_removes_links_as_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "link").symlink_to(outside)
    assert remove_tree(tree) is True
    assert not tree.exists() and (outside / "keep").read_text() == "kept"
    assert remove_tree(tree) is False

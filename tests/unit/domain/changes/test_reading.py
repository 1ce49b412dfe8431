"""Reading a task worktree's changes with git, each kind of change on a real repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kandev.domain.changes.diffs import TOO_LARGE_LINES, ChangeScope, FileStatus, LineKind
from kandev.domain.changes.git_reader import with_filters_emptied
from kandev.domain.changes.reading import file_lines, file_patch, snapshot
from tests.support.changes import Worktree, task_worktree
from tests.support.git_repos import git


@pytest.fixture
def tree(tmp_path: Path) -> Worktree:
    return task_worktree(
        tmp_path,
        {
            "app.py": "".join(f"line {n}\n" for n in range(1, 11)),
            "old_name.txt": "a stable file\nwith two lines\n",
            "gone.txt": "to be deleted\n",
            "tool.sh": "echo hi\n",
            "kind.txt": "a file that becomes a link\n",
        },
    )


def by_path(files):
    return {f.path: f for f in files}


def test_every_status_is_read_from_a_real_worktree(tree: Worktree):
    tree.write("app.py", "".join(f"line {n}\n" for n in range(1, 11)).replace("line 5\n", "LINE FIVE\n"))
    git(tree.folder, "mv", "old_name.txt", "new_name.txt")
    (tree.folder / "gone.txt").unlink()
    (tree.folder / "tool.sh").chmod(0o755)
    (tree.folder / "kind.txt").unlink()
    (tree.folder / "kind.txt").symlink_to("app.py")
    tree.write("copy_of_app.py", (tree.folder / "app.py").read_text())
    git(tree.folder, "add", "copy_of_app.py")
    tree.write("fresh.txt", "one\ntwo\nthree\n")

    files = by_path(snapshot(tree.checkout, ChangeScope.ALL).files)

    assert files["app.py"].status == FileStatus.MODIFIED
    assert (files["app.py"].additions, files["app.py"].deletions) == (1, 1)
    assert files["new_name.txt"].status == FileStatus.RENAMED and files["new_name.txt"].old_path == "old_name.txt"
    assert files["gone.txt"].status == FileStatus.DELETED and files["gone.txt"].deletions == 1
    assert (files["tool.sh"].old_mode, files["tool.sh"].new_mode) == ("100644", "100755")
    assert files["tool.sh"].additions == files["tool.sh"].deletions == 0
    assert files["kind.txt"].status == FileStatus.TYPE_CHANGED and files["kind.txt"].new_mode == "120000"
    assert files["copy_of_app.py"].status == FileStatus.COPIED and files["copy_of_app.py"].old_path == "app.py"
    assert files["fresh.txt"].status == FileStatus.ADDED and files["fresh.txt"].untracked
    assert files["fresh.txt"].additions == 3


def test_a_modified_files_hunk_carries_numbered_lines(tree: Worktree):
    tree.write("app.py", "".join(f"line {n}\n" for n in range(1, 11)).replace("line 5\n", "LINE FIVE\n"))
    [change] = snapshot(tree.checkout, ChangeScope.ALL).files
    [hunk] = file_patch(tree.checkout, ChangeScope.ALL, change, context=2, include_large=False).hunks
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (3, 5, 3, 5)
    assert [(line.kind, line.old_number, line.new_number, line.text) for line in hunk.lines] == [
        (LineKind.CONTEXT, 3, 3, "line 3"),
        (LineKind.CONTEXT, 4, 4, "line 4"),
        (LineKind.DELETE, 5, None, "line 5"),
        (LineKind.ADD, None, 5, "LINE FIVE"),
        (LineKind.CONTEXT, 6, 6, "line 6"),
        (LineKind.CONTEXT, 7, 7, "line 7"),
    ]
    assert hunk.header.startswith("@@ -3,5 +3,5 @@")


def test_scopes_split_committed_from_uncommitted_work(tree: Worktree):
    tree.write("committed.txt", "in a commit\n")
    tree.commit("first task commit")
    tree.write("pending.txt", "not committed\n")

    everything = snapshot(tree.checkout, ChangeScope.ALL)
    committed = snapshot(tree.checkout, ChangeScope.COMMITTED)
    uncommitted = snapshot(tree.checkout, ChangeScope.UNCOMMITTED)

    assert [f.path for f in everything.files] == ["committed.txt", "pending.txt"]
    assert [f.path for f in committed.files] == ["committed.txt"]
    assert [f.path for f in uncommitted.files] == ["pending.txt"]
    assert (everything.ahead, everything.behind) == (1, 0)
    assert [c.message for c in everything.commits] == ["first task commit"]
    assert everything.base_commit == git(tree.repository, "rev-parse", "main")
    assert everything.head_commit == git(tree.folder, "rev-parse", "HEAD")


def test_the_diff_is_against_the_merge_base_and_behind_counts_the_base_branchs_new_commits(tree: Worktree):
    fork = git(tree.repository, "rev-parse", "main")
    (tree.repository / "upstream.txt").write_text("landed on main meanwhile\n")
    git(tree.repository, "add", "upstream.txt")
    git(tree.repository, "commit", "-q", "-m", "upstream")
    tree.write("mine.txt", "mine\n")
    found = snapshot(tree.checkout, ChangeScope.ALL)
    assert found.base_commit == fork
    assert [f.path for f in found.files] == ["mine.txt"]  # main's new file is not the task's change
    assert (found.ahead, found.behind) == (0, 1)


def test_a_binary_file_is_flagged_and_has_no_hunks(tree: Worktree):
    tree.write("image.bin", b"\x89PNG\r\n\x1a\n\0\0\0binary")
    tree.write("app.py", b"line 1\n\0 now binary\n")
    files = by_path(snapshot(tree.checkout, ChangeScope.ALL).files)
    assert files["image.bin"].binary and files["app.py"].binary
    patch = file_patch(tree.checkout, ChangeScope.ALL, files["app.py"], 3, False)
    assert patch.hunks == [] and patch.binary


def test_a_file_over_the_line_limit_has_hunks_only_on_request(tree: Worktree):
    tree.write("big.txt", "".join(f"{n}\n" for n in range(TOO_LARGE_LINES + 5)))
    git(tree.folder, "add", "big.txt")
    [big] = snapshot(tree.checkout, ChangeScope.ALL).files
    assert big.too_large and big.additions == TOO_LARGE_LINES + 5
    left_out = file_patch(tree.checkout, ChangeScope.ALL, big, 3, include_large=False)
    assert left_out.hunks == [] and left_out.left_out
    [hunk] = file_patch(tree.checkout, ChangeScope.ALL, big, 3, include_large=True).hunks
    assert len(hunk.lines) == TOO_LARGE_LINES + 5


def test_a_file_over_one_mebibyte_is_too_large(tree: Worktree):
    tree.write("wide.txt", "x" * (1024 * 1024 + 10) + "\n")
    [wide] = snapshot(tree.checkout, ChangeScope.ALL).files
    assert wide.too_large and wide.untracked


def test_text_that_is_not_utf8_is_shown_with_replacement_characters_and_flagged(tree: Worktree):
    tree.write("app.py", b"line 1\n" + "caf\xe9 latin-1\n".encode("latin-1"))
    git(tree.folder, "add", "app.py")
    [change] = snapshot(tree.checkout, ChangeScope.ALL).files
    patch = file_patch(tree.checkout, ChangeScope.ALL, change, 3, False)
    assert patch.invalid_utf8
    added = [line.text for hunk in patch.hunks for line in hunk.lines if line.kind == LineKind.ADD]
    assert "caf\ufffd latin-1" in added


def test_a_symlink_shows_its_target_text_never_the_targets_content(tree: Worktree, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET CONTENT\n")
    (tree.folder / "tracked_link").symlink_to(secret)
    git(tree.folder, "add", "tracked_link")
    (tree.folder / "untracked_link").symlink_to(secret)
    files = by_path(snapshot(tree.checkout, ChangeScope.ALL).files)
    for name in ("tracked_link", "untracked_link"):
        assert files[name].new_mode == "120000"
        patch = file_patch(tree.checkout, ChangeScope.ALL, files[name], 3, False)
        texts = [line.text for hunk in patch.hunks for line in hunk.lines]
        assert texts == [str(secret)], name


def test_a_submodule_shows_its_old_and_new_commits(tree: Worktree, tmp_path: Path):
    from tests.support.git_repos import make_repository

    library = make_repository(tmp_path / "library")
    first = git(library, "rev-parse", "HEAD")
    git(tree.folder, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    tree.commit("add lib")
    (library / "more.txt").write_text("more\n")
    git(library, "add", ".")
    git(library, "commit", "-q", "-m", "more")
    second = git(library, "rev-parse", "HEAD")
    git(tree.folder / "lib", "-c", "protocol.file.allow=always", "pull", "-q", "origin", "main")
    files = by_path(snapshot(tree.checkout, ChangeScope.UNCOMMITTED).files)
    assert files["lib"].new_mode == "160000"
    patch = file_patch(tree.checkout, ChangeScope.UNCOMMITTED, files["lib"], 3, False)
    assert (patch.old_submodule_commit, patch.new_submodule_commit) == (first, second)


def test_an_unmerged_file_is_listed_once_as_unmerged(tree: Worktree):
    tree.write("app.py", "mine\n")
    tree.commit("mine")
    git(tree.repository, "checkout", "-q", "-b", "other", "main")
    (tree.repository / "app.py").write_text("theirs\n")
    git(tree.repository, "commit", "-q", "-am", "theirs")
    git(tree.repository, "checkout", "-q", "main")
    merged = subprocess.run(["git", "merge", "other"], cwd=tree.folder, capture_output=True, check=False)
    assert merged.returncode != 0
    files = snapshot(tree.checkout, ChangeScope.UNCOMMITTED).files
    assert [(f.path, f.status) for f in files] == [("app.py", FileStatus.UNMERGED)]


def test_a_missing_base_branch_is_said_in_a_note(tree: Worktree):
    tree.write("x.txt", "x\n")
    checkout = type(tree.checkout)(tree.checkout.place, "no-such-branch")
    found = snapshot(checkout, ChangeScope.ALL)
    assert found.note is not None and "no-such-branch" in found.note


def test_file_lines_read_the_working_tree_or_a_commit(tree: Worktree):
    tree.write("app.py", "changed\n")
    base = git(tree.repository, "rev-parse", "main")
    assert file_lines(tree.checkout, "app.py") == ["changed"]
    assert file_lines(tree.checkout, "app.py", base) == [f"line {n}" for n in range(1, 11)]
    assert file_lines(tree.checkout, "nowhere.txt") is None


def test_the_diff_key_changes_when_the_file_changes_again(tree: Worktree):
    tree.write("app.py", "first\n")
    [before] = snapshot(tree.checkout, ChangeScope.ALL).files
    assert [f.key for f in snapshot(tree.checkout, ChangeScope.ALL).files] == [before.key]
    tree.write("app.py", "second version\n")
    os.utime(tree.folder / "app.py", ns=(1, 1))
    [after] = snapshot(tree.checkout, ChangeScope.ALL).files
    assert after.key != before.key


def test_filter_drivers_are_emptied_for_every_call(tree: Worktree):
    place = with_filters_emptied(tree.checkout.place)
    git(tree.folder, "config", "filter.evil.clean", "false")
    assert with_filters_emptied(place).filters["filter.evil.clean"] == ""

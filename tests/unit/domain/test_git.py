"""The hardened git runner: a repository's hooks, fsmonitor, filters and exotic transports never run."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from kandev.domain.workspace.git import git, run_git
from tests.support.git_repos import make_repository


def marker_script(path: Path, marker: Path) -> Path:
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_the_runner_turns_hooks_and_fsmonitor_off_over_the_repositorys_own_config(tmp_path):
    repo = make_repository(tmp_path / "repo")
    subprocess.run(["git", "config", "core.hooksPath", str(tmp_path / "hooks")], cwd=repo, check=True)
    subprocess.run(["git", "config", "core.fsmonitor", str(tmp_path / "monitor")], cwd=repo, check=True)
    assert git("config", "--get", "core.hooksPath", cwd=repo) == "/dev/null"
    assert git("config", "--get", "core.fsmonitor", cwd=repo) == "false"
    assert git("config", "--get", "protocol.allow", cwd=repo) == "never"
    allowed = {name: _allowed(repo, name) for name in ("https", "ssh", "file", "ext", "git", "http")}
    assert allowed == {"https": "always", "ssh": "always", "file": "user", "ext": "", "git": "", "http": ""}
    assert git("config", "--get", "submodule.recurse", cwd=repo) == "false"


def _allowed(repo: Path, protocol: str) -> str:
    return run_git("config", "--get", f"protocol.{protocol}.allow", cwd=repo).stdout.strip()


def test_a_checkout_runs_no_hook_fsmonitor_or_filter_of_the_repository(tmp_path):
    repo = make_repository(tmp_path / "repo")
    markers = tmp_path / "markers"
    markers.mkdir()
    hook = marker_script(repo / ".git" / "hooks" / "post-checkout", markers / "hook")
    monitor = marker_script(tmp_path / "monitor.sh", markers / "fsmonitor")
    (repo / ".gitattributes").write_text("* filter=evil\n*.md filter=x=y\n")
    (repo / "notes.md").write_text("notes\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "attributes"], cwd=repo, check=True)
    for key, value in (
        ("core.fsmonitor", str(monitor)),
        ("filter.evil.smudge", f"touch '{markers / 'smudge'}'; cat"),
        ("filter.x=y.smudge", f"touch '{markers / 'smuggled'}'; cat"),
    ):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    assert hook.exists()
    git("worktree", "add", "-b", "topic", str(tmp_path / "tree"), "main", cwd=repo)
    git("checkout", "-q", "-b", "other", cwd=tmp_path / "tree")
    git("status", cwd=tmp_path / "tree")
    assert (tmp_path / "tree" / "README").read_text() == "hello\n"
    assert sorted(os.listdir(markers)) == []
    # the same checkout with plain git runs them: the repository really is hostile
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "plain", str(tmp_path / "plain"), "main"], cwd=repo, check=True
    )
    assert {"hook", "smudge", "smuggled"} <= set(os.listdir(markers))


@pytest.mark.parametrize("url", ["ext::sh -c touch% {marker}", "fd::17", "git://127.0.0.1:1/x", "http://127.0.0.1:1/x"])
def test_transports_other_than_https_ssh_and_file_are_refused(tmp_path, url):
    marker = tmp_path / "ext-ran"
    done = run_git("clone", "--", url.format(marker=marker), str(tmp_path / "clone"), cwd=tmp_path, timeout=30)
    assert done.returncode != 0
    assert "not allowed" in done.stderr
    assert not marker.exists()
    assert not (tmp_path / "clone").exists()


def test_git_does_not_follow_a_submodule_url_into_another_checkout_on_this_machine(tmp_path):
    other = make_repository(tmp_path / "other")
    repo = make_repository(tmp_path / "repo")
    subprocess.run(
        ["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "vendored"],
        cwd=repo,
        check=True,
    )
    subprocess.run(["git", "commit", "-qm", "submodule"], cwd=repo, check=True)
    git("clone", "-q", f"file://{repo}", str(tmp_path / "clone"))
    done = run_git("submodule", "update", "--init", cwd=tmp_path / "clone")
    assert done.returncode != 0 and "not allowed" in done.stderr
    assert not (tmp_path / "clone" / "vendored" / "README").exists()

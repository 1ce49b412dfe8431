"""pushTaskBranch: the task's branch pushed from the repository (never the agent's worktree) to its remote, a local
bare one or a code host's over TLS with the connection's token handed to git for that one call (never in argv, a
URL, a config file or a log); never to the default branch; a rejected push changes nothing."""

from __future__ import annotations

import logging
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from kandev.domain.github.connections import GithubService
from kandev.models import TaskRepository
from tests.support.fake_github import FakeGitHub
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, make_repository
from tests.support.shipping import COMMIT, PUSH, bare_remote, ref, shippable_task, task_branch, with_identity

TOKEN = "tok-5d1c9e07-ship-push"
READ_ONLY = "tok-2b7f4a10-read-only"


async def push(gql: Any, task_id: str, **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = (await gql(PUSH, input={"taskId": task_id, **fields}))["pushTaskBranch"]
    return found


async def commit(gql: Any, task_id: str, message: str) -> str:
    found = (await gql(COMMIT, input={"taskId": task_id, "message": message}))["commitTaskChanges"]
    assert found["__typename"] == "CommitPayload", found
    return str(found["commit"]["sha"])


async def test_a_push_lands_the_tasks_branch_on_a_local_bare_remote_once(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "a.txt").write_text("a\n")
    sha = await commit(gql, task_id, "A")
    branch = await task_branch(services, task_id)
    first = await push(gql, task_id)
    assert first == {"__typename": "PushPayload", "push": {"branch": branch, "sha": sha, "changed": True}}
    assert ref(bare, f"refs/heads/{branch}") == sha
    again = await push(gql, task_id)
    assert again["push"]["changed"] is False


async def test_the_default_branch_is_never_pushed_to(services, gql, workspace_id, tmp_path):
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    task_id, folder = await shippable_task(services, workspace_id, work)
    before = ref(bare, "refs/heads/main")
    async with services.ctx.unit_of_work() as uow:  # a task working on the default branch itself
        await uow.db.execute(update(TaskRepository).where(TaskRepository.task_id == task_id).values(branch="main"))
    refused = await push(gql, task_id)
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "protected_branch")
    assert ref(bare, "refs/heads/main") == before


async def test_a_push_the_remote_rejects_leaves_it_as_it_was_and_a_stale_lease_is_refused(
    services, gql, workspace_id, tmp_path
):
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "a.txt").write_text("a\n")
    await commit(gql, task_id, "A")
    branch = await task_branch(services, task_id)
    assert (await push(gql, task_id))["__typename"] == "PushPayload"
    # Someone else adds a commit to the remote branch.
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", "-b", branch, str(bare), str(other)], check=True)
    (other / "theirs.txt").write_text("theirs\n")
    git(other, "add", ".")
    git(other, "-c", "user.name=O", "-c", "user.email=o@x", "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", branch)
    theirs = ref(bare, f"refs/heads/{branch}")
    (folder / "b.txt").write_text("b\n")
    await commit(gql, task_id, "B")
    rejected = await push(gql, task_id)
    assert (rejected["code"], rejected["fields"]["reason"]) == ("UNPROCESSABLE", "push_rejected"), rejected
    stale = await push(gql, task_id, forceWithLease=True)
    assert (stale["code"], stale["fields"]["reason"]) == ("UNPROCESSABLE", "stale_lease"), stale
    assert ref(bare, f"refs/heads/{branch}") == theirs


async def test_the_repositorys_config_does_not_redirect_the_push(services, gql, workspace_id, tmp_path):
    """A planted `insteadOf`/`pushurl` would send the branch (and a token) elsewhere: the push goes to the remote
    the repository was registered with, from a git dir that reads none of its config."""
    await with_identity(gql)
    work, bare = bare_remote(tmp_path)
    attacker = tmp_path / "attacker.git"
    subprocess.run(["git", "init", "-q", "--bare", str(attacker)], check=True)
    task_id, folder = await shippable_task(services, workspace_id, work)
    git(work, "config", f"url.{attacker}.insteadOf", str(bare))
    git(work, "config", f"url.{attacker}.pushInsteadOf", str(bare))
    git(work, "config", "remote.origin.pushurl", str(attacker))
    (folder / "a.txt").write_text("a\n")
    sha = await commit(gql, task_id, "A")
    assert (await push(gql, task_id))["__typename"] == "PushPayload"
    branch = await task_branch(services, task_id)
    assert ref(bare, f"refs/heads/{branch}") == sha
    assert git(attacker, "for-each-ref") == ""


@pytest.fixture
def git_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHttpServer]:
    with git_http_server(tmp_path / "git-http", read_tokens={READ_ONLY}, push_tokens={TOKEN}) as server:
        monkeypatch.setenv("GIT_SSL_CAINFO", server.ca_file)
        yield server


@pytest.fixture
def argv_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every git process's argv (and its environment's GIT_CONFIG_* entries), through a shim first on PATH."""
    shims, log = tmp_path / "shims", tmp_path / "git-argv.log"
    shims.mkdir()
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    (shims / "git").write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nenv | grep "^GIT_CONFIG" >> {log}\nexec {real} "$@"\n'
    )
    (shims / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    return log


class CmdlineWatch:
    """Reads every process's /proc/<pid>/cmdline while active, keeping each that held `needle`."""

    def __init__(self, needle: str) -> None:
        self.needle, self.seen, self.looked = needle.encode(), [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> CmdlineWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as file:
                        line = file.read()
                except OSError:
                    continue
                self.looked += 1
                if self.needle in line:
                    self.seen.append(line)


async def test_a_code_hosts_token_reaches_git_only_through_the_one_call_helper(
    services, gql, workspace_id, tmp_path, github: FakeGitHub, git_server: GitHttpServer, argv_log, caplog
):
    caplog.set_level(logging.DEBUG)
    await with_identity(gql)
    github.tokens[TOKEN] = "maintainer"
    await GithubService(services.ctx).connect(workspace_id, TOKEN)
    work = make_repository(tmp_path / "app")
    bare_from(work, git_server, "acme/app")
    git(work, "remote", "add", "origin", git_server.repository_url("acme/app"))
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "a.txt").write_text("a\n")
    sha = await commit(gql, task_id, "A")
    branch = await task_branch(services, task_id)
    with CmdlineWatch(TOKEN) as watch:
        pushed = await push(gql, task_id)
    assert pushed["__typename"] == "PushPayload", pushed
    assert ref(git_server.bare("acme/app"), f"refs/heads/{branch}") == sha
    assert watch.looked > 0 and watch.seen == []
    # The token went in the Authorization header, and only to the remote it belongs to.
    assert any(token == TOKEN for method, _, token in git_server.requests if method == "POST")
    assert all(TOKEN not in path for _, path, _ in git_server.requests)
    logged = argv_log.read_text()
    assert "push" in logged and TOKEN not in logged
    for place in tmp_path.rglob("*"):
        if place.is_file() and place.stat().st_size < 5_000_000:
            assert TOKEN.encode() not in place.read_bytes(), place
    assert TOKEN not in caplog.text


async def test_a_token_that_may_not_push_is_an_auth_refusal(
    services, gql, workspace_id, tmp_path, github: FakeGitHub, git_server: GitHttpServer
):
    await with_identity(gql)
    github.tokens[READ_ONLY] = "reader"
    await GithubService(services.ctx).connect(workspace_id, READ_ONLY)
    work = make_repository(tmp_path / "app")
    bare_from(work, git_server, "acme/app")
    git(work, "remote", "add", "origin", git_server.repository_url("acme/app"))
    task_id, folder = await shippable_task(services, workspace_id, work)
    (folder / "a.txt").write_text("a\n")
    await commit(gql, task_id, "A")
    refused = await push(gql, task_id)
    assert (refused["code"], refused["fields"]["reason"]) == ("UNPROCESSABLE", "auth"), refused
    assert READ_ONLY not in refused["message"]


async def test_a_branch_the_code_host_protects_is_refused(
    services, gql, workspace_id, tmp_path, github: FakeGitHub, git_server: GitHttpServer
):
    await with_identity(gql)
    github.tokens[TOKEN] = "maintainer"
    await GithubService(services.ctx).connect(workspace_id, TOKEN)
    work = make_repository(tmp_path / "app")
    bare_from(work, git_server, "acme/app")
    git(work, "remote", "add", "origin", git_server.repository_url("acme/app"))
    task_id, folder = await shippable_task(services, workspace_id, work)
    branch = await task_branch(services, task_id)
    github.protected["acme/app"] = {branch}
    (folder / "a.txt").write_text("a\n")
    await commit(gql, task_id, "A")
    refused = await push(gql, task_id)
    assert (refused["code"], refused["fields"]["reason"]) == ("CONFLICT", "protected_branch")
    assert ref(git_server.bare("acme/app"), f"refs/heads/{branch}") is None

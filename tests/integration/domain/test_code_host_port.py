"""A third code host plugs in through the domain's port alone: a Gitea-like test double (kandev.domain.ports.CodeHost)
registered the way kandev.wiring registers GitHub and GitLab makes a task from one of its pull requests, checks the
exact head out and gives the agent's git its credential, and no domain module knows its name.

Git runs against a local TLS smart-HTTP server that requires basic auth, so the fetch only succeeds when the
double's credential reached git through the helper."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

import kandev
from kandev.domain.ports import (
    CODE_HOSTS,
    Contribution,
    ContributionError,
    ContributionRef,
    EventCheckout,
    GitCredential,
)
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Repository, TaskContribution
from kandev.platform.settings import Settings
from tests.support.git_http import GitHttpServer, bare_from, git_http_server
from tests.support.git_repos import git, make_repository

pytestmark = pytest.mark.slow

TOKEN = "tok-gitea-5e1c9a"
_PULL = re.compile(r"https://127\.0\.0\.1/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)/pulls/(?P<number>[0-9]+)")


class GiteaDouble:
    """What a Gitea adapter would be: its URL form, its pull requests (answered from memory) and its token."""

    provider = "gitea"
    branch_prefix = "gitea-pr"
    deliveries = None

    def __init__(self, server: GitHttpServer, head: str) -> None:
        self.server, self.head = server, head
        self.linked: list[tuple[str, int]] = []

    def parse(self, url: str) -> ContributionRef | None:
        found = _PULL.fullmatch(url)
        if found is None:
            return None
        target = f"{found['owner']}/{found['name']}"
        return ContributionRef("gitea", "127.0.0.1", target, int(found["number"]), url)

    def remote_target(self, remote_url: str | None, contribution: Contribution) -> tuple[str, str] | None:
        return None  # never an existing repository of the workspace: the target is cloned

    async def resolve(
        self, db: AsyncSession, settings: Settings, workspace_id: str, ref: ContributionRef
    ) -> Contribution:
        if ref.number != 3:
            raise ContributionError("Gitea does not show this pull request", "not_found")
        return Contribution(
            provider="gitea",
            host="127.0.0.1",
            target=ref.target,
            number=ref.number,
            url=ref.url,
            target_clone_url=self.server.repository_url("acme/app"),
            source_clone_url=self.server.repository_url("contributor/app"),
            source_branch="feature",
            head_sha=self.head,
            base_branch="main",
        )

    async def resolve_event(
        self, db: AsyncSession, settings: Settings, workspace_id: str, checkout: EventCheckout
    ) -> Contribution:
        raise ContributionError("no events from this double", "not_connected")

    async def link(self, db: AsyncSession, task_id: str, contribution: Contribution) -> None:
        self.linked.append((task_id, contribution.number))

    async def credential(
        self, db: AsyncSession, settings: Settings, workspace_id: str, host: str
    ) -> GitCredential | None:
        return GitCredential(host=host, username="gitea-user", token=TOKEN) if host == "127.0.0.1" else None


@pytest.fixture
def git_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHttpServer]:
    with git_http_server(tmp_path / "git-http", read_tokens=set(), push_tokens={TOKEN}) as server:
        monkeypatch.setenv("GIT_SSL_CAINFO", server.ca_file)
        yield server


@pytest.fixture
def gitea(tmp_path: Path, git_server: GitHttpServer) -> Iterator[GiteaDouble]:
    work = make_repository(tmp_path / "app")
    bare_from(work, git_server, "acme/app")
    git(work, "checkout", "-q", "-b", "feature")
    (work / "feature.txt").write_text("new\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "a feature")
    bare_from(work, git_server, "contributor/app")
    double = GiteaDouble(git_server, git(work, "rev-parse", "HEAD"))
    CODE_HOSTS.register(double)
    yield double
    CODE_HOSTS.unregister("gitea")


async def test_a_registered_code_host_double_makes_a_task_from_its_pull_request_with_its_credential(
    services, db, workspace_id, gitea, git_server
):
    created = await services.tasks.create(
        CreateTask(
            workspace_id=workspace_id,
            title="Review the feature",
            repositories=[RepositoryChoice("", url="https://127.0.0.1/acme/app/pulls/3")],
        )
    )
    async with db.read() as s:
        [contribution] = list(await s.scalars(select(TaskContribution)))
        repository = await s.get(Repository, contribution.repository_id)
    assert gitea.linked == [(created.task.id, 3)]
    assert (contribution.provider, contribution.local_branch) == ("gitea", f"gitea-pr-3-{created.task.id[:8]}")
    # The clone and the fetch of the exact head needed the double's token, handed to git by the helper.
    assert repository is not None
    assert git(Path(repository.path), "rev-parse", f"refs/heads/{contribution.local_branch}") == gitea.head
    assert TOKEN not in git(Path(repository.path), "config", "--list")


async def test_a_pull_request_the_double_refuses_creates_nothing(services, db, workspace_id, gitea):
    with pytest.raises(ContributionError, match="does not show this pull request"):
        await services.tasks.create(
            CreateTask(
                workspace_id=workspace_id,
                title="Missing",
                repositories=[RepositoryChoice("", url="https://127.0.0.1/acme/app/pulls/4")],
            )
        )
    async with db.read() as s:
        assert list(await s.scalars(select(TaskContribution))) == []


def test_the_workspace_package_imports_no_code_host() -> None:
    """GitHub and GitLab are reached through the port: the workspace package (contributions, credentials,
    sources) imports neither their packages nor any adapter."""
    workspace = Path(kandev.__file__).parent / "domain" / "workspace"
    providers = ("kandev.domain.github", "kandev.domain.gitlab", "kandev.adapters")
    found = [
        f"{path.name}: {node.module}"
        for path in sorted(workspace.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(providers)
    ]
    assert found == []

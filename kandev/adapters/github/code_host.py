"""GitHub as a code host (kandev.domain.ports.CodeHost, registered at composition): its pull requests as
contributions (the canonical URL `https://<connected host>/<owner>/<repo>/pull/<number>`, resolved with the
workspace connection's token) and that token as git's credential for the connection's host."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.adapters.github.deliveries import GitHubDeliveries
from kandev.adapters.github.requests import GitHubRequests
from kandev.domain.code_requests import HostedRepository
from kandev.domain.errors import ProviderNotConnectedError
from kandev.domain.github.api import (
    GitHubAuthError,
    GitHubError,
    GitHubNotFoundError,
    GitHubRateLimitedError,
    github_api,
)
from kandev.domain.github.connections import workspace_token
from kandev.domain.github.remotes import parse_remote
from kandev.domain.ports import (
    NO_CONNECTION,
    Contribution,
    ContributionError,
    ContributionRef,
    DeliveryReader,
    EventCheckout,
    GitCredential,
)
from kandev.domain.workspace.contributions import target_repository
from kandev.domain.workspace.git_credentials import origin_of
from kandev.models import TaskPullRequest
from kandev.models.base import utcnow
from kandev.platform.settings import Settings

_PULL_URL = re.compile(
    r"https://(?P<host>[a-z0-9.-]+)/(?P<owner>[A-Za-z0-9_.-]{1,100})/(?P<name>[A-Za-z0-9_.-]{1,100})"
    r"/pull/(?P<number>[1-9][0-9]{0,9})"
)


@asynccontextmanager
async def _asking(what: str) -> AsyncIterator[None]:
    """GitHub's refusals as the contribution's (not_found, unreachable, not_connected)."""
    try:
        yield
    except GitHubNotFoundError:
        raise ContributionError(f"GitHub does not show this {what} to the connection", "not_found") from None
    except GitHubRateLimitedError as error:
        raise ContributionError(error.message, "unreachable", reset_at=error.reset_at) from None
    except GitHubAuthError as error:
        raise ContributionError(error.message, "not_connected") from None
    except GitHubError as error:
        raise ContributionError(error.message, "unreachable") from None


# What GitHub expects as the username beside a token over https.
GITHUB_GIT_USERNAME = "x-access-token"


class GitHubCodeHost:
    provider = "github"
    branch_prefix = "pr"
    deliveries: DeliveryReader | None = GitHubDeliveries()

    def remote_target(self, remote_url: str | None, contribution: Contribution) -> tuple[str, str] | None:
        return parse_remote(remote_url)

    def parse(self, url: str) -> ContributionRef | None:
        found = _PULL_URL.fullmatch(url)
        if found is None or ".." in url or found["name"].endswith(".git"):
            return None
        target = f"{found['owner']}/{found['name']}"
        return ContributionRef("github", found["host"], target, int(found["number"]), url)

    async def resolve(
        self, db: AsyncSession, settings: Settings, workspace_id: str, ref: ContributionRef
    ) -> Contribution:
        connected = await workspace_token(db, settings, workspace_id)
        if connected is None:
            raise ContributionError("the workspace has no GitHub connection", "not_connected")
        connection, token = connected
        if ref.host != connection.host.lower():
            raise ContributionError(
                "the pull request is not on the workspace's GitHub host", "host_mismatch", host=connection.host
            )
        async with _asking("pull request"), github_api(settings.github_api_url, token) as client:
            pr = await client.pull_request(ref.target, ref.number)
        if pr.status != "open":
            raise ContributionError(f"the pull request is {pr.status}, not open", "not_open")
        if not pr.head_branch or not pr.head_sha or not pr.head_clone_url or not pr.head_repository:
            raise ContributionError("the pull request has no head branch (its repository may be gone)", "no_head")
        same = pr.head_repository.lower() == ref.target.lower()
        if not pr.can_push or not (same or pr.maintainer_can_modify):
            raise ContributionError(
                "the connection may not push to the pull request's branch (no push access, or a fork that does "
                "not allow edits from maintainers)",
                "no_push_permission",
            )
        return Contribution(
            provider="github",
            host=ref.host,
            target=ref.target,
            number=ref.number,
            url=ref.url,
            target_clone_url=pr.base_clone_url,
            source_clone_url=pr.head_clone_url,
            source_branch=pr.head_branch,
            head_sha=pr.head_sha,
            base_branch=pr.base_branch,
        )

    async def resolve_event(
        self, db: AsyncSession, settings: Settings, workspace_id: str, checkout: EventCheckout
    ) -> Contribution:
        """A pull request event's PR, asked of GitHub afresh (its head branch and commit, its base); a push or a
        check run's branch at the event's commit, cloned from the workspace's repository of that name or from
        the clone URL GitHub gives (never one from the payload)."""
        connected = await workspace_token(db, settings, workspace_id)
        if connected is None:  # no configured repository access: the run works as its automation says
            raise ContributionError("the workspace has no GitHub connection", NO_CONNECTION)
        connection, token = connected
        host = connection.host.lower()
        if checkout.number:
            url = f"https://{host}/{checkout.repository}/pull/{checkout.number}"
            return await self.resolve(
                db, settings, workspace_id, ContributionRef("github", host, checkout.repository, checkout.number, url)
            )
        if not checkout.sha:
            raise ContributionError("the event names no commit", "no_head")
        probe = Contribution("github", host, checkout.repository, 0, "", "", "", checkout.branch, checkout.sha, "")
        known = await target_repository(db, workspace_id, probe)
        clone = known.remote_url if known is not None and known.remote_url and origin_of(known.remote_url) else None
        if clone is None:
            async with _asking("repository"), github_api(settings.github_api_url, token) as client:
                clone = await client.clone_url(checkout.repository)
        return Contribution(
            provider="github",
            host=host,
            target=checkout.repository,
            number=0,
            url=f"https://{host}/{checkout.repository}/tree/{checkout.branch}",
            target_clone_url=clone,
            source_clone_url=clone,
            source_branch=checkout.branch,
            head_sha=checkout.sha,
            base_branch=checkout.base_branch,
        )

    async def link(self, db: AsyncSession, task_id: str, contribution: Contribution) -> None:
        """The pull request linked to the task (followed by number by the link sync)."""
        db.add(
            TaskPullRequest(
                task_id=task_id,
                repository=contribution.target,
                number=contribution.number,
                state="open",
                head_branch=contribution.source_branch,
                head_sha=contribution.head_sha,
                base_branch=contribution.base_branch,
                url=contribution.url,
                updated_at=utcnow(),
            )
        )

    async def credential(
        self, db: AsyncSession, settings: Settings, workspace_id: str, host: str
    ) -> GitCredential | None:
        found = await workspace_token(db, settings, workspace_id)
        if found is None or found[0].host.lower() != host.lower():
            return None
        return GitCredential(host=host.lower(), username=GITHUB_GIT_USERNAME, token=found[1])

    async def hosted(
        self, db: AsyncSession, settings: Settings, workspace_id: str, remote_url: str | None
    ) -> HostedRepository | None:
        parsed = parse_remote(remote_url)
        if parsed is None:
            return None
        found = await workspace_token(db, settings, workspace_id)
        if found is None or found[0].host.lower() != parsed[0]:
            return None
        return HostedRepository("github", parsed[0], parsed[1])

    async def requests(
        self, db: AsyncSession, settings: Settings, workspace_id: str, repository: HostedRepository
    ) -> GitHubRequests:
        found = await workspace_token(db, settings, workspace_id)
        if found is None or found[0].host.lower() != repository.host:
            raise ProviderNotConnectedError(
                "this workspace has no GitHub connection for the repository's host: connect GitHub in the "
                "workspace settings",
                provider="github",
            )
        return GitHubRequests(github_api(settings.github_api_url, found[1]), repository.target)

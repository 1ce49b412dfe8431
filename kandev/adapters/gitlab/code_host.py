"""GitLab as a code host (kandev.domain.ports.CodeHost, registered at composition): its merge requests as
contributions (the canonical URL
`https://<connected host>[/<base path>]/<group>/<subgroups...>/<project>/-/merge_requests/<iid>`, resolved with
the workspace's GitLab connection token; the merge request is linked with `link_task_merge_request`, so the
gitlab-mr tools find it and no second one is opened) and the connection's token as git's credential for its
host."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from kandev.adapters.gitlab.requests import GitLabRequests
from kandev.domain.code_requests import HostedRepository
from kandev.domain.errors import ProviderNotConnectedError
from kandev.domain.gitlab.api import (
    DEVELOPER,
    GitLabAuthError,
    GitLabError,
    GitLabNotFoundError,
    check_project,
    gitlab_api,
    merge_request_of,
)
from kandev.domain.gitlab.connections import workspace_gitlab_credentials
from kandev.domain.gitlab.merge_requests import link_task_merge_request
from kandev.domain.gitlab.remotes import parse_gitlab_remote
from kandev.domain.ports import (
    Contribution,
    ContributionError,
    ContributionRef,
    DeliveryReader,
    EventCheckout,
    GitCredential,
)
from kandev.platform.settings import Settings

_SEGMENT = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}"
_MR_URL = re.compile(
    rf"https://(?P<host>[a-z0-9.-]+)/(?P<path>{_SEGMENT}(?:/{_SEGMENT}){{1,24}})"
    r"/-/merge_requests/(?P<iid>[1-9][0-9]{0,9})"
)


def project_of(path: str, base_path: str) -> str | None:
    """The project path of a URL path below an instance served under `base_path` (e.g. /gitlab), or None when
    the path is not below it or names no group/project."""
    prefix = base_path.strip("/")
    if prefix:
        if not path.lower().startswith(prefix.lower() + "/"):
            return None
        path = path[len(prefix) + 1 :]
    try:
        return check_project(path)
    except ValueError:
        return None


# What GitLab accepts as the username beside a (personal, project or OAuth) access token over https.
GITLAB_GIT_USERNAME = "oauth2"


class GitLabCodeHost:
    provider = "gitlab"
    branch_prefix = "mr"
    deliveries: DeliveryReader | None = None  # GitLab's webhooks fire nothing yet

    def remote_target(self, remote_url: str | None, contribution: Contribution) -> tuple[str, str] | None:
        return parse_gitlab_remote(remote_url, contribution.base_path)

    async def resolve_event(
        self, db: AsyncSession, settings: Settings, workspace_id: str, checkout: EventCheckout
    ) -> Contribution:
        """No automation trigger fires on GitLab events yet: nothing names a GitLab checkout."""
        raise ContributionError("GitLab events do not choose a checkout", "unsupported")

    def parse(self, url: str) -> ContributionRef | None:
        found = _MR_URL.fullmatch(url)
        if found is None or ".." in url or found["path"].endswith(".git"):
            return None
        return ContributionRef("gitlab", found["host"], found["path"], int(found["iid"]), url)

    async def resolve(
        self, db: AsyncSession, settings: Settings, workspace_id: str, ref: ContributionRef
    ) -> Contribution:
        credentials = await workspace_gitlab_credentials(db, settings, workspace_id)
        if credentials is None:
            raise ContributionError("the workspace has no GitLab connection", "not_connected")
        base_path = urlsplit(credentials.base_url).path
        project = project_of(ref.target, base_path)
        if ref.host != credentials.host.lower() or project is None:
            raise ContributionError(
                "the merge request is not on the workspace's GitLab instance", "host_mismatch", host=credentials.host
            )
        try:
            async with gitlab_api(credentials.base_url, credentials.token) as client:
                target = await client.project(project)
                mr = await client.merge_request(project, ref.number, with_source=False)
                source_clone = target.clone_url if mr.source_project_id == target.id else ""
                if mr.source_project_id is not None and mr.source_project_id != target.id:
                    try:
                        source_clone = (await client.project(mr.source_project_id)).clone_url
                    except GitLabNotFoundError:
                        source_clone = ""  # the fork is gone (or hidden from the token)
        except GitLabNotFoundError:
            raise ContributionError("GitLab does not show this merge request to the connection", "not_found") from None
        except GitLabAuthError as error:
            raise ContributionError(error.message, "not_connected") from None
        except GitLabError as error:
            raise ContributionError(error.message, "unreachable") from None
        if mr.state != "opened":
            state = mr.state if mr.state in ("closed", "merged", "locked") else "not open"
            raise ContributionError(f"the merge request is {state}, not open", "not_open")
        if not mr.source_branch or not mr.sha or not source_clone or not target.clone_url:
            raise ContributionError(
                "the merge request has no source branch (its source project may be gone)", "no_head"
            )
        same = mr.source_project_id == target.id
        if target.access_level < DEVELOPER or not (same or mr.allow_collaboration):
            raise ContributionError(
                "the connection may not push to the merge request's source branch (no push access to the project, "
                "or a fork that does not allow commits from members who can merge)",
                "no_push_permission",
            )
        return Contribution(
            provider="gitlab",
            host=ref.host,
            target=project,
            number=ref.number,
            url=ref.url,
            target_clone_url=target.clone_url,
            source_clone_url=source_clone,
            source_branch=mr.source_branch,
            head_sha=mr.sha,
            base_branch=mr.target_branch,
            base_path=base_path,
        )

    async def link(self, db: AsyncSession, task_id: str, contribution: Contribution) -> None:
        """The merge request linked to the task (what the gitlab-mr tools read and reuse)."""
        mr = merge_request_of(
            contribution.target,
            {
                "iid": contribution.number,
                "state": "opened",
                "web_url": contribution.url,
                "source_branch": contribution.source_branch,
                "target_branch": contribution.base_branch,
                "sha": contribution.head_sha,
            },
            contribution.source_clone_url,
        )
        await link_task_merge_request(db, task_id, mr)

    async def credential(
        self, db: AsyncSession, settings: Settings, workspace_id: str, host: str
    ) -> GitCredential | None:
        found = await workspace_gitlab_credentials(db, settings, workspace_id)
        if found is None or found.host.lower() != host.lower():
            return None
        return GitCredential(host=host.lower(), username=GITLAB_GIT_USERNAME, token=found.token)

    async def hosted(
        self, db: AsyncSession, settings: Settings, workspace_id: str, remote_url: str | None
    ) -> HostedRepository | None:
        found = await workspace_gitlab_credentials(db, settings, workspace_id)
        if found is None:
            return None
        base_path = urlsplit(found.base_url).path.rstrip("/")
        parsed = parse_gitlab_remote(remote_url, base_path)
        if parsed is None or parsed[0] != found.host.lower():
            return None
        return HostedRepository("gitlab", parsed[0], parsed[1], base_path)

    async def requests(
        self, db: AsyncSession, settings: Settings, workspace_id: str, repository: HostedRepository
    ) -> GitLabRequests:
        found = await workspace_gitlab_credentials(db, settings, workspace_id)
        if found is None or found.host.lower() != repository.host:
            raise ProviderNotConnectedError(
                "this workspace has no GitLab connection for the repository's host: connect GitLab in the "
                "workspace settings",
                provider="gitlab",
            )
        return GitLabRequests(gitlab_api(found.base_url, found.token), repository.target)

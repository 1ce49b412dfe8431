"""GitHub's pull requests as kandev.domain.ports.RequestApi: open, read (checks, reviews, mergeability), merge,
check logs and review comments of one repository, with the workspace connection's token. GitHub's refusals
become CodeHostRefused with a reason the Ship panel can explain."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from types import TracebackType

from kandev.adapters.host_refusals import refusals as host_refusals
from kandev.domain.code_requests import (
    CheckLog,
    CodeHostRefused,
    HostReviewComment,
    Mergeable,
    MergeMethod,
    NewRequest,
    RequestCheck,
    RequestState,
    RequestStatus,
    ReviewDecision,
)
from kandev.domain.github.api import (
    CheckRun,
    GitHubApi,
    GitHubNotFoundError,
    GitHubRefusedError,
    PullRequest,
)

_DECISIONS = {
    "approved": ReviewDecision.APPROVED,
    "changes_requested": ReviewDecision.CHANGES_REQUESTED,
    "review_required": ReviewDecision.REVIEW_REQUIRED,
}
# GitHub's mergeable_state, in words a person reads on the PR card.
_BLOCKED = {
    "blocked": "required reviews or checks are missing",
    "behind": "the branch is behind its base",
    "unstable": "some checks did not pass",
    "draft": "it is a draft",
}


refusals = partial(host_refusals, "GitHub")


def _mergeable(pr: PullRequest) -> tuple[Mergeable, str]:
    if pr.mergeable is False or pr.mergeable_state == "dirty":
        return Mergeable.CONFLICTING, "the branch conflicts with its base"
    if pr.mergeable_state in _BLOCKED:
        return Mergeable.BLOCKED, _BLOCKED[pr.mergeable_state]
    if pr.mergeable is True:
        return Mergeable.MERGEABLE, ""
    return Mergeable.UNKNOWN, "GitHub is still checking"


def _state(pr: PullRequest) -> RequestState:
    return {"merged": RequestState.MERGED, "closed": RequestState.CLOSED}.get(pr.status, RequestState.OPEN)


class GitHubRequests:
    """One repository's pull requests (kandev.domain.ports.RequestApi)."""

    def __init__(self, client: GitHubApi, repository: str) -> None:
        self._client = client
        self._repository = repository

    async def __aenter__(self) -> GitHubRequests:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._client.aclose()

    def _plain(self, pr: PullRequest) -> RequestStatus:
        """What the pull request itself says (no checks or reviews asked)."""
        mergeable, reason = _mergeable(pr)
        return RequestStatus(
            number=pr.number,
            url=pr.url,
            state=_state(pr),
            draft=pr.draft,
            title=pr.title,
            head_branch=pr.head_branch,
            head_sha=pr.head_sha,
            base_branch=pr.base_branch,
            mergeable=mergeable,
            mergeable_reason=reason,
            review_comments=pr.review_comments,
            merged_at=pr.merged_at,
        )

    async def open(self, new: NewRequest) -> RequestStatus:
        async with refusals("open the pull request"):
            try:
                pr = await self._client.create_pull_request(
                    self._repository, new.head_branch, new.base_branch, new.title, new.body, new.draft
                )
            except GitHubRefusedError as error:
                text = error.detail.lower()
                if "already exists" in text:
                    raise CodeHostRefused(
                        f"a pull request from {new.head_branch} is already open on GitHub", "duplicate_request"
                    ) from None
                if "base invalid" in text or "base branch" in text:
                    raise CodeHostRefused(
                        f"GitHub has no base branch {new.base_branch} (deleted upstream?)", "base_missing"
                    ) from None
                if "head invalid" in text:
                    raise CodeHostRefused(
                        f"GitHub has no branch {new.head_branch}: push the task's branch first", "not_pushed"
                    ) from None
                raise
        return self._plain(pr)

    async def open_from(self, head_branch: str) -> list[RequestStatus]:
        async with refusals("list pull requests"):
            found = await self._client.pull_requests_by_head(self._repository, head_branch, state="open")
        return [self._plain(pr) for pr in found]

    async def status(self, number: int) -> RequestStatus:
        async with refusals("read the pull request"):
            pr = await self._client.pull_request(self._repository, number)
            runs = await self._client.check_runs(self._repository, pr.head_sha) if pr.head_sha else []
            decision = await self._client.review_decision(self._repository, number)
        plain = self._plain(pr)
        checks = tuple(
            RequestCheck(str(run.id), run.name, run.status, run.conclusion, run.url) for run in _latest(runs)
        )
        return replace(plain, checks=checks, review_decision=_DECISIONS.get(decision, ReviewDecision.NONE))

    async def merge(self, number: int, method: MergeMethod, head_sha: str) -> RequestStatus:
        async with refusals("merge the pull request"):
            current = await self._client.pull_request(self._repository, number)
            if current.status == "merged":
                raise CodeHostRefused("the pull request was merged on GitHub already", "merged")
            if current.status == "closed":
                raise CodeHostRefused("the pull request was closed on GitHub", "closed")
            try:
                await self._client.merge_pull_request(self._repository, number, method.value, head_sha)
            except GitHubRefusedError as error:
                detail = error.detail or "GitHub gave no reason"
                if error.status == 409:
                    raise CodeHostRefused(
                        f"the pull request's head moved since it was shown ({detail}): look again", "head_moved"
                    ) from None
                raise CodeHostRefused(f"GitHub will not merge it: {detail}", "not_mergeable") from None
            pr = await self._client.pull_request(self._repository, number)
        return self._plain(pr)

    async def check_logs(self, head_sha: str, checks: Sequence[RequestCheck], limit: int) -> list[CheckLog]:
        logs = []
        async with refusals("read the check logs"):
            runs = {str(run.id): run for run in await self._client.check_runs(self._repository, head_sha)}
            for check in checks:
                run = runs.get(check.id)
                if run is None:
                    continue
                text, cut = run.output, False
                if run.app == "github-actions":
                    try:
                        text, cut = await self._client.job_log(self._repository, run.id, limit)
                    except GitHubNotFoundError:  # logs expired or not kept: the run's own output stays
                        pass
                logs.append(CheckLog(check.id, text[-limit:], cut or len(text) > limit))
        return logs

    async def review_comments(self, number: int) -> list[HostReviewComment]:
        async with refusals("read the review comments"):
            found = await self._client.review_comments(self._repository, number)
        return [
            HostReviewComment(
                id=str(c.id),
                author=c.author,
                body=c.body,
                path=c.path or None,
                line=c.line,
                side="OLD" if c.side == "LEFT" else "NEW",
                url=c.url,
                created_at=c.created_at,
            )
            for c in found
        ]

    async def protected(self, branch: str) -> bool:
        async with refusals("read the branch's protection"):
            return await self._client.branch_protected(self._repository, branch)


def _latest(runs: Sequence[CheckRun]) -> list[CheckRun]:
    """One run per check name: the newest (a re-run replaces the earlier one)."""
    by_name: dict[str, CheckRun] = {}
    for run in sorted(runs, key=lambda r: r.id):
        by_name[run.name] = run
    return list(by_name.values())

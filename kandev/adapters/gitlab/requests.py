"""GitLab's merge requests as kandev.domain.ports.RequestApi: open, read (pipeline jobs as checks, approvals,
mergeability), merge, job logs and diff comments of one project, with the workspace connection's token. GitLab's
refusals become CodeHostRefused with a reason the Ship panel can explain."""

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
from kandev.domain.errors import ValidationError
from kandev.domain.gitlab.api import (
    DRAFT_PREFIX,
    GitLabApi,
    GitLabRefusedError,
    Job,
    MergeRequest,
)

# A job's status as a check: (status, conclusion).
_JOB = {
    "success": ("completed", "success"),
    "failed": ("completed", "failure"),
    "canceled": ("completed", "cancelled"),
    "skipped": ("completed", "skipped"),
    "manual": ("completed", "neutral"),
    "running": ("in_progress", None),
}
_BLOCKED = {
    "ci_must_pass": "the pipeline must pass",
    "ci_still_running": "the pipeline is still running",
    "not_approved": "approvals are missing",
    "draft_status": "it is a draft",
    "discussions_not_resolved": "discussions are not resolved",
    "need_rebase": "it needs a rebase onto its target",
    "blocked_status": "another merge request blocks it",
    "not_open": "it is not open",
}


refusals = partial(host_refusals, "GitLab")


def _check(job: Job) -> RequestCheck:
    status, conclusion = _JOB.get(job.status, ("queued", None))
    return RequestCheck(str(job.id), job.name, status, conclusion, job.url)


def _mergeable(mr: MergeRequest) -> tuple[Mergeable, str]:
    if mr.has_conflicts or mr.merge_status in ("conflict", "cannot_be_merged"):
        return Mergeable.CONFLICTING, "the branch conflicts with its target"
    if mr.merge_status in ("mergeable", "can_be_merged"):
        return Mergeable.MERGEABLE, ""
    if mr.merge_status in _BLOCKED:
        return Mergeable.BLOCKED, _BLOCKED[mr.merge_status]
    return Mergeable.UNKNOWN, "GitLab is still checking"


class GitLabRequests:
    """One project's merge requests (kandev.domain.ports.RequestApi)."""

    def __init__(self, client: GitLabApi, project: str) -> None:
        self._client = client
        self._project = project

    async def __aenter__(self) -> GitLabRequests:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._client.aclose()

    def _plain(self, mr: MergeRequest) -> RequestStatus:
        mergeable, reason = _mergeable(mr)
        state = {"merged": RequestState.MERGED, "opened": RequestState.OPEN}.get(mr.state, RequestState.CLOSED)
        return RequestStatus(
            number=mr.iid,
            url=mr.url,
            state=state,
            draft=mr.draft,
            title=mr.title,
            head_branch=mr.source_branch,
            head_sha=mr.sha,
            base_branch=mr.target_branch,
            mergeable=mergeable,
            mergeable_reason=reason,
            review_comments=mr.notes,
            merged_at=mr.merged_at,
        )

    async def open(self, new: NewRequest) -> RequestStatus:
        title = f"{DRAFT_PREFIX}{new.title}" if new.draft else new.title
        async with refusals("open the merge request"):
            try:
                mr = await self._client.create_merge_request(
                    self._project, new.head_branch, new.base_branch, title, new.body
                )
            except GitLabRefusedError as error:
                text = error.detail.lower()
                if error.status == 409 or "already exists" in text:
                    raise CodeHostRefused(
                        f"a merge request from {new.head_branch} is already open on GitLab", "duplicate_request"
                    ) from None
                if "target" in text or "branch" in text:
                    raise CodeHostRefused(
                        f"GitLab has no target branch {new.base_branch} (deleted upstream?)", "base_missing"
                    ) from None
                raise
        return self._plain(mr)

    async def open_from(self, head_branch: str) -> list[RequestStatus]:
        async with refusals("list merge requests"):
            found = await self._client.merge_requests_by_source_branch(self._project, head_branch, state="opened")
        return [self._plain(mr) for mr in found]

    async def status(self, number: int) -> RequestStatus:
        async with refusals("read the merge request"):
            mr = await self._client.merge_request(self._project, number, with_source=False)
            jobs = await self._client.pipeline_jobs(self._project, mr.pipeline_id) if mr.pipeline_id else []
            approvals = await self._client.approvals(self._project, number)
        if approvals.approved and approvals.approved_by:
            decision = ReviewDecision.APPROVED
        elif approvals.approvals_left > 0:
            decision = ReviewDecision.REVIEW_REQUIRED
        else:
            decision = ReviewDecision.NONE
        return replace(self._plain(mr), checks=tuple(_check(job) for job in jobs), review_decision=decision)

    async def merge(self, number: int, method: MergeMethod, head_sha: str) -> RequestStatus:
        if method == MergeMethod.REBASE:
            raise ValidationError(
                "GitLab merges by the project's own merge method: choose MERGE or SQUASH",
                field="method",
                reason="unsupported_by_host",
            )
        async with refusals("merge the merge request"):
            current = await self._client.merge_request(self._project, number, with_source=False)
            if current.state == "merged":
                raise CodeHostRefused("the merge request was merged on GitLab already", "merged")
            if current.state != "opened":
                raise CodeHostRefused(f"the merge request is {current.state} on GitLab", "closed")
            try:
                mr = await self._client.accept_merge_request(
                    self._project, number, head_sha, method == MergeMethod.SQUASH
                )
            except GitLabRefusedError as error:
                detail = error.detail or "GitLab gave no reason"
                if error.status == 409:
                    raise CodeHostRefused(
                        f"the merge request's head moved since it was shown ({detail}): look again", "head_moved"
                    ) from None
                raise CodeHostRefused(f"GitLab will not merge it: {detail}", "not_mergeable") from None
        return self._plain(mr)

    async def check_logs(self, head_sha: str, checks: Sequence[RequestCheck], limit: int) -> list[CheckLog]:
        logs = []
        async with refusals("read the job logs"):
            for check in checks:
                if check.id.isdigit():
                    text, cut = await self._client.job_trace(self._project, int(check.id), limit)
                    logs.append(CheckLog(check.id, text, cut))
        return logs

    async def review_comments(self, number: int) -> list[HostReviewComment]:
        async with refusals("read the merge request's comments"):
            notes = await self._client.diff_notes(self._project, number)
        return [
            HostReviewComment(
                id=str(n.id),
                author=n.author,
                body=n.body,
                path=n.path,
                line=n.line,
                side="OLD" if n.old_side else "NEW",
                created_at=n.created_at,
            )
            for n in notes
        ]

    async def protected(self, branch: str) -> bool:
        async with refusals("read the branch's protection"):
            return await self._client.branch_protected(self._project, branch)

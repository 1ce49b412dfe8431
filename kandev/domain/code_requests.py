"""Pull requests (GitHub) and merge requests (GitLab) as the domain ships through them, whatever the code host:
the values a code host answers (kandev.domain.ports.RequestApi) and the one error its refusals become. Text a
code host's users wrote (titles, review comments, check logs) is untrusted data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from kandev.domain.errors import ProviderRefusedError


class RequestState(StrEnum):
    OPEN = "OPEN"
    CLOSED = "CLOSED"
    MERGED = "MERGED"


class Mergeable(StrEnum):
    """Whether the host would merge it now: CONFLICTING (the base moved in a way git can't merge), BLOCKED
    (checks, reviews or a draft hold it; `mergeable_reason` says which), UNKNOWN (the host is still working it
    out)."""

    MERGEABLE = "MERGEABLE"
    CONFLICTING = "CONFLICTING"
    BLOCKED = "BLOCKED"
    UNKNOWN = "UNKNOWN"


class ReviewDecision(StrEnum):
    APPROVED = "APPROVED"
    CHANGES_REQUESTED = "CHANGES_REQUESTED"
    REVIEW_REQUIRED = "REVIEW_REQUIRED"
    NONE = "NONE"


class MergeMethod(StrEnum):
    MERGE = "MERGE"
    SQUASH = "SQUASH"
    REBASE = "REBASE"


# A completed check with one of these conclusions failed (the rest passed, or were skipped or neutral).
FAILED_CONCLUSIONS = frozenset({"failure", "timed_out", "cancelled", "action_required", "startup_failure"})


@dataclass(frozen=True)
class HostedRepository:
    """A repository on a code host the workspace is connected to: `target` is owner/name on GitHub, the project
    path on GitLab (`base_path`: a GitLab instance's path prefix)."""

    provider: str
    host: str
    target: str
    base_path: str = ""


@dataclass(frozen=True)
class RequestCheck:
    """One check of a request's head commit (a GitHub check run, a GitLab pipeline job): `status` queued,
    in_progress or completed; `conclusion` (success, failure, ...) once completed."""

    id: str
    name: str
    status: str
    conclusion: str | None
    url: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "completed" and (self.conclusion or "") in FAILED_CONCLUSIONS

    @property
    def pending(self) -> bool:
        return self.status != "completed"

    def to_json(self) -> dict[str, str | None]:
        return {"id": self.id, "name": self.name, "status": self.status, "conclusion": self.conclusion, "url": self.url}

    @classmethod
    def from_json(cls, data: dict[str, str | None]) -> RequestCheck:
        return cls(
            str(data.get("id") or ""),
            str(data.get("name") or ""),
            str(data.get("status") or ""),
            data.get("conclusion"),
            str(data.get("url") or ""),
        )


@dataclass(frozen=True)
class RequestStatus:
    """A pull or merge request as the code host shows it now."""

    number: int
    url: str
    state: RequestState
    draft: bool
    title: str
    head_branch: str
    head_sha: str
    base_branch: str
    review_decision: ReviewDecision = ReviewDecision.NONE
    mergeable: Mergeable = Mergeable.UNKNOWN
    mergeable_reason: str = ""
    checks: tuple[RequestCheck, ...] = ()
    review_comments: int = 0
    merged_at: datetime | None = None

    @property
    def checks_green(self) -> bool:
        """Every check completed and none failed (and there was at least one)."""
        return bool(self.checks) and not any(c.pending or c.failed for c in self.checks)


@dataclass(frozen=True)
class NewRequest:
    head_branch: str
    base_branch: str
    title: str
    body: str
    draft: bool = False


@dataclass(frozen=True)
class HostReviewComment:
    """A review comment made on the code host: on a line of a file (`path`, `line`; side NEW or OLD) or on the
    whole request (no path)."""

    id: str
    author: str
    body: str
    path: str | None = None
    line: int | None = None
    side: str = "NEW"
    url: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True)
class CheckLog:
    """The tail of a failing check's log as the host gave it (not redacted yet), at most the asked size."""

    check_id: str
    text: str
    truncated: bool = False


class CodeHostRefused(ProviderRefusedError):
    """The code host refused or failed a shipping call; `reason` says how (auth, not_found, unreachable,
    rate_limited, duplicate_request, base_missing, not_mergeable, head_moved, closed, merged, refused). The
    message is safe to show: never a token or a response body."""

    def __init__(self, message: str, reason: str, **fields: object) -> None:
        super().__init__(message, reason=reason, **fields)
        self.reason = reason


@dataclass(frozen=True)
class RequestChanges:
    """What a refresh found changed on a request (for events and reactions)."""

    newly_failed: tuple[RequestCheck, ...] = ()
    state_changed: bool = False
    details: dict[str, object] = field(default_factory=dict)

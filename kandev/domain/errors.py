"""The one error hierarchy; each edge (GraphQL, MCP, REST) translates it once."""

from __future__ import annotations

import json
from typing import Any


class DomainError(Exception):
    """Expected failure with a client-safe message and structured fields.

    `fields` reach every client beside `code` (GraphQL, MCP, REST): ids, limits, reasons and the names of
    inputs, never a submitted value. Unset (None) fields are left out."""

    code = "DOMAIN_ERROR"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields: dict[str, Any] = {key: value for key, value in fields.items() if value is not None}

    def wire_fields(self) -> dict[str, Any]:
        """`fields` as plain JSON values, the form every edge sends."""
        loaded: dict[str, Any] = json.loads(json.dumps(self.fields, default=str))
        return loaded


class NotFoundError(DomainError):
    """Unknown or unauthorized id: both get the same answer so ids can't be probed."""

    code = "NOT_FOUND"

    def __init__(self, entity: str, entity_id: str | None = None) -> None:
        # The id stays out of `fields`: it is what the caller sent, and an unknown id is never echoed.
        super().__init__(f"{entity} not found", entity=entity)
        self.entity = entity
        self.entity_id = entity_id


class ValidationError(DomainError):
    """Input that breaks a rule; `field` names the offending input (never echoes its value)."""

    code = "VALIDATION"

    def __init__(self, message: str, field: str | None = None, **fields: Any) -> None:
        super().__init__(message, field=field, **fields)
        self.field = field


class ConflictError(DomainError):
    """The request is valid but the current state does not allow it."""

    code = "CONFLICT"


class AutopilotNeedsMcpError(ConflictError):
    """An autopilot task would run on an agent profile that can't receive the Kandev MCP tools its contract
    relies on (ask_parent_question_kandev): refused, never silently downgraded."""

    code = "AUTOPILOT_NEEDS_MCP"


class UnavailableError(ConflictError):
    """What holds the answer (the worker holding a task's worktree) did not answer in time; `worker` names it.
    A ConflictError to mutations (code UNAVAILABLE); a query error with that code; HTTP 503."""

    code = "UNAVAILABLE"


class PermissionDeniedError(DomainError):
    code = "PERMISSION_DENIED"


class UnprocessableError(ConflictError):
    """Well-formed and allowed, but it could not be carried out here: the executor lacks the capability,
    or git could not materialize a source. A ConflictError to GraphQL and MCP (code UNPROCESSABLE);
    HTTP 422."""

    code = "UNPROCESSABLE"


class ProviderNotConnectedError(ConflictError):
    """The task's workspace has no connection to the code host a call needs (GitHub, GitLab): a person
    connects it in the workspace's settings."""

    code = "PROVIDER_NOT_CONNECTED"


class NoLinkedPullRequestError(ConflictError):
    """The task has no GitHub pull request linked (none from its branches either)."""

    code = "NO_LINKED_PR"


class NoLinkedMergeRequestError(ConflictError):
    """The task has no GitLab merge request linked (none from its branches either)."""

    code = "NO_LINKED_MR"


class ProviderRefusedError(UnprocessableError):
    """The code host refused or failed a call (token rights, unknown reviewer, unreachable); the message is the
    provider client's safe text, never a token or a response body."""

    code = "PROVIDER_ERROR"


class QuotaExceededError(ConflictError):
    """A per-user quota (kandev.domain.quotas) is spent: `quota` names it, `limit` is its size and, for a
    quota over time, `retry_after_seconds` says when the next one fits. HTTP 429 (with Retry-After) for a
    quota over time, else 409."""

    code = "QUOTA_EXCEEDED"

    def __init__(self, message: str, *, quota: str, limit: int, retry_after_seconds: int | None = None) -> None:
        super().__init__(message, quota=quota, limit=limit, retry_after_seconds=retry_after_seconds)
        self.quota = quota
        self.limit = limit
        self.retry_after_seconds = retry_after_seconds


class ScheduleTooFrequentError(ValidationError):
    """A schedule fires more often than KANDEV_QUOTA_MIN_SCHEDULE_SECONDS allows; `field` names the
    expression, `limit` is the shortest interval in seconds."""

    code = "SCHEDULE_TOO_FREQUENT"

"""The kinds of failure a code host's REST API call ends in, whatever the host: each host's client raises its own
subclasses (kandev.domain.github.api, kandev.domain.gitlab.api), and what the domain does about a failure (tell a
person why, retry later, stop) depends only on its kind. The message is safe to show: never a token, never a
response body."""

from __future__ import annotations

from datetime import datetime


class HostApiError(Exception):
    """A call that did not succeed."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class HostAuthError(HostApiError):
    """The token was refused, or lacks the rights for this call."""


class HostNotFoundError(HostApiError):
    """Unknown, or invisible to this token (hosts answer both alike)."""


class HostRateLimitedError(HostApiError):
    """The token's rate limit is spent; `reset_at` says when it refills, when the host said so."""

    def __init__(self, message: str, status: int | None, reset_at: datetime | None) -> None:
        super().__init__(message, status)
        self.reset_at = reset_at


class HostUnreachableError(HostApiError):
    """No usable answer: connection refused, timeout, TLS failure, a redirect, or a 5xx."""


class HostTimeoutError(HostUnreachableError):
    """No answer in time: the call may or may not have taken effect on the host."""


class HostRefusedError(HostApiError):
    """The host understood the call and refused it: `detail` is its own short reason (bounded), never a token."""

    def __init__(self, message: str, status: int | None, detail: str = "") -> None:
        super().__init__(message, status)
        self.detail = detail

"""A code host's API errors as the one error the domain ships with (CodeHostRefused): the reason from the kind of
error (kandev.domain.host_api_errors), the text safe to show. Used by every code host's requests adapter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from kandev.domain.code_requests import CodeHostRefused
from kandev.domain.host_api_errors import (
    HostApiError,
    HostAuthError,
    HostNotFoundError,
    HostRateLimitedError,
    HostRefusedError,
    HostTimeoutError,
)


@asynccontextmanager
async def refusals(host: str, action: str) -> AsyncIterator[None]:
    """`host` (its name, as people know it) failing to do `action` ("merge the pull request") as CodeHostRefused."""
    try:
        yield
    except HostRefusedError as error:
        detail = f": {error.detail}" if error.detail else ""
        raise CodeHostRefused(f"{host} refused to {action}{detail}", "refused", status=error.status) from None
    except HostNotFoundError:
        raise CodeHostRefused(
            f"{host} could not {action}: not found, or not visible to the connection", "not_found"
        ) from None
    except HostRateLimitedError as error:
        raise CodeHostRefused(error.message, "rate_limited", reset_at=error.reset_at) from None
    except HostAuthError as error:
        raise CodeHostRefused(f"{host} refused to {action}: {error.message}", "auth") from None
    except HostTimeoutError:
        raise CodeHostRefused(
            f"{host} did not answer in time to {action}; nothing is tried again until you ask", "unreachable"
        ) from None
    except HostApiError as error:
        raise CodeHostRefused(f"{host} could not {action}: {error.message}", "unreachable") from None

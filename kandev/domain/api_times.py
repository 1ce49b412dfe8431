"""What the code hosts' REST APIs (GitHub, GitLab) write alike."""

from __future__ import annotations

from datetime import UTC, datetime


def api_time(value: object) -> datetime | None:
    """An ISO 8601 timestamp as the APIs write it (`...Z` included) in UTC; None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

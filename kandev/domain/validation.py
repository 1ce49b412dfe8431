"""Small input rules shared by services."""

from __future__ import annotations

from kandev.domain.errors import ValidationError

MAX_TITLE_LENGTH = 200


def clean_title(value: str | None, field: str = "title") -> str:
    """Trimmed, non-empty, at most 200 characters."""
    title = (value or "").strip()
    if not title:
        raise ValidationError("title must not be empty", field=field)
    if len(title) > MAX_TITLE_LENGTH:
        raise ValidationError(f"title must be at most {MAX_TITLE_LENGTH} characters", field=field)
    return title


def clean_name(value: str | None, field: str = "name") -> str:
    name = (value or "").strip()
    if not name:
        raise ValidationError(f"{field} must not be empty", field=field)
    if len(name) > MAX_TITLE_LENGTH:
        raise ValidationError(f"{field} must be at most {MAX_TITLE_LENGTH} characters", field=field)
    return name


def clean_external_id(value: str | None) -> str | None:
    """Trimmed; empty means absent."""
    if value is None:
        return None
    value = value.strip()
    if len(value) > 500:
        raise ValidationError("external_id must be at most 500 characters", field="external_id")
    return value or None

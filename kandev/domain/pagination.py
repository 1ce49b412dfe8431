"""Keyset cursors over (created_at, id): what every oldest- or newest-first page of this API hands back."""

from __future__ import annotations

import base64
from datetime import datetime

from kandev.domain.errors import ValidationError


def encode_cursor(created_at: datetime, row_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{row_id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        created, row_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|", 1)
        return datetime.fromisoformat(created), row_id
    except (ValueError, UnicodeDecodeError):
        raise ValidationError("after is not a cursor from this API", field="after") from None

"""Attachments as clients see them: what the file is, and where its bytes are served."""

from __future__ import annotations

from typing import Any

import strawberry

from kandev.domain.attachments.service import AttachmentRecord

DOWNLOAD_PATH = "/api/v1/attachments/{id}"


@strawberry.type(description="A file given with a prompt; its content type is what its bytes are.")
class Attachment:
    id: strawberry.ID
    name: str
    size: int = strawberry.field(description="Bytes.")
    content_type: str = strawberry.field(
        description="Told by the bytes: image/png, image/jpeg, image/gif, image/webp, application/pdf, text/plain "
        "or application/octet-stream."
    )
    url: str = strawberry.field(
        description="GET it with the same credentials as /graphql; images are served inline, everything else as "
        "a download, always with a sandboxing Content-Security-Policy."
    )

    @classmethod
    def of(cls, record: AttachmentRecord) -> Attachment:
        return cls.of_summary(record.summary())

    @classmethod
    def of_summary(cls, summary: dict[str, Any]) -> Attachment:
        attachment_id = str(summary["id"])
        return cls(
            id=strawberry.ID(attachment_id),
            name=str(summary["name"]),
            size=int(summary["size"]),
            content_type=str(summary["content_type"]),
            url=DOWNLOAD_PATH.format(id=attachment_id),
        )


def message_attachments(data: dict[str, Any]) -> list[Attachment]:
    """The attachments a transcript message recorded when its prompt was sent."""
    found = data.get("attachments")
    return [Attachment.of_summary(item) for item in found] if isinstance(found, list) else []

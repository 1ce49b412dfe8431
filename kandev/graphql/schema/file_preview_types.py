"""filePreview's answer: text, an image told by its bytes, or why the file can't be previewed."""

from __future__ import annotations

import base64
from typing import Annotated, TypeAlias

import strawberry

from kandev.domain.tasks import file_preview as preview
from kandev.graphql.schema.errors import ExpectedError

strawberry.enum(
    preview.PreviewUnavailableReason,
    name="FilePreviewUnavailableReason",
    description="MISSING: no such file (or the task's files don't exist yet); NOT_A_FILE: a folder or special "
    "file; TOO_LARGE: over 1 MiB; BINARY: neither UTF-8 text nor a PNG, JPEG, GIF or WebP image.",
)

_PATH = "The path inside the repository's folder, normalized."
_SIZE = "Size in bytes (at most 1 MiB)."


@strawberry.type(description="A UTF-8 text file (SVG and HTML included: their source, to be shown as text).")
class TextFilePreview:
    path: str = strawberry.field(description=_PATH)
    size: int = strawberry.field(description=_SIZE)
    text: str = strawberry.field(description="The content, decoded as UTF-8 (a leading byte order mark dropped).")


@strawberry.type(description="A PNG, JPEG, GIF or WebP image, told by its first bytes, never by its name.")
class ImageFilePreview:
    path: str = strawberry.field(description=_PATH)
    size: int = strawberry.field(description=_SIZE)
    mime_type: str = strawberry.field(description="image/png, image/jpeg, image/gif or image/webp.")
    data_base64: str = strawberry.field(description="The image's bytes, base64-encoded.")


@strawberry.type(description="Preview unavailable: the file can't be shown, and why.")
class FilePreviewUnavailable:
    path: str = strawberry.field(description=_PATH)
    reason: preview.PreviewUnavailableReason
    message: str = strawberry.field(description="The reason in words.")


FilePreviewResult: TypeAlias = Annotated[
    TextFilePreview | ImageFilePreview | FilePreviewUnavailable | ExpectedError,
    strawberry.union("FilePreviewResult"),
]


def file_preview_of(found: preview.FilePreview) -> TextFilePreview | ImageFilePreview | FilePreviewUnavailable:
    if isinstance(found, preview.TextPreview):
        return TextFilePreview(path=found.path, size=found.size, text=found.text)
    if isinstance(found, preview.ImagePreview):
        data = base64.b64encode(found.data).decode("ascii")
        return ImageFilePreview(path=found.path, size=found.size, mime_type=found.mime_type, data_base64=data)
    return FilePreviewUnavailable(path=found.path, reason=found.reason, message=found.message)

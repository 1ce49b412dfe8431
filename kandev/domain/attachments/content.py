"""What an uploaded file is, told by its bytes (magic numbers, never the client's word), and its name made safe
to show and to write into a worktree."""

from __future__ import annotations

import re
import unicodedata

import puremagic

from kandev.domain.errors import ValidationError

MIB = 1024 * 1024
MAX_BYTES = 10 * MIB
MAX_PER_MESSAGE = 10
MAX_NAME = 120

PNG, JPEG, GIF, WEBP = "image/png", "image/jpeg", "image/gif", "image/webp"
PDF = "application/pdf"
TEXT = "text/plain"
BINARY = "application/octet-stream"
# Raster images an agent may be shown as ACP image content and a browser may show inline.
IMAGES = frozenset({PNG, JPEG, GIF, WEBP})
_RECOGNISED = IMAGES | {PDF}
# What a client may call a file that is text: the bytes decide it is plain text, and it is served as such.
_TEXT_CLAIMS = re.compile(
    r"text/.+|application/(json|xml|javascript|x-yaml|yaml|toml|x-sh|x-python|sql|graphql|ld\+json)|image/svg\+xml"
)
# Characters no file name keeps: path separators, controls, and what shells and Windows trip on.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')


class AttachmentRefused(ValidationError):
    """An upload or a reference refused; `reason` says why (too_large, empty, type_mismatch, too_many,
    not_found, other_task, ...), `field` names the input."""

    def __init__(self, message: str, reason: str, field: str = "file", **fields: object) -> None:
        super().__init__(message, field=field, reason=reason, **fields)
        self.reason = reason


def detect(data: bytes) -> str:
    """The content type the bytes themselves say: a raster image or PDF by its signature, UTF-8 text without
    NULs as text/plain (markup included: an SVG or HTML page is served as text, never rendered), anything else
    application/octet-stream."""
    head = data[:8192]
    try:
        found = [str(match.mime_type) for match in puremagic.magic_string(head)]
    except puremagic.PureError:
        found = []
    for mime in found:
        if mime in _RECOGNISED:
            return mime
    if _is_text(data):
        return TEXT
    return BINARY


def _is_text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def checked_type(data: bytes, claimed: str | None) -> str:
    """The detected type; AttachmentRefused (type_mismatch) when the client's type says something else."""
    detected = detect(data)
    claim = (claimed or "").split(";", 1)[0].strip().lower()
    if claim in ("", BINARY) or claim == detected:
        return detected
    if _TEXT_CLAIMS.fullmatch(claim) and detected == TEXT:
        return detected
    if claim in _RECOGNISED or claim.startswith("image/") or _TEXT_CLAIMS.fullmatch(claim) or detected != BINARY:
        raise AttachmentRefused(
            f"the file's bytes are {detected}, not the {claim} it was sent as", "type_mismatch", detected=detected
        )
    return detected  # a type we can't tell (a zip, a tarball): kept as plain bytes


def check_size(size: int) -> None:
    if size == 0:
        raise AttachmentRefused("the file is empty", "empty")
    if size > MAX_BYTES:
        raise AttachmentRefused(f"the file is larger than {MAX_BYTES // MIB} MiB", "too_large", limit=MAX_BYTES)


def clean_name(name: str | None, content_type: str) -> str:
    """A plain file name: no folders, no control or reserved characters, no leading dots, at most MAX_NAME
    characters (the extension kept); `attachment` with the type's extension when nothing is left."""
    base = unicodedata.normalize("NFC", (name or "").replace("\\", "/").rsplit("/", 1)[-1])
    base = _UNSAFE.sub("_", base).strip().lstrip(".").strip()
    if len(base) > MAX_NAME:
        stem, dot, extension = base.rpartition(".")
        keep = extension[:16] if dot and stem else ""
        base = base[: MAX_NAME - len(keep) - 1].rstrip() + ("." + keep if keep else "")
    return base or "attachment" + _EXTENSIONS.get(content_type, "")


_EXTENSIONS = {PNG: ".png", JPEG: ".jpg", GIF: ".gif", WEBP: ".webp", PDF: ".pdf", TEXT: ".txt", BINARY: ".bin"}

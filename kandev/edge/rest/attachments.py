"""POST /api/v1/attachments (an upload: multipart/form-data, field `file`, header `Kandev-Upload: 1`, checked by
the HTTP guard) and GET /api/v1/attachments/{id} (its bytes, served so no upload can run in Kandev's origin)."""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kandev.domain.attachments.content import IMAGES, MAX_BYTES, TEXT, AttachmentRefused
from kandev.domain.errors import ValidationError
from kandev.domain.services import Services
from kandev.edge.rest.common import endpoint

# Whatever the bytes are, the browser runs nothing of them: no script, no plugin, no navigation, no sniffing.
SERVED_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, max-age=86400",
}


@endpoint
async def upload_attachment(request: Request, services: Services) -> Response:
    """201 with `{id, name, size, contentType}`; 400 with a typed reason for a file refused."""
    upload = await _the_file(request)
    try:
        data = await upload.read(MAX_BYTES + 1)
    finally:
        await upload.close()
    record = await services.attachments.upload(upload.filename, upload.content_type, data)
    body = {"id": record.id, "name": record.name, "size": record.size, "contentType": record.content_type}
    return JSONResponse(body, status_code=201)


async def _the_file(request: Request) -> UploadFile:
    try:
        form = await request.form(max_files=1, max_fields=5)
    except HTTPException:  # a malformed body, or more parts than an upload has
        raise AttachmentRefused("the body is not one multipart/form-data file", "malformed") from None
    found = form.getlist("file")
    if len(found) != 1 or not isinstance(found[0], UploadFile):
        raise ValidationError("send exactly one file, in the form field `file`", field="file", reason="missing")
    return found[0]


@endpoint
async def download_attachment(request: Request, services: Services) -> Response:
    """The bytes with their detected type: raster images inline (for thumbnails), everything else a download."""
    found = await services.attachments.download(request.path_params["attachment_id"])
    record = found.record
    inline = record.content_type in IMAGES
    media_type = f"{TEXT}; charset=utf-8" if record.content_type == TEXT else record.content_type
    headers = {**SERVED_HEADERS, "Content-Disposition": _disposition("inline" if inline else "attachment", record.name)}
    return Response(found.data, media_type=media_type, headers=headers)


def _disposition(kind: str, name: str) -> str:
    fallback = name.encode("ascii", "replace").decode().replace("?", "_").replace('"', "_")
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"

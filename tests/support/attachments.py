"""Files for attachment tests: real signatures, made here (a 1x1 PNG, a JPEG header, text, markup)."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import httpx

UPLOAD = "/api/v1/attachments"
UPLOAD_HEADERS = {"Kandev-Upload": "1"}


def png(width: int = 1, height: int = 1, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"><script>alert(1)</script></svg>'
HTML = b"<!doctype html><html><body><script>fetch('/graphql')</script></body></html>"
NOTES = b"Steps to reproduce:\n1. open the board\n2. drag a card\n"


async def upload(
    http: httpx.AsyncClient, name: str, data: bytes, content_type: str = "application/octet-stream", **headers: str
) -> httpx.Response:
    return await http.post(UPLOAD, files={"file": (name, data, content_type)}, headers={**UPLOAD_HEADERS, **headers})


async def uploaded(http: httpx.AsyncClient, name: str, data: bytes, content_type: str = "") -> dict[str, Any]:
    response = await upload(http, name, data, content_type or "application/octet-stream")
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body

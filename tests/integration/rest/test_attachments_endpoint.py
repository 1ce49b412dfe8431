"""POST /api/v1/attachments and GET /api/v1/attachments/{id}: what is accepted, what is refused (typed, nothing
stored), and how the bytes are served so no upload runs in Kandev's origin."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import func, select

from kandev.domain.attachments.content import MAX_BYTES
from kandev.models import Attachment
from tests.support.attachments import HTML, JPEG, NOTES, SVG, UPLOAD, UPLOAD_HEADERS, png, upload, uploaded


async def stored(db) -> int:
    async with db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(Attachment)) or 0)


async def test_an_image_upload_answers_its_id_name_size_and_the_type_its_bytes_say(http, db):
    image = png(3, 2)
    body = await uploaded(http, "screen shot.png", image, "image/png")
    assert set(body) == {"id", "name", "size", "contentType"}
    assert (body["name"], body["size"], body["contentType"]) == ("screen shot.png", len(image), "image/png")
    async with db.read() as s:
        row = await s.get(Attachment, body["id"])
        assert row is not None and row.task_id is None and row.sha256 == hashlib.sha256(image).hexdigest()


async def test_a_file_sent_as_octet_stream_is_typed_by_its_bytes(http):
    assert (await uploaded(http, "photo", JPEG))["contentType"] == "image/jpeg"
    assert (await uploaded(http, "notes.md", NOTES, "text/markdown"))["contentType"] == "text/plain"


@pytest.mark.parametrize(
    ("name", "data", "claimed"),
    [
        ("fake.png", b"MZ\x90\x00 this is an executable", "image/png"),
        ("photo.png", JPEG, "image/png"),
        ("doc.pdf", NOTES, "application/pdf"),
        ("notes.txt", b"\x00\x01\x02binary", "text/plain"),
    ],
)
async def test_a_type_the_bytes_contradict_is_refused_and_nothing_is_stored(http, db, name, data, claimed):
    response = await upload(http, name, data, claimed)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "VALIDATION"
    assert response.json()["fields"]["reason"] == "type_mismatch"
    assert await stored(db) == 0


async def test_a_file_over_ten_mib_is_refused_before_it_is_stored(http, db):
    response = await upload(http, "big.bin", b"\x01" * (MAX_BYTES + 1))
    assert response.status_code == 400 and response.json()["fields"]["reason"] == "too_large"
    far_too_big = await upload(http, "bigger.bin", b"\x01" * (MAX_BYTES + 200_000))
    assert far_too_big.status_code == 413 and far_too_big.json()["code"] == "BODY_TOO_LARGE"
    assert await stored(db) == 0


async def test_an_empty_file_and_a_form_without_the_file_field_are_refused(http, db):
    empty = await upload(http, "empty.txt", b"")
    assert empty.status_code == 400 and empty.json()["fields"]["reason"] == "empty"
    missing = await http.post(UPLOAD, files={"other": ("a.txt", b"hi", "text/plain")}, headers=UPLOAD_HEADERS)
    assert missing.status_code == 400 and missing.json()["field"] == "file"
    two = await http.post(
        UPLOAD,
        files=[("file", ("a.txt", b"a", "text/plain")), ("file", ("b.txt", b"b", "text/plain"))],
        headers=UPLOAD_HEADERS,
    )
    assert two.status_code == 400
    assert await stored(db) == 0


async def test_an_upload_without_the_kandev_upload_header_is_refused_with_415(http, db):
    """What a cross-site form can send: multipart, no custom header."""
    bare = await http.post(UPLOAD, files={"file": ("a.png", png(), "image/png")})
    assert bare.status_code == 415 and bare.json()["code"] == "UNSUPPORTED_MEDIA_TYPE"
    as_json = await http.post(UPLOAD, json={"file": "x"}, headers=UPLOAD_HEADERS)
    assert as_json.status_code == 415
    wrong_value = await http.post(UPLOAD, files={"file": ("a.png", png(), "image/png")}, headers={"Kandev-Upload": "0"})
    assert wrong_value.status_code == 415
    assert await stored(db) == 0


async def test_an_upload_from_another_origin_is_refused_with_403(http, db):
    response = await upload(http, "a.png", png(), "image/png", Origin="https://evil.example")
    assert response.status_code == 403
    assert await stored(db) == 0


async def test_an_image_is_served_inline_with_its_type_and_a_sandboxing_policy(http):
    image = png()
    body = await uploaded(http, "shot.png", image, "image/png")
    response = await http.get(f"{UPLOAD}/{body['id']}")
    assert response.status_code == 200 and response.content == image
    assert response.headers["content-type"] == "image/png"
    assert response.headers["content-disposition"].startswith("inline;")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in response.headers["content-security-policy"]
    assert "default-src 'none'" in response.headers["content-security-policy"]


@pytest.mark.parametrize(("name", "data", "claimed"), [("x.svg", SVG, "image/svg+xml"), ("x.html", HTML, "text/html")])
async def test_svg_and_html_uploads_are_served_as_plain_text_downloads_never_rendered(http, name, data, claimed):
    body = await uploaded(http, name, data, claimed)
    assert body["contentType"] == "text/plain"
    response = await http.get(f"{UPLOAD}/{body['id']}")
    assert response.content == data
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.headers["content-disposition"].startswith("attachment;")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in response.headers["content-security-policy"]


async def test_a_name_with_folders_and_reserved_characters_is_kept_as_a_plain_file_name(http):
    body = await uploaded(http, "../../etc/a:b*c|d.txt", NOTES)
    assert body["name"] == "a_b_c_d.txt"
    response = await http.get(f"{UPLOAD}/{body['id']}")
    assert 'filename="a_b_c_d.txt"' in response.headers["content-disposition"]
    hidden = await uploaded(http, "..\\.bashrc", NOTES)
    assert hidden["name"] == "bashrc"


async def test_an_unknown_attachment_is_not_found(http):
    response = await http.get(f"{UPLOAD}/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"

"""filePreview through schema.execute: text, images told by their bytes, preview unavailable, and the paths refused."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.services import Services
from kandev.domain.tasks.file_preview import MAX_PREVIEW_BYTES, image_type
from kandev.domain.workspace.workdirs import prepare_workdir
from kandev.models import Task
from tests.conftest import GraphQLCaller
from tests.support.factories import new_task
from tests.support.git_repos import make_repository

PREVIEW = """query($task: ID!, $path: String!, $repo: String) {
  filePreview(taskId: $task, path: $path, repository: $repo) {
    __typename
    ... on TextFilePreview { path size text }
    ... on ImageFilePreview { path size mimeType dataBase64 }
    ... on FilePreviewUnavailable { path reason message }
    ... on Error { code message }
    ... on ValidationError { field }
    ... on NotFoundError { entity }
  }
}"""
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(range(64))
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(32)
GIF = b"GIF89a" + bytes(32)
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + bytes(32)
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n'


async def preview(gql: GraphQLCaller, task_id: str, path: str, repo: str | None = None) -> dict[str, Any]:
    return (await gql(PREVIEW, task=task_id, path=path, repo=repo))["filePreview"]


async def materialized(services: Services, task_id: str) -> Path:
    """The task's working folder as its first launch prepares it (worktrees for the worktree executor)."""
    async with services.ctx.unit_of_work() as uow:
        task = await uow.db.get(Task, task_id)
        assert task is not None
        return await prepare_workdir(uow.db, services.ctx.settings.work_path, task, task.executor_profile_id)


@pytest.fixture
async def repositories(services: Services, workspace_id: str, tmp_path: Path) -> list[str]:
    made = []
    for name in ("project", "docs"):
        folder = make_repository(tmp_path / "sources" / name)
        made.append((await services.repositories.create(workspace_id, name, str(folder))).id)
    return made


@pytest.fixture
async def task_id(services: Services, workspace_id: str, repositories: list[str]) -> str:
    return await new_task(services, workspace_id, "Preview", repositories=repositories)


@pytest.fixture
async def root(services: Services, task_id: str) -> Path:
    """The first repository's worktree for the task."""
    folder = await materialized(services, task_id)
    assert folder.name == "project" and folder.parent.name == task_id
    return folder


async def test_a_text_file_of_the_tasks_worktree_comes_back_as_its_utf8_text(gql, task_id, root):
    (root / "notes").mkdir()
    (root / "notes" / "plan.md").write_text("# Plan\n\nÜber alles ✓\n", encoding="utf-8")
    found = await preview(gql, task_id, "./notes//plan.md")
    assert found == {
        "__typename": "TextFilePreview",
        "path": "notes/plan.md",
        "size": len("# Plan\n\nÜber alles ✓\n".encode()),
        "text": "# Plan\n\nÜber alles ✓\n",
    }
    readme = await preview(gql, task_id, "README")
    assert readme["__typename"] == "TextFilePreview" and readme["text"] == "hello\n"


async def test_a_png_is_an_image_whatever_its_name_and_png_named_text_is_text(gql, task_id, root):
    (root / "chart.txt").write_bytes(PNG)
    (root / "fake.png").write_text("not an image\n")
    image = await preview(gql, task_id, "chart.txt")
    assert image["__typename"] == "ImageFilePreview"
    assert image["mimeType"] == "image/png" and image["size"] == len(PNG)
    assert base64.b64decode(image["dataBase64"]) == PNG
    fake = await preview(gql, task_id, "fake.png")
    assert fake["__typename"] == "TextFilePreview" and fake["text"] == "not an image\n"


async def test_jpeg_gif_and_webp_are_told_by_their_magic_bytes():
    assert [image_type(data) for data in (PNG, JPEG, GIF, WEBP)] == [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    ]
    assert image_type(SVG.encode()) is None and image_type(b"<html><img src=x></html>") is None
    assert image_type(b"RIFF\x24\x00\x00\x00WAVEfmt ") is None


async def test_svg_and_html_are_never_images_but_their_source_as_text(gql, task_id, root):
    (root / "logo.svg").write_text(SVG)
    (root / "page.html").write_text("<html><body><img src=x onerror=alert(1)></body></html>")
    svg = await preview(gql, task_id, "logo.svg")
    assert svg["__typename"] == "TextFilePreview" and svg["text"] == SVG
    html = await preview(gql, task_id, "page.html")
    assert html["__typename"] == "TextFilePreview" and "onerror" in html["text"]


async def test_a_file_over_one_mib_is_unavailable_as_too_large_and_one_of_exactly_one_mib_is_shown(gql, task_id, root):
    (root / "big.log").write_bytes(b"a" * (MAX_PREVIEW_BYTES + 1))
    (root / "edge.log").write_bytes(b"b" * MAX_PREVIEW_BYTES)
    big = await preview(gql, task_id, "big.log")
    assert big["__typename"] == "FilePreviewUnavailable" and big["reason"] == "TOO_LARGE"
    assert big["path"] == "big.log" and "1 MiB" in big["message"]
    edge = await preview(gql, task_id, "edge.log")
    assert edge["__typename"] == "TextFilePreview" and edge["size"] == MAX_PREVIEW_BYTES


async def test_binary_missing_and_folder_paths_are_unavailable_with_their_reason(gql, task_id, root):
    (root / "blob.bin").write_bytes(b"\x00\x01\x02\xfe\xff")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    (root / "folder").mkdir()
    reasons = {path: await preview(gql, task_id, path) for path in ("blob.bin", "latin1.txt", "nope.txt", "folder")}
    assert {path: (r["__typename"], r["reason"]) for path, r in reasons.items()} == {
        "blob.bin": ("FilePreviewUnavailable", "BINARY"),
        "latin1.txt": ("FilePreviewUnavailable", "BINARY"),
        "nope.txt": ("FilePreviewUnavailable", "MISSING"),
        "folder": ("FilePreviewUnavailable", "NOT_A_FILE"),
    }


async def test_a_task_whose_worktree_does_not_exist_yet_has_its_files_missing(gql, task_id):
    found = await preview(gql, task_id, "README")
    assert found["__typename"] == "FilePreviewUnavailable" and found["reason"] == "MISSING"


async def test_another_repository_of_the_task_is_named_by_its_name_or_id(gql, task_id, root, repositories):
    (root.parent / "docs" / "guide.md").write_text("docs guide\n")
    by_name = await preview(gql, task_id, "guide.md", "docs")
    by_id = await preview(gql, task_id, "guide.md", repositories[1])
    assert by_name == by_id and by_name["text"] == "docs guide\n"
    # The first repository is the default; the docs file is not in it.
    assert (await preview(gql, task_id, "guide.md"))["reason"] == "MISSING"


async def test_a_repository_the_task_does_not_have_is_not_found(gql, services, workspace_id, task_id, root, tmp_path):
    other = await services.repositories.create(workspace_id, "other", str(make_repository(tmp_path / "other")))
    for name in ("other", other.id, "..", "project/../docs"):
        found = await preview(gql, task_id, "README", name)
        assert found["__typename"] == "NotFoundError" and found["entity"] == "task repository", name


async def test_a_task_without_repositories_previews_its_scratch_directory(gql, services, workspace_id):
    task_id = await new_task(services, workspace_id, "Scratch")
    scratch = await materialized(services, task_id)
    (scratch / "out.csv").write_text("x,y\n1,2\n")
    found = await preview(gql, task_id, "out.csv")
    assert found["__typename"] == "TextFilePreview" and found["text"] == "x,y\n1,2\n"


@pytest.mark.parametrize(
    "path",
    ["../../../etc/passwd", "notes/../../docs/README", "/etc/passwd", "~/secrets", "", "a\nb", "C:/Windows"],
)
async def test_traversal_absolute_and_nul_paths_are_refused_as_validation_errors(gql, task_id, root, path):
    (root / "notes").mkdir(exist_ok=True)
    found = await preview(gql, task_id, path)
    assert found["__typename"] == "ValidationError" and found["field"] == "path", found


async def test_a_nul_byte_in_the_path_is_refused_before_and_by_the_preview(gql, services, task_id, root):
    answer = await gql.raw(PREVIEW, task=task_id, path="README\x00.png", repo=None)
    assert answer.data is None and answer.errors[0].extensions["code"] == "VALIDATION"
    with pytest.raises(ValidationError) as refused:
        await services.file_previews.preview(task_id, "README\x00.png")
    assert refused.value.field == "path"


async def test_a_link_leading_outside_the_repository_folder_is_refused(gql, task_id, root, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("private\n")
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "escape.txt").symlink_to(outside)
    (root / "up").symlink_to(root.parent)  # the task folder: the sibling repository is outside this one
    (root / "gone").symlink_to(tmp_path / "missing-outside.txt")
    for path in ("passwd", "escape.txt", "up/docs/README", "gone"):
        found = await preview(gql, task_id, path)
        assert found["__typename"] == "ValidationError" and found["field"] == "path", (path, found)
        assert "private" not in str(found) and "root:" not in str(found)


async def test_a_link_loop_is_refused_and_a_link_inside_the_folder_is_followed(gql, task_id, root):
    (root / "a").symlink_to(root / "b")
    (root / "b").symlink_to(root / "a")
    (root / "self").symlink_to("self")
    (root / "docs-link").symlink_to("README")
    for path in ("a", "self", "a/file"):
        found = await preview(gql, task_id, path)
        assert found["__typename"] == "ValidationError" and found["field"] == "path", (path, found)
    followed = await preview(gql, task_id, "docs-link")
    assert followed["__typename"] == "TextFilePreview" and followed["text"] == "hello\n"


async def test_gits_own_files_are_never_previewed(gql, task_id, root):
    (root / "dotgit").symlink_to(".git")
    for path in (".git", ".git/config", "dotgit"):
        found = await preview(gql, task_id, path)
        assert found["__typename"] == "ValidationError" and found["field"] == "path", (path, found)


async def test_a_fifo_does_not_hang_the_preview(gql, task_id, root):
    os.mkfifo(root / "pipe")
    found = await preview(gql, task_id, "pipe")
    assert found["__typename"] == "FilePreviewUnavailable" and found["reason"] == "NOT_A_FILE"


async def test_another_users_task_looks_exactly_like_an_unknown_one(gql, bob, task_id, root):
    theirs = await preview(GraphQLCaller(bob), task_id, "README")
    unknown = await preview(gql, "0" * 32, "README")
    assert theirs["__typename"] == "NotFoundError" and theirs["entity"] == "task"
    assert theirs == unknown


async def test_a_deleted_task_is_not_found(gql, services, task_id, root):
    await services.tasks.delete(task_id)
    found = await preview(gql, task_id, "README")
    assert found["__typename"] == "NotFoundError" and found["entity"] == "task"

"""The attachment service's own rules: uploads nobody uses are forgotten after a day and capped per person, an
agent session uploads nothing, and the hand-over to an agent picks ACP content or the working directory by the
agent's promptCapabilities, never writing through a link; one upload named by two new tasks at once on two replicas
goes to one of them."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.attachments import service as attachment_service
from kandev.domain.attachments.content import AttachmentRefused
from kandev.domain.attachments.handover import hand_over
from kandev.domain.attachments.service import AttachmentFile, AttachmentRecord, forget_unbound
from kandev.domain.errors import PermissionDeniedError, QuotaExceededError
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import Attachment, Task
from kandev.models.base import utcnow
from kandev.platform.database import Database
from kandev.wiring import service_context
from tests.support.attachments import NOTES, png
from tests.support.databases import BACKENDS, database_on
from tests.support.factories import settings_for


async def count(db) -> int:
    async with db.read() as s:
        return int(await s.scalar(select(func.count()).select_from(Attachment)) or 0)


async def test_uploads_no_task_took_within_a_day_are_forgotten_and_bound_ones_stay(services, db, workspace_id):
    old = await services.attachments.upload("old.png", "image/png", png())
    fresh = await services.attachments.upload("fresh.png", "image/png", png())
    kept = await services.attachments.upload("kept.png", "image/png", png())
    await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Keeps", attachment_ids=[kept.id]))
    async with db.transaction() as s:
        day_ago = utcnow() - timedelta(days=1, minutes=1)
        await s.execute(update(Attachment).where(Attachment.id.in_([old.id, kept.id])).values(created_at=day_ago))
    assert await forget_unbound(services.ctx) == 1
    async with db.read() as s:
        left = set(await s.scalars(select(Attachment.id)))
    assert left == {fresh.id, kept.id}


async def test_a_person_holds_a_bounded_number_of_unused_uploads(services, db, monkeypatch):
    monkeypatch.setattr(attachment_service, "MAX_UNBOUND", 2)
    await services.attachments.upload("a.txt", "text/plain", NOTES)
    await services.attachments.upload("b.txt", "text/plain", NOTES)
    with pytest.raises(QuotaExceededError) as refused:
        await services.attachments.upload("c.txt", "text/plain", NOTES)
    assert refused.value.quota == "unbound_attachments" and await count(db) == 2


async def test_an_agent_session_uploads_nothing(services, db):
    agent = Services(services.ctx.with_principal(replace(services.principal, session_id="s1", task_id="t1")))
    with pytest.raises(PermissionDeniedError):
        await agent.attachments.upload("a.png", "image/png", png())
    assert await count(db) == 0


def item(name: str, content_type: str, data: bytes, attachment_id: str = "0123456789") -> AttachmentFile:
    return AttachmentFile(AttachmentRecord(attachment_id, name, len(data), content_type, "t", utcnow()), data)


def test_an_image_goes_as_image_content_and_a_file_as_a_resource_when_the_agent_takes_both(tmp_path: Path):
    given = hand_over(
        [item("a.png", "image/png", png()), item("n.md", "text/plain", NOTES)],
        image_prompts=True,
        embedded_context=True,
        cwd=str(tmp_path),
        owner=None,
    )
    assert [(f.name, f.as_image) for f in given.files] == [("a.png", True), ("n.md", False)]
    assert given.note == "" and not (tmp_path / ".kandev").exists()


def test_without_those_capabilities_files_are_written_in_the_working_directory_and_named(tmp_path: Path):
    given = hand_over(
        [item("a.png", "image/png", png(), "aaaaaaaa-1"), item("n.md", "text/plain", NOTES, "bbbbbbbb-2")],
        image_prompts=False,
        embedded_context=False,
        cwd=str(tmp_path),
        owner=None,
    )
    assert given.files == [] and given.refused is None
    assert ".kandev/attachments/aaaaaaaa-a.png" in given.note and ".kandev/attachments/bbbbbbbb-n.md" in given.note
    assert (tmp_path / ".kandev/attachments/bbbbbbbb-n.md").read_bytes() == NOTES
    assert oct((tmp_path / ".kandev/attachments/aaaaaaaa-a.png").stat().st_mode & 0o777) == "0o600"


def test_a_link_planted_where_a_file_or_the_folder_goes_is_never_followed(tmp_path: Path):
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / ".kandev" / "attachments").mkdir(parents=True)
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, work / ".kandev" / "attachments" / "cccccccc-n.md")  # where the file will be written
    given = hand_over(
        [item("n.md", "text/plain", NOTES, "cccccccc-3")],
        image_prompts=False,
        embedded_context=False,
        cwd=str(work),
        owner=None,
    )
    assert given.refused is None and victim.read_text() == "precious"
    written = work / ".kandev" / "attachments" / "cccccccc-n.md"
    assert not written.is_symlink() and written.read_bytes() == NOTES
    os.rename(work / ".kandev", tmp_path / "moved")
    os.symlink(outside, work / ".kandev")  # the folder itself
    refused = hand_over(
        [item("n.md", "text/plain", NOTES, "dddddddd-4")],
        image_prompts=False,
        embedded_context=False,
        cwd=str(work),
        owner=None,
    )
    assert refused.refused is not None and "link" in refused.refused
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_one_upload_named_by_two_new_tasks_at_once_on_two_replicas_goes_to_one_of_them(
    backend: str, database_url: str, redis_url: str, tmp_path: Path, bus, jobs
):
    async with database_on(backend, database_url, tmp_path) as url:
        settings = settings_for(url, redis_url, tmp_path)
        pools = [Database(url), Database(url)]
        try:
            local = await bootstrap(pools[0], settings)
            replicas = [Services(service_context(pool, bus, jobs, settings, local)) for pool in pools]
            workspace_id = (await replicas[0].workspaces.create("Shots")).id
            shot = await replicas[0].attachments.upload("shot.png", "image/png", png())
            made = await asyncio.gather(
                *(
                    replicas[n % 2].tasks.create(
                        CreateTask(workspace_id=workspace_id, title=f"T{n}", attachment_ids=[shot.id])
                    )
                    for n in range(6)
                ),
                return_exceptions=True,
            )
            created = [m.task.id for m in made if not isinstance(m, BaseException)]
            refused = [m for m in made if isinstance(m, BaseException)]
            assert len(created) == 1 and len(refused) == 5, made
            assert all(isinstance(r, AttachmentRefused) and r.reason == "other_task" for r in refused), refused
            async with pools[1].read() as s:
                assert (await s.get(Attachment, shot.id)).task_id == created[0]
                titles = list(await s.scalars(select(Task.title).where(Task.workspace_id == workspace_id)))
            assert len(titles) == 1  # a refused creation left no task behind
        finally:
            for pool in pools:
                await pool.dispose()

"""Revision 0012_engine: the default workflow's In Progress stops waiting for the signal, where nobody changed it."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import insert, select

from kandev.domain.workflow.service import add_workflow
from kandev.migrations import alembic_config, upgrade_to_head
from kandev.models import User, Workflow, WorkflowStep, Workspace
from kandev.models.base import new_id, utcnow
from kandev.platform.database import Database
from tests.support import databases

# The default Kanban workflow as workspaces were bootstrapped before this revision.
OLD_DEFAULT = [
    {"name": "Backlog", "is_start_step": True},
    {
        "name": "In Progress",
        "events": {"on_enter": [{"type": "auto_start_agent"}], "on_turn_complete": [{"type": "move_to_next"}]},
        "auto_advance_requires_signal": True,
    },
    {"name": "Review"},
    {"name": "Done", "is_final_step": True},
]


async def in_progress_flags_after_upgrade(url: str) -> dict[str, bool]:
    """Stage workflows on a database at 0011, upgrade to head; In Progress's flag per workflow description."""
    await asyncio.to_thread(command.upgrade, alembic_config(url), "0011")
    db = Database(url)
    try:
        async with db.transaction() as s:
            # The columns users had at 0011 only (a later revision's column does not exist yet).
            user_id = new_id()
            await s.execute(insert(User).values(id=user_id, login=f"u{user_id[:8]}", name="", admin=False))
            workspace = Workspace(id=new_id(), name="Old", owner_id=user_id)
            s.add(workspace)
            await s.flush()
            add_workflow(s, workspace.id, "Kanban", OLD_DEFAULT, description="untouched")
            edited = add_workflow(s, workspace.id, "Kanban", OLD_DEFAULT, description="toggled off and on")
            renamed = add_workflow(s, workspace.id, "My flow", OLD_DEFAULT, description="renamed")
            extra = add_workflow(
                s, workspace.id, "Kanban", [*OLD_DEFAULT[:3], {"name": "QA"}, OLD_DEFAULT[3]], description="extra"
            )
            await s.flush()
            step = await s.scalar(
                select(WorkflowStep).where(WorkflowStep.workflow_id == edited.id, WorkflowStep.position == 1)
            )
            step.updated_at = utcnow() + timedelta(minutes=5)  # someone edited the step since
            assert renamed.id and extra.id
        await asyncio.to_thread(upgrade_to_head, url)
        async with db.read() as s:
            rows = await s.execute(
                select(Workflow.description, WorkflowStep.auto_advance_requires_signal)
                .join(WorkflowStep, WorkflowStep.workflow_id == Workflow.id)
                .where(WorkflowStep.name == "In Progress")
            )
            return {description: flag for description, flag in rows}
    finally:
        await db.dispose()


EXPECTED = {"untouched": False, "toggled off and on": True, "renamed": True, "extra": True}


async def test_only_an_unchanged_default_workflow_loses_the_signal_requirement_on_sqlite(tmp_path: Path):
    url = databases.sqlite_url(tmp_path / "old.db")
    assert await in_progress_flags_after_upgrade(url) == EXPECTED


async def test_only_an_unchanged_default_workflow_loses_the_signal_requirement_on_postgresql():
    server = databases.postgres_server_url()
    if server is None:
        pytest.skip("KANDEV_TEST_POSTGRES_URL is not set")
    url = await databases.create_postgres_database(server, prefix="kandev_mig")
    try:
        assert await in_progress_flags_after_upgrade(url) == EXPECTED
    finally:
        await databases.drop_postgres_database(server, url)

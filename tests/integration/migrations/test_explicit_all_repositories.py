"""Revision 0029: a pull-request condition saved with no repository evaluated every connected repository; an
empty list now evaluates none, so such conditions become the explicit `all_repositories` and keep firing.
Listed ones, and other condition types, are left as they were."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import select, text

from kandev.migrations import alembic_config, upgrade_to_head
from kandev.models import AutomationTrigger
from kandev.models.base import new_id, utcnow
from kandev.platform.database import Database
from tests.support import databases

STAGED = {
    "empty pr": ("github_pr", {"events": ["opened"], "exclude_drafts": False}),
    "listed pr": ("github_pr", {"repositories": ["acme/app"], "events": ["opened"]}),
    "empty push": ("github_push", {}),
}


async def configs_after_upgrade(url: str) -> dict[str, dict[str, object]]:
    """Stage triggers on a database at 0028, upgrade to head; each trigger's config by its label."""
    await asyncio.to_thread(command.upgrade, alembic_config(url), "0028_user_removal")
    db = Database(url)
    ids: dict[str, str] = {}
    try:
        async with db.transaction() as s:
            # The rows as the schema had them at 0028 (today's models may have more columns).
            user_id, workspace_id = new_id(), new_id()
            await s.execute(
                text("INSERT INTO users (id, login, name, admin, created_at) VALUES (:id, :login, '', false, :now)"),
                {"id": user_id, "login": f"u{new_id()[:8]}", "now": utcnow()},
            )
            await s.execute(
                text(
                    "INSERT INTO workspaces (id, name, owner_id, settings, created_at, updated_at) "
                    "VALUES (:id, 'Old', :owner, '{}', :now, :now)"
                ),
                {"id": workspace_id, "owner": user_id, "now": utcnow()},
            )
            for label, (kind, config) in STAGED.items():
                automation_id, ids[label] = new_id(), new_id()
                now = utcnow()
                await s.execute(
                    text(
                        "INSERT INTO automations (id, workspace_id, name, description, destination, prompt, "
                        "title_template, context, max_concurrent_runs, enabled, created_via, created_by, "
                        "created_at, updated_at) VALUES (:id, :ws, :name, '', 'hidden', 'p', '', 'new_task_per_run', "
                        "1, true, 'form', 'user:old', :now, :now)"
                    ),
                    {"id": automation_id, "ws": workspace_id, "name": label, "now": now},
                )
                s.add(
                    AutomationTrigger(
                        id=ids[label], automation_id=automation_id, type=kind, enabled=True, config=config
                    )
                )
        await asyncio.to_thread(upgrade_to_head, url)
        async with db.read() as s:
            rows = await s.execute(select(AutomationTrigger.id, AutomationTrigger.config))
            by_id = dict(rows.all())
        return {label: by_id[trigger_id] for label, trigger_id in ids.items()}
    finally:
        await db.dispose()


EXPECTED = {
    "empty pr": {"events": ["opened"], "exclude_drafts": False, "repositories": [], "all_repositories": True},
    "listed pr": {"repositories": ["acme/app"], "events": ["opened"]},
    "empty push": {},
}


async def test_a_pr_condition_saved_without_repositories_becomes_all_repositories_on_sqlite(tmp_path: Path):
    assert await configs_after_upgrade(databases.sqlite_url(tmp_path / "old.db")) == EXPECTED


async def test_a_pr_condition_saved_without_repositories_becomes_all_repositories_on_postgresql():
    server = databases.postgres_server_url()
    if server is None:
        pytest.skip("KANDEV_TEST_POSTGRES_URL is not set")
    url = await databases.create_postgres_database(server, prefix="kandev_mig")
    try:
        assert await configs_after_upgrade(url) == EXPECTED
    finally:
        await databases.drop_postgres_database(server, url)

"""A fake GitLab for every test here, and the suite's settings pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.integration.mcp_bridge.conftest import tool_surface  # noqa: F401  (the PR/MR task tests call create_task_kandev)
from tests.support.factories import settings_for
from tests.support.fake_gitlab import FakeGitLab, fake_gitlab


@pytest.fixture
async def gitlab() -> AsyncIterator[FakeGitLab]:
    async with fake_gitlab() as fake:
        yield fake


@pytest.fixture
def settings(database_url, redis_url, tmp_path, gitlab):
    return settings_for(database_url, redis_url, tmp_path, gitlab_url=gitlab.url)

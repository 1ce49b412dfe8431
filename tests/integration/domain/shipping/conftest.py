"""A fake GitHub (and GitLab) for the shipping tests, and the suite's settings pointed at them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.factories import settings_for
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.fake_gitlab import FakeGitLab, fake_gitlab


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with fake_github() as fake:
        yield fake


@pytest.fixture
async def gitlab() -> AsyncIterator[FakeGitLab]:
    async with fake_gitlab() as fake:
        yield fake


@pytest.fixture
def settings(database_url, redis_url, tmp_path, github):
    return settings_for(database_url, redis_url, tmp_path, github_api_url=github.url)

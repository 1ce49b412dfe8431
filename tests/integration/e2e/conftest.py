"""A whole system for end-to-end tests: the app on a real port (MCP included) and a real worker whose
agents reach that app's MCP endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kandev.platform.settings import Settings
from tests.support.factories import settings_for
from tests.support.server import running_server
from tests.support.workers import running_worker


@dataclass
class LiveSystem:
    settings: Settings
    address: str


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


@pytest.fixture
async def live(settings: Settings) -> AsyncIterator[LiveSystem]:
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        with running_worker(wired):
            yield LiveSystem(wired, address)


def texts(rows: list[Any]) -> list[str]:
    return [r.text for r in rows]

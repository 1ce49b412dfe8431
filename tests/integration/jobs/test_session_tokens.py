"""Session MCP tokens as real launches hand them out: a real worker launches a real ACP agent (the
scripted agent behind a pipe that records the token it is given), a real server checks them."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from sqlalchemy import select

from kandev.domain.sessions.service import DeliveryMode
from kandev.domain.tasks.service import CreateTask
from kandev.models import SessionToken
from kandev.models.base import Base
from kandev.models.enums import AgentKind, PermissionPolicy
from kandev.platform.settings import Settings
from tests.integration.mcp_transport.conftest import MODERN, mcp_client, refusal
from tests.support import token_spy_agent
from tests.support.factories import new_agent_profile, settings_for
from tests.support.server import running_server
from tests.support.waiting import wait_until
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

REFUSED = "a valid session token is required"


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


@dataclass
class Live:
    address: str
    spied: Path

    @property
    def mcp_url(self) -> str:
        return f"http://{self.address}/mcp/session"

    def tokens(self) -> list[str]:
        """Every token the agent's launches were handed, in launch order."""
        return self.spied.read_text().split() if self.spied.exists() else []

    async def launches(self, count: int) -> list[str]:
        async def enough() -> bool:
            return len(self.tokens()) >= count

        await wait_until(enough, timeout=30, interval=0.05)
        return self.tokens()


@asynccontextmanager
async def live_system(settings: Settings, tmp_path: Path) -> AsyncIterator[Live]:
    async with running_server(settings) as address:
        with running_worker(settings.model_copy(update={"public_url": f"http://{address}"})):
            yield Live(address, tmp_path / "spied-tokens.txt")


async def spied_task(services: Any, workspace_id: str, spied: Path, prompt: str) -> tuple[str, str]:
    """A task whose agent is the token spy; started with `prompt`. Returns (task id, session id)."""
    profile = await new_agent_profile(
        services,
        workspace_id,
        "Token spy",
        AgentKind.ACP,
        command=[sys.executable, token_spy_agent.__file__, str(spied)],
        supports_mcp=True,
        permission_policy=PermissionPolicy.ALLOW,
    )
    task = (
        await services.tasks.create(
            CreateTask(workspace_id=workspace_id, title="Spied", agent_profile_id=profile.id, start_agent=False)
        )
    ).task
    session = (await services.sessions.start_task(task.id, prompt, None)).session
    return task.id, session.id


async def token_rows(db: Any, session_id: str) -> list[SessionToken]:
    async with db.read() as s:
        return list(
            await s.scalars(
                select(SessionToken).where(SessionToken.session_id == session_id).order_by(SessionToken.created_at)
            )
        )


async def test_a_relaunch_mints_a_new_token_and_the_previous_one_is_refused_at_once(
    services, settings, bus, db, workspace_id, tmp_path
):
    async with live_system(settings, tmp_path) as live:
        task_id, session_id = await spied_task(services, workspace_id, live.spied, "/say first\n/sleep 30")
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "first")
            [first] = await live.launches(1)
            async with mcp_client(live.mcp_url, MODERN, first) as client:
                await client.list_tools()  # the server process now holds a cached check of `first`
                # A cancelled turn ends its agent process: the next prompt launches a new one.
                await services.sessions.send_message(task_id, "/say second", delivery_mode=DeliveryMode.INTERRUPT)
                await watch.message("AGENT", "second")
                _, second = await live.launches(2)
                assert second != first
                with pytest.raises(MCPError):
                    await client.call_tool("list_tasks_kandev", {})
            assert (await refusal(live.mcp_url, MODERN, first)).message == REFUSED
            async with mcp_client(live.mcp_url, MODERN, second) as client:
                assert (await client.list_tools()).tools
    rows = await token_rows(db, session_id)
    assert [r.token_hash for r in rows] == [hashlib.sha256(t.encode()).hexdigest() for t in (first, second)]
    assert rows[0].revoked_at is not None and rows[1].revoked_at is None


async def test_a_turn_on_the_running_agent_process_keeps_its_token(services, settings, bus, db, workspace_id, tmp_path):
    async with live_system(settings, tmp_path) as live:
        task_id, session_id = await spied_task(services, workspace_id, live.spied, "/say first\n/sleep 2")
        async with watching(bus, db, session_id) as watch:
            await watch.message("AGENT", "first")
            await services.sessions.send_message(task_id, "/say queued behind")  # same job, same process
            await watch.turns_ended(2)
        [only] = live.tokens()
        async with mcp_client(live.mcp_url, MODERN, only) as client:
            assert (await client.list_tools()).tools


async def test_tokens_are_stored_only_as_hashes(services, settings, bus, db, workspace_id, tmp_path):
    async with live_system(settings, tmp_path) as live:
        _, session_id = await spied_task(services, workspace_id, live.spied, "/say hi")
        async with watching(bus, db, session_id) as watch:
            await watch.turns_ended(1)
        [token] = await live.launches(1)
    secret = token.rsplit(".", 1)[1]
    async with db.read() as s:
        for table in Base.metadata.sorted_tables:
            for row in (await s.execute(select(table))).all():
                assert secret not in repr(tuple(row)), f"the token's text is stored in {table.name}"
    [row] = await token_rows(db, session_id)
    assert row.token_hash == hashlib.sha256(token.encode()).hexdigest()


@pytest.mark.parametrize("ending", ["stop", "delete"])
async def test_every_token_of_a_session_dies_when_it_is_stopped_or_its_task_deleted_even_on_an_open_connection(
    ending, services, settings, bus, db, workspace_id, tmp_path
):
    # Issue 13: a stop ends only a live execution (an idle session answers not_running), so it stops a running turn.
    prompt = "/say hi\n/sleep 30" if ending == "stop" else "/say hi"
    async with live_system(settings, tmp_path) as live:
        task_id, session_id = await spied_task(services, workspace_id, live.spied, prompt)
        async with watching(bus, db, session_id) as watch:
            await (watch.message("AGENT", "hi") if ending == "stop" else watch.turns_ended(1))
        [token] = await live.launches(1)
        async with mcp_client(live.mcp_url, MODERN, token) as client:
            await client.list_tools()
            if ending == "stop":
                await services.sessions.stop_task(task_id)
            else:
                await services.tasks.delete(task_id)
            with pytest.raises(MCPError):
                await client.call_tool("list_tasks_kandev", {})
        assert (await refusal(live.mcp_url, MODERN, token)).message == REFUSED
    rows = await token_rows(db, session_id)
    assert rows and all(r.revoked_at is not None for r in rows)

"""Permission requests follow the launch spec's policy (the scripted agent's `/permission` directive)."""

from __future__ import annotations

import asyncio

import pytest

from kandev.runtime.base import PermissionRequest
from tests.integration.runtime.conftest import Launch

pytestmark = pytest.mark.slow


async def _outcome(launch: Launch, policy: str, handler: object = None) -> str:
    agent = await launch(permission_policy=policy, on_permission=handler)
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/permission rm -rf build")
    assert result.stop_reason == "end_turn"
    (text,) = agent.texts()
    return text


async def test_allow_policy_picks_an_allow_option(launch: Launch) -> None:
    assert await _outcome(launch, "ALLOW") == "permission rm -rf build: allow"


async def test_deny_policy_picks_a_reject_option(launch: Launch) -> None:
    assert await _outcome(launch, "DENY") == "permission rm -rf build: reject"


async def test_ask_policy_asks_the_handler_and_uses_its_choice(launch: Launch) -> None:
    asked: list[PermissionRequest] = []

    async def handler(request: PermissionRequest) -> str | None:
        asked.append(request)
        return "allow"

    assert await _outcome(launch, "ASK", handler) == "permission rm -rf build: allow"
    (request,) = asked
    assert request.title == "rm -rf build"
    assert [(o.option_id, o.kind) for o in request.options] == [
        ("allow", "allow_once"),
        ("reject", "reject_once"),
    ]


async def test_ask_policy_rejects_when_the_handler_declines(launch: Launch) -> None:
    async def handler(request: PermissionRequest) -> str | None:
        return None

    assert await _outcome(launch, "ASK", handler) == "permission rm -rf build: reject"


async def test_ask_policy_rejects_an_option_the_agent_never_offered(launch: Launch) -> None:
    async def handler(request: PermissionRequest) -> str | None:
        return "something-else"

    assert await _outcome(launch, "ASK", handler) == "permission rm -rf build: reject"


async def test_ask_policy_without_a_handler_rejects_instead_of_hanging(launch: Launch) -> None:
    assert await _outcome(launch, "ASK") == "permission rm -rf build: reject"


async def test_cancel_ends_a_turn_waiting_on_a_permission_answer(launch: Launch) -> None:
    waiting = asyncio.Event()

    async def handler(request: PermissionRequest) -> str | None:
        waiting.set()
        await asyncio.Event().wait()  # an operator who never answers
        return None

    agent = await launch(permission_policy="ASK", on_permission=handler)
    turn = asyncio.create_task(agent.runtime.prompt("/permission deploy"))
    async with asyncio.timeout(5):
        await waiting.wait()
    async with asyncio.timeout(3):
        await agent.runtime.cancel()
        result = await turn
    assert result.stop_reason == "cancelled"

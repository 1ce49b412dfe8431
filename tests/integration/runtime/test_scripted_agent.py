"""The scripted agent over real ACP stdio through AcpRuntime: the DESIGN.md directive table."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kandev.runtime.base import AgentRuntimeError
from kandev.runtime.scripted_directives import STATE_FILE
from tests.integration.runtime.conftest import Launch, group_members, pid_alive

pytestmark = pytest.mark.slow


async def test_say_streams_an_agent_message_and_ends_the_turn(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/say hello world")
    assert result.stop_reason == "end_turn" and result.error is None
    assert agent.texts() == ["hello world"]


async def test_many_updates_arrive_in_the_order_the_agent_sent_them(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        await agent.runtime.prompt("\n".join(f"/say part {n}" for n in range(100)))
    assert agent.texts() == [f"part {n}" for n in range(100)]


async def test_secrets_are_redacted_from_agent_messages(launch: Launch) -> None:
    agent = await launch(secrets=["hunter2"])
    async with asyncio.timeout(10):
        await agent.runtime.prompt("/say the password is hunter2")
    assert agent.texts() == ["the password is [REDACTED]"]


async def test_prompting_twice_at_once_is_refused(launch: Launch) -> None:
    agent = await launch()
    first = asyncio.create_task(agent.runtime.prompt("/sleep 5"))
    await asyncio.sleep(0)  # let the first prompt register its turn
    with pytest.raises(AgentRuntimeError, match="already running"):
        await agent.runtime.prompt("/say second")
    async with asyncio.timeout(3):
        await agent.runtime.cancel()
        assert (await first).stop_reason == "cancelled"


async def test_prompting_after_close_is_refused(launch: Launch) -> None:
    agent = await launch()
    await agent.runtime.close()
    with pytest.raises(AgentRuntimeError, match="not running"):
        await agent.runtime.prompt("/say hi")


async def test_a_prompt_without_directives_gets_its_first_line_echoed(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("\nplease look at the bug\nthanks")
    assert result.stop_reason == "end_turn"
    assert agent.texts() == ["please look at the bug"]


async def test_the_context_block_is_ignored(launch: Launch) -> None:
    agent = await launch()
    prompt = "<kandev-context>\ntask T1\n/say from context\n</kandev-context>\n/say from operator"
    async with asyncio.timeout(10):
        await agent.runtime.prompt(prompt)
    assert agent.texts() == ["from operator"]


async def test_fail_ends_the_turn_failed_with_its_text_after_earlier_directives(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/say before\n/fail the build is broken\n/say after")
    assert (result.stop_reason, result.error) == ("failed", "the build is broken")
    assert agent.texts() == ["before"]


async def test_end_stops_before_later_directives(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/say one\n/end\n/say two\n/fail never")
    assert result.stop_reason == "end_turn"
    assert agent.texts() == ["one"]


async def test_the_agent_takes_several_turns_in_one_session(launch: Launch) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        first = await agent.runtime.prompt("/fail first")
        second = await agent.runtime.prompt("/say second")
    assert first.stop_reason == "failed" and second.stop_reason == "end_turn"
    assert agent.texts() == ["second"]


async def test_cancel_ends_a_sleeping_turn_within_two_seconds_and_leaves_no_process(launch: Launch) -> None:
    agent = await launch()
    pid = agent.runtime.pid
    assert pid is not None
    turn = asyncio.create_task(agent.runtime.prompt("/say going to sleep\n/sleep 30\n/say woke up"))
    async with asyncio.timeout(5):
        while not agent.texts():
            await asyncio.sleep(0.01)
    started = time.monotonic()
    async with asyncio.timeout(2):
        await agent.runtime.cancel()
        result = await turn
    assert time.monotonic() - started < 2
    assert result.stop_reason == "cancelled"
    assert agent.texts() == ["going to sleep"]
    assert not pid_alive(pid) and group_members(pid) == []


async def test_close_leaves_no_process_and_can_be_repeated(launch: Launch) -> None:
    agent = await launch()
    pid = agent.runtime.pid
    assert pid is not None and pid_alive(pid)
    async with asyncio.timeout(5):
        await agent.runtime.close()
        await agent.runtime.close()
    assert not pid_alive(pid) and group_members(pid) == []


async def test_the_agent_runs_in_its_own_process_group(launch: Launch) -> None:
    agent = await launch()
    pid = agent.runtime.pid
    assert pid is not None
    assert os.getpgid(pid) == pid != os.getpgid(0)


async def test_set_mode_switches_to_plan_mode_and_reports_it(launch: Launch) -> None:
    agent = await launch()
    info = agent.runtime.info
    assert info is not None and info.modes == ["default", "plan"] and info.current_mode == "default"
    async with asyncio.timeout(5):
        await agent.runtime.set_mode("plan")
        while not agent.texts("mode"):
            await asyncio.sleep(0.01)
    assert agent.texts("mode") == ["plan"]


async def test_load_session_is_not_advertised_by_default(launch: Launch) -> None:
    agent = await launch(resume_session_id="earlier-session")
    info = agent.runtime.info
    assert info is not None
    assert (info.supports_load, info.loaded) == (False, False)
    assert info.acp_session_id != "earlier-session"


async def test_load_session_resumes_natively_when_opted_in(launch: Launch) -> None:
    agent = await launch(resume_session_id="earlier-session", env={"KANDEV_SCRIPTED_LOAD": "1"})
    info = agent.runtime.info
    assert info is not None
    assert (info.supports_load, info.loaded, info.acp_session_id) == (True, True, "earlier-session")
    async with asyncio.timeout(10):
        assert (await agent.runtime.prompt("/say resumed")).stop_reason == "end_turn"
    assert agent.texts() == ["resumed"]


async def test_every_prompt_is_logged_when_asked(launch: Launch, tmp_path: Path) -> None:
    log = tmp_path / "prompts.jsonl"
    agent = await launch(env={"KANDEV_SCRIPTED_LOG": str(log)})
    async with asyncio.timeout(10):
        await agent.runtime.prompt("<kandev-context>\nctx\n</kandev-context>\nfirst")
        await agent.runtime.prompt("second")
    assert agent.runtime.info is not None
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line["prompt"] for line in lines] == ["<kandev-context>\nctx\n</kandev-context>\nfirst", "second"]
    assert {line["session_id"] for line in lines} == {agent.runtime.info.acp_session_id}


async def test_on_question_is_remembered_in_the_working_directory(launch: Launch, tmp_path: Path) -> None:
    agent = await launch()
    async with asyncio.timeout(10):
        result = await agent.runtime.prompt("/on-question use PostgreSQL")
    assert result.stop_reason == "end_turn"
    assert json.loads((tmp_path / STATE_FILE).read_text()) == {"on_question": "use PostgreSQL"}


def test_importing_the_runtime_package_does_not_import_acp() -> None:
    modules = [
        "kandev.runtime",
        "kandev.runtime.process",
        "kandev.runtime.acp_updates",
        "kandev.runtime.scripted_tools",
    ]
    code = f"import sys, {', '.join(modules)}; print('acp' in sys.modules, 'mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == "False False"

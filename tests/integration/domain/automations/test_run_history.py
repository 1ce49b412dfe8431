"""A continued automation session resumed by an agent that can't load its ACP session gets the earlier
conversation synthesized (the newest 50 user/agent messages) with the new firing prompt after it, outside the
window; an agent that loads the session natively gets no synthesized history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.automations.firing import fire
from kandev.models import Message
from kandev.models.enums import AutomationContext
from kandev.platform.event_bus import automation_channel
from tests.integration.domain.automations.conftest import new_automation, runs_of
from tests.integration.domain.automations.test_run_turns import ended, until_run
from tests.support.factories import new_agent_profile
from tests.support.workers import running_worker

pytestmark = pytest.mark.slow

# One user prompt and 49 agent messages: exactly the 50-message window.
FIRST = "\n".join(f"/say earlier {i}" for i in range(1, 50))
SECOND = "/say the second firing"
HISTORY_HEADER = "The conversation so far (you are resuming it):"


async def run_twice(services: Any, db: Any, bus: Any, settings: Any, workspace_id: str, env: dict[str, str]) -> Any:
    profile = await new_agent_profile(services, workspace_id, "Logged", env=env)
    automation_id = await new_automation(
        services,
        workspace_id,
        prompt="{{data.script}}",
        context=AutomationContext.CONTINUE_SESSION,
        agent_profile_id=profile.id,
    )
    async with bus.subscribe(automation_channel(workspace_id)) as events:
        for script in (FIRST, SECOND):
            # A worker per firing: the second turn launches a fresh agent process, which must resume.
            with running_worker(settings):
                outcome = await fire(
                    services.ctx, automation_id, trigger_id=None, trigger_type="manual", data={"script": script}
                )
                assert outcome.run_id
                run = await until_run(events, outcome.run_id, ended, timeout=60)
                assert run["status"] == "succeeded", run
    return await runs_of(db, automation_id)


def logged_prompts(log: Path) -> list[str]:
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()]


def context_of(prompt: str) -> str:
    return prompt.split("<kandev-context>", 1)[1].split("</kandev-context>", 1)[0]


async def agent_texts(db: Any, turn_id: str) -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message.text).where(Message.turn_id == turn_id, Message.kind == "AGENT").order_by(Message.seq)
        )
        return list(rows)


async def test_a_continued_run_whose_agent_cannot_load_its_session_resumes_the_earlier_conversation(
    services, db, bus, settings, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    first, second = await run_twice(services, db, bus, settings, workspace_id, {"KANDEV_SCRIPTED_LOG": str(log)})
    assert (second.task_id, second.session_id) == (first.task_id, first.session_id)

    prompts = logged_prompts(log)
    assert len(prompts) == 2
    resumed = prompts[1]
    assert HISTORY_HEADER not in prompts[0]
    history = context_of(resumed)
    assert HISTORY_HEADER in history
    entries = [line for line in history.splitlines() if line.startswith("[")]
    # The whole first run (its prompt and 49 answers): the new firing prompt takes no slot of the 50.
    assert len(entries) == 50
    assert entries[0] == "[User] /say earlier 1"
    assert entries[1:] == [f"[You] earlier {i}" for i in range(1, 50)]
    assert not any("second firing" in line for line in entries)
    # The firing prompt follows the history, once, at the end.
    assert resumed.rstrip().endswith(SECOND)
    assert resumed.count(SECOND) == 1
    # Quoted history is no instruction: the agent did only what the new firing asked.
    assert await agent_texts(db, second.turn_id) == ["the second firing"]


async def test_a_continued_run_whose_agent_loads_its_session_natively_gets_no_synthesized_history(
    services, db, bus, settings, workspace_id, tmp_path
):
    log = tmp_path / "prompts.jsonl"
    env = {"KANDEV_SCRIPTED_LOG": str(log), "KANDEV_SCRIPTED_LOAD": "1"}
    first, second = await run_twice(services, db, bus, settings, workspace_id, env)
    assert second.session_id == first.session_id

    prompts = logged_prompts(log)
    assert len(prompts) == 2
    resumed = prompts[1]
    assert HISTORY_HEADER not in resumed
    assert "earlier" not in resumed
    assert resumed.rstrip().endswith(SECOND)
    assert await agent_texts(db, second.turn_id) == ["the second firing"]

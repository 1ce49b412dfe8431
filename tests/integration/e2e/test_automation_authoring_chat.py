"""A "describe an automation" chat with the built-in authoring agent (a real ACP process, no model) in real
turns: it asks what is missing, checks the definition over MCP, creates it only after a yes, and after five
messages without a viable definition hands over to the form with what it captured (authoringDraft)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.automations.authoring import DraftState
from kandev.models import Automation, Message
from kandev.models.enums import AgentKind, AutomationCreatedVia
from kandev.platform.settings import Settings
from tests.conftest import GraphQLCaller
from tests.support.factories import settings_for
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.watch import watching

DRAFT = """query($task: ID!) { authoringDraft(taskId: $task) { taskId state operatorMessages name prompt
    automationId triggers { type expression timezone filters } } }"""

pytestmark = pytest.mark.slow


async def said(db: Any, session_id: str, kind: str) -> list[Message]:
    async with db.read() as s:
        query = select(Message).where(Message.session_id == session_id, Message.kind == kind).order_by(Message.seq)
        return list(await s.scalars(query))


async def automations_of(db: Any, workspace_id: str) -> list[Automation]:
    async with db.read() as s:
        return list(await s.scalars(select(Automation).where(Automation.workspace_id == workspace_id)))


async def test_the_authoring_agent_asks_checks_confirms_and_creates_the_automation_in_chat(
    live, services, bus, db, workspace_id
):
    started = await services.automations.start_authoring(workspace_id, "summarise the merged pull requests", None)
    task_id, session_id = started.task.id, started.session.id
    profile = await services.agent_profiles.get(started.session.agent_profile_id)
    assert profile.kind == AgentKind.AUTHOR and profile.builtin

    async with watching(bus, db, session_id) as watch:
        await watch.next_turn_end(timeout=60)
        assert (await said(db, session_id, "AGENT"))[-1].text.startswith("When should it run?")
        assert (await services.automations.authoring_draft(task_id)).state == DraftState.COLLECTING

        await services.sessions.send_message(task_id, "every weekday at 9 in Europe/Berlin")
        await watch.next_turn_end(timeout=60)
        shown = (await said(db, session_id, "AGENT"))[-1].text
        assert shown.startswith("Here is the automation I will create:")
        assert "Fires: At 09:00, Monday through Friday (Europe/Berlin); next: 2" in shown  # validate_cron's words
        assert "Prompt: summarise the merged pull requests" in shown and "Agent: Scripted" in shown
        assert "Pre-flight: OK" in shown and shown.endswith("Reply yes to create it, or tell me what to change.")
        calls = await said(db, session_id, "TOOL_CALL")
        assert [(c.data["title"], c.data["status"]) for c in calls] == [
            ("list_available_agents", "completed"),
            ("validate_cron", "completed"),
            ("dry_run_preflight", "completed"),
        ]
        assert await automations_of(db, workspace_id) == []  # nothing before the yes
        draft = await services.automations.authoring_draft(task_id)
        assert draft.state == DraftState.CONFIRMING and draft.operator_messages == 2

        await services.sessions.send_message(task_id, "yes")
        await watch.next_turn_end(timeout=60)

    [automation] = await automations_of(db, workspace_id)
    assert (await said(db, session_id, "AGENT"))[
        -1
    ].text == f"Created the automation '{automation.name}' ({automation.id})."
    record = await services.automations.get(automation.id)
    assert record.created_via == AutomationCreatedVia.CHAT and record.prompt == "summarise the merged pull requests"
    assert [(t.type, t.config) for t in record.triggers] == [
        ("scheduled", {"expression": "0 9 * * 1-5", "timezone": "Europe/Berlin"})
    ]
    scripted = [p for p in await services.agent_profiles.list(workspace_id) if p.kind == AgentKind.SCRIPTED]
    assert record.agent_profile_id == scripted[0].id
    draft = (await GraphQLCaller(services)(DRAFT, task=task_id))["authoringDraft"]
    assert (draft["state"], draft["operatorMessages"], draft["automationId"]) == ("CONFIRMED", 3, automation.id)
    assert draft["triggers"] == [
        {"type": "SCHEDULED", "expression": "0 9 * * 1-5", "timezone": "Europe/Berlin", "filters": None}
    ]


async def test_after_five_messages_without_a_viable_definition_it_hands_over_to_the_form_with_the_draft(
    live, services, bus, db, workspace_id
):
    started = await services.automations.start_authoring(workspace_id, "hmm", None)
    task_id, session_id = started.task.id, started.session.id
    async with watching(bus, db, session_id) as watch:
        await watch.next_turn_end(timeout=60)
        for text in ("not sure", "something useful", "whatever", "still thinking"):
            await services.sessions.send_message(task_id, text)
            await watch.next_turn_end(timeout=60)

    answers = [m.text for m in await said(db, session_id, "AGENT")]
    assert len(answers) == 5
    assert all(a.startswith("When should it run?") for a in answers[:3])
    assert answers[3].startswith("Here is what I have so far:")  # a recap, not a fourth question in a row
    assert answers[4].startswith("I'm having trouble — let's switch to the form. What I captured:")
    assert "Fires: (not yet)" in answers[4] and answers[4].endswith("filled in with what I captured.")
    assert await automations_of(db, workspace_id) == []
    draft = (await GraphQLCaller(services)(DRAFT, task=task_id))["authoringDraft"]
    assert draft == {
        "taskId": task_id,
        "state": "HANDED_OFF",
        "operatorMessages": 5,
        "name": "Still thinking",
        "prompt": "still thinking",
        "automationId": None,
        "triggers": [],
    }


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with fake_github() as fake:
        yield fake


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, github: FakeGitHub) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5, github_api_url=github.url)


async def test_a_missing_credential_is_asked_for_and_the_automation_waits_for_it_unless_saved_anyway(
    live, services, bus, db, workspace_id
):
    """Story 4, scenario 3: the pre-flight check finds the GitHub connection missing; the chat asks for it,
    pointing to the settings page that adds it, and creates nothing until a new check finds it, unless the
    operator says to save it anyway."""
    waiting = await services.automations.start_authoring(workspace_id, "on each push to main run the linters", None)
    forced = await services.automations.start_authoring(workspace_id, "when a pull request is opened, review it", None)
    async with watching(bus, db, waiting.session.id) as first, watching(bus, db, forced.session.id) as second:
        await first.next_turn_end(timeout=60)
        await second.next_turn_end(timeout=60)
        shown = (await said(db, waiting.session.id, "AGENT"))[-1].text
        assert "Pre-flight: FAILED — the workspace has no GitHub connection" in shown
        asked = "Missing: GitHub connection. Add it in Settings → Code hosts (/settings/connections)"
        assert asked in shown

        for chat, watch in ((waiting, first), (forced, second)):
            await services.sessions.send_message(chat.task.id, "yes")
            await watch.next_turn_end(timeout=60)
            held = (await said(db, chat.session.id, "AGENT"))[-1].text
            assert held.startswith("I haven't created it yet.") and asked in held and "save it anyway" in held
            assert (await services.automations.authoring_draft(chat.task.id)).state == DraftState.CONFIRMING
        assert await automations_of(db, workspace_id) == []

        await services.sessions.send_message(forced.task.id, "save it anyway")
        await second.next_turn_end(timeout=60)
        [saved_anyway] = await automations_of(db, workspace_id)
        assert saved_anyway.prompt == "review it"

        await services.sessions.send_message(waiting.task.id, "done, I added it")
        await first.next_turn_end(timeout=60)
        assert len(await automations_of(db, workspace_id)) == 1  # still missing: asked again, nothing created
        assert (await said(db, waiting.session.id, "AGENT"))[-1].text.startswith("I haven't created it yet.")

        await services.github.connect(workspace_id, "good-token")
        await services.sessions.send_message(waiting.task.id, "done, it is connected now")
        await first.next_turn_end(timeout=60)

    created = next(a for a in await automations_of(db, workspace_id) if a.id != saved_anyway.id)
    assert created.prompt == "run the linters"
    assert (await said(db, waiting.session.id, "AGENT"))[-1].text == (
        f"Created the automation '{created.name}' ({created.id})."
    )
    draft = await services.automations.authoring_draft(waiting.task.id)
    assert (draft.state, draft.automation_id) == (DraftState.CONFIRMED, created.id)
    record = await services.automations.get(created.id)
    assert record.triggers[0].config["all_repositories"] is True

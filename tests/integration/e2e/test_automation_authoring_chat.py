"""A "describe an automation" chat with the built-in authoring agent (a real ACP process, no model) in real
turns: it asks what is missing, checks the definition over MCP, creates it only after a yes, and after five
messages without a viable definition hands over to the form with what it captured (authoringDraft)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.automations.authoring import DraftState
from kandev.models import Automation, Message
from kandev.models.enums import AgentKind, AutomationCreatedVia
from tests.conftest import GraphQLCaller
from tests.support.watch import watching

DRAFT = """query($task: ID!) { authoringDraft(taskId: $task) { taskId state operatorMessages name prompt
    triggers { type expression timezone filters } } }"""

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
    assert (draft["state"], draft["operatorMessages"]) == ("CONFIRMED", 3)
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
        "triggers": [],
    }

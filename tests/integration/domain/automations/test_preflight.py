"""Pre-flight acknowledgement: a save stores PENDING and enqueues the check; the check (run here as the job
runs it, by calling its domain function) stores OK, WARN or FAILED with the reason, retries what is
transient, never shows a credential's value, and changes nothing when run again for the same inputs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.preflight import PENDING, AckStatus, check_and_store
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.sessions.tool_profiles import McpProfile, Surface
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import Automation
from kandev.models.enums import AgentKind, TriggerType
from kandev.platform.event_bus import automation_channel
from kandev.platform.settings import Settings
from tests.integration.domain.automations.conftest import scheduled
from tests.support.factories import settings_for
from tests.support.fake_github import FakeGitHub, fake_github
from tests.support.server import free_port

SECRET = "sk-live-preflight-0123456789"


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with fake_github() as fake:
        yield fake


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path, github: FakeGitHub) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, github_api_url=github.url, preflight_backoff_seconds=0)


async def scripted_id(services: Any, workspace_id: str) -> str:
    profiles = await services.agent_profiles.list(workspace_id)
    return next(p.id for p in profiles if p.kind == AgentKind.SCRIPTED)


async def saved(services: Any, workspace_id: str, **fields: Any) -> str:
    fields.setdefault("name", "Morning digest")
    fields.setdefault("prompt", "Summarise yesterday's merged pull requests")
    if "agent_profile_id" not in fields:
        fields["agent_profile_id"] = await scripted_id(services, workspace_id)
    fields.setdefault("triggers", scheduled())
    return (await services.automations.create(workspace_id, AutomationFields(**fields))).automation.id


async def stored(db: Any, automation_id: str) -> Automation:
    async with db.read() as session:
        row = await session.get(Automation, automation_id)
        assert row is not None
        return row


def pr_trigger() -> list[TriggerFields]:
    return [TriggerFields(type=TriggerType.GITHUB_PR, config={"repositories": ["octo/app"]})]


async def test_a_saved_automation_is_pending_until_its_check_stores_ok_with_profile_tools_next_run_and_summary(
    services, db, workspace_id
):
    automation_id = await saved(services, workspace_id)
    record = await services.automations.get(automation_id)
    assert record.last_ack == PENDING.to_json()

    assert await check_and_store(services.ctx, automation_id) == "OK"

    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and ack["status"] == "OK" and ack["detail"] is None
    assert ack["routed_profile_id"] == await scripted_id(services, workspace_id)
    assert ack["tools"] == McpProfile(Surface.AUTOMATION_COORDINATOR).tool_names()
    assert ack["next_run"].endswith("09:00:00+00:00")
    assert ack["summary"].startswith("At 09:00") and "Summarise yesterday's merged pull requests" in ack["summary"]
    assert ack["credentials"] == [] and ack["acked_at"]


async def test_a_disabled_automation_or_one_without_a_trigger_is_acked_warn_with_why(services, db, workspace_id):
    disabled = await saved(services, workspace_id, enabled=False)
    manual = await saved(services, workspace_id, name="By hand", triggers=[])
    assert await check_and_store(services.ctx, disabled) == "WARN"
    assert await check_and_store(services.ctx, manual) == "WARN"
    first, second = (await stored(db, disabled)).last_ack, (await stored(db, manual)).last_ack
    assert first is not None and first["next_run"] == "disabled" and "disabled" in first["detail"]
    assert second is not None and second["next_run"] == "manual only" and "no enabled trigger" in second["detail"]


async def test_an_unavailable_agent_profile_is_acked_failed_naming_its_missing_command(services, db, workspace_id):
    profile = await services.agent_profiles.create(
        workspace_id, AgentProfileFields(name="Ghost", kind=AgentKind.ACP, command=["no-such-agent-kandev-test"])
    )
    automation_id = await saved(services, workspace_id, agent_profile_id=profile.id)
    assert await check_and_store(services.ctx, automation_id) == "FAILED"
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None
    assert ack["detail"] == "agent profile 'Ghost' is unavailable: command 'no-such-agent-kandev-test' is not on PATH"
    assert ack["routed_profile_name"] == "Ghost"


async def test_the_ack_and_the_launch_agree_on_the_workspace_default_when_no_agent_profile_is_chosen(
    services, db, workspace_id, gql
):
    """One rule for both: an automation naming no profile is acked routed to the workspace's default and its
    runs launch there; a change of that default re-acks it (and only the automations that follow it)."""
    follower = await saved(services, workspace_id, agent_profile_id=None)
    default_id = await scripted_id(services, workspace_id)
    own = await saved(services, workspace_id, name="Named", agent_profile_id=default_id)
    for automation_id in (follower, own):
        assert await check_and_store(services.ctx, automation_id) == "OK"
    ack = (await stored(db, follower)).last_ack
    assert ack is not None and ack["routed_profile_id"] == default_id and ack["follows_default"]
    assert "it runs on the workspace default, Scripted," in ack["summary"]
    assert (await session_profile_of_a_run(services, follower)) == default_id

    other = await services.agent_profiles.create(
        workspace_id, AgentProfileFields(name="Night shift", kind=AgentKind.SCRIPTED)
    )
    changed = await gql(UPDATE_WORKSPACE, i={"workspaceId": workspace_id, "defaultAgentProfileId": other.id})
    assert changed["updateWorkspace"]["workspace"]["defaultAgentProfileId"] == other.id
    assert (await stored(db, follower)).last_ack == PENDING.to_json()
    assert (await stored(db, own)).last_ack["status"] == "OK"  # type: ignore[index]  # names its own: untouched
    assert await check_and_store(services.ctx, follower) == "OK"
    ack = (await stored(db, follower)).last_ack
    assert (
        ack is not None and ack["routed_profile_id"] == other.id and "workspace default, Night shift" in ack["summary"]
    )
    said = [e.text for e in (await services.automations.thread(follower)).entries]
    told = [n for n, text in enumerate(said) if text.startswith("The workspace's default agent profile is now")]
    assert len(told) == 1 and "'Night shift' (was 'Scripted')" in said[told[0]]
    assert (
        said[told[0] + 1].startswith("Pre-flight check: OK.")
        and "Night shift (the workspace default)" in (said[told[0] + 1])
    )
    assert (await session_profile_of_a_run(services, follower)) == other.id


UPDATE_WORKSPACE = """mutation($i: UpdateWorkspaceInput!) { updateWorkspace(input: $i) {
  __typename ... on WorkspacePayload { workspace { defaultAgentProfileId } } } }"""


async def session_profile_of_a_run(services: Any, automation_id: str) -> str | None:
    """The agent profile the session of a Run now firing launched with."""
    outcome = await fire(services.ctx, automation_id, trigger_id=None, trigger_type="manual")
    assert outcome.run_id and await launch_run(services.ctx, outcome.run_id) == "launched"
    run = await services.automation_runs.get(outcome.run_id)
    session = await services.sessions.get(run.session_id)
    await services.automation_runs.stop(outcome.run_id)  # frees the slot for the next firing
    return session.agent_profile_id


async def test_a_github_trigger_with_an_authenticating_connection_is_ok_and_a_rejected_token_is_failed(
    services, db, workspace_id, github
):
    github.tokens["ghp_PreflightToken0001"] = "hubot"
    await services.github.connect(workspace_id, "ghp_PreflightToken0001")
    automation_id = await saved(services, workspace_id, triggers=pr_trigger())
    assert await check_and_store(services.ctx, automation_id) == "OK"
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and ack["next_run"] == "on GitHub events"
    assert ack["credentials"] == [{"name": "GitHub connection", "present": True, "outcome": "authenticated"}]

    del github.tokens["ghp_PreflightToken0001"]
    await services.automations.reack(automation_id)
    assert await check_and_store(services.ctx, automation_id) == "FAILED"
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and ack["detail"] == "GitHub token was rejected"
    assert ack["credentials"] == [{"name": "GitHub connection", "present": True, "outcome": "rejected"}]
    assert "ghp_PreflightToken0001" not in json.dumps(ack)


async def test_a_github_trigger_without_a_connection_is_acked_failed(services, db, workspace_id):
    automation_id = await saved(services, workspace_id, triggers=pr_trigger())
    assert await check_and_store(services.ctx, automation_id) == "FAILED"
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and ack["detail"] == "the workspace has no GitHub connection"
    assert ack["credentials"] == [{"name": "GitHub connection", "present": False, "outcome": "missing"}]


async def test_an_unreachable_github_is_retried_and_once_the_attempts_are_spent_the_ack_is_failed_with_why(
    services, db, settings, workspace_id
):
    await services.github.connect(workspace_id, "good-token")
    automation_id = await saved(services, workspace_id, triggers=pr_trigger())
    dead = settings.model_copy(update={"github_api_url": f"http://127.0.0.1:{free_port()}", "preflight_attempts": 3})
    assert await check_and_store(replace(services.ctx, settings=dead), automation_id) == "FAILED"
    row = await stored(db, automation_id)
    assert row.ack_attempts == 3 and row.last_ack is not None
    assert row.last_ack["detail"].startswith("pre-flight gave up after 3 attempts: GitHub unreachable")


async def test_secrets_the_profile_references_are_reported_by_presence_never_by_value(services, db, workspace_id):
    await services.secrets.create(workspace_id, "API_KEY", SECRET)
    profile = await services.agent_profiles.create(
        workspace_id,
        AgentProfileFields(
            name="Keyed", kind=AgentKind.SCRIPTED, env={"A": "${secret:API_KEY}", "B": "${secret:MISSING_ONE}"}
        ),
    )
    automation_id = await saved(services, workspace_id, agent_profile_id=profile.id)
    async with services.ctx.bus.subscribe(automation_channel(workspace_id)) as events:
        assert await check_and_store(services.ctx, automation_id) == "FAILED"
        event = await asyncio.wait_for(anext(events), 10)
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and ack["credentials"] == [
        {"name": "secret API_KEY", "present": True, "outcome": "present"},
        {"name": "secret MISSING_ONE", "present": False, "outcome": "missing"},
    ]
    assert ack["detail"] == "the agent profile references missing secrets: MISSING_ONE"
    assert event["kind"] == "ACK_CHANGED" and event["ack"] == ack
    assert SECRET not in json.dumps(ack) + json.dumps(event)


async def test_checking_again_with_unchanged_inputs_changes_nothing_and_a_recheck_gives_the_same_ack(
    services, db, workspace_id
):
    automation_id = await saved(services, workspace_id)
    await check_and_store(services.ctx, automation_id)
    first = await stored(db, automation_id)
    assert await check_and_store(services.ctx, automation_id) == "unchanged"
    again = await stored(db, automation_id)
    assert (again.last_ack, again.ack_fingerprint, again.updated_at) == (
        first.last_ack,
        first.ack_fingerprint,
        first.updated_at,
    )

    await services.automations.reack(automation_id)
    await check_and_store(services.ctx, automation_id)
    rechecked = (await stored(db, automation_id)).last_ack
    assert rechecked is not None and first.last_ack is not None
    assert {**rechecked, "acked_at": None} == {**first.last_ack, "acked_at": None}


async def test_an_update_re_acks_only_when_prompt_profile_executor_repositories_or_triggers_change(
    services, db, workspace_id
):
    automation_id = await saved(services, workspace_id)
    await check_and_store(services.ctx, automation_id)
    await services.automations.update(automation_id, AutomationFields(name="Renamed", description="why"))
    assert (await services.automations.get(automation_id)).last_ack["status"] == "OK"  # type: ignore[index]

    updated = await services.automations.update(automation_id, AutomationFields(prompt="Something else"))
    assert updated.automation.last_ack == PENDING.to_json()
    assert (await stored(db, automation_id)).last_ack == PENDING.to_json()


async def test_reack_sets_pending_and_the_check_stores_the_result_again(services, db, workspace_id):
    automation_id = await saved(services, workspace_id)
    await check_and_store(services.ctx, automation_id)
    record = await services.automations.reack(automation_id)
    assert record.last_ack == PENDING.to_json()
    assert await check_and_store(services.ctx, automation_id) == "OK"


async def test_a_dry_run_answers_the_ack_of_an_unsaved_definition_and_stores_nothing(services, db, workspace_id):
    profile_id = await scripted_id(services, workspace_id)
    ack = await services.automations.dry_run(
        workspace_id,
        AutomationFields(name="Draft", prompt="Triage new issues", agent_profile_id=profile_id, triggers=scheduled()),
    )
    assert ack.status == AckStatus.OK and ack.routed_profile_id == profile_id
    assert "Triage new issues" in ack.summary
    webhook = await services.automations.dry_run(
        workspace_id,
        AutomationFields(
            name="Hook", prompt="x", agent_profile_id=profile_id, triggers=[TriggerFields(type=TriggerType.WEBHOOK)]
        ),
    )
    assert webhook.next_run == "/api/v1/automations/webhook/{id}"
    async with db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Automation)) == 0


async def test_enabling_or_disabling_an_automation_or_its_trigger_writes_a_new_ack_and_thread_entry(
    services, db, workspace_id
):
    """The stored ack stays current: the badge (lastAck) and the next-run indicator never disagree."""
    automation_id = await saved(services, workspace_id)
    assert await check_and_store(services.ctx, automation_id) == "OK"
    trigger_id = (await services.automations.get(automation_id)).triggers[0].id

    async def acks() -> list[str]:
        page = await services.automations.thread(automation_id)
        return [e.text for e in page.entries if e.kind == "preflight_ack"]

    steps = [
        (lambda: services.automations.set_enabled(automation_id, False), "WARN", "disabled"),
        (lambda: services.automations.set_enabled(automation_id, True), "OK", "09:00:00+00:00"),
        (lambda: services.automations.set_trigger_enabled(trigger_id, False), "WARN", "manual only"),
        (lambda: services.automations.set_trigger_enabled(trigger_id, True), "OK", "09:00:00+00:00"),
    ]
    for change, status, next_run in steps:
        written = len(await acks())
        answered = await change()
        assert answered.last_ack is not None and answered.last_ack["status"] == "PENDING"
        assert (await stored(db, automation_id)).last_ack == PENDING.to_json()
        assert await check_and_store(services.ctx, automation_id) == status
        ack = (await stored(db, automation_id)).last_ack
        assert ack is not None and ack["next_run"].endswith(next_run)
        record = await services.automations.get(automation_id)
        indicator = services.automations.indicator(record, None)
        assert (indicator.state == "disabled") == (ack["next_run"] == "disabled")
        assert (indicator.state == "manual") == (ack["next_run"] == "manual only")
        entries = await acks()
        assert len(entries) == written + 1 and entries[-1].startswith(f"Pre-flight check: {status}.")


async def test_a_github_condition_without_repositories_is_acked_warn_saying_it_is_not_evaluated(
    services, db, workspace_id
):
    await services.github.connect(workspace_id, "good-token")
    unlisted = [TriggerFields(type=TriggerType.GITHUB_PUSH, config={})]
    every = [TriggerFields(type=TriggerType.GITHUB_PUSH, config={"all_repositories": True})]
    automation_id = await saved(services, workspace_id, triggers=unlisted)
    assert await check_and_store(services.ctx, automation_id) == "WARN"
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and "lists no repository, so it is not evaluated" in ack["detail"]
    chosen = await saved(services, workspace_id, name="Every push", triggers=every)
    assert await check_and_store(services.ctx, chosen) == "OK"

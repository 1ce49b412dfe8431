"""Automation queries and mutations."""

from __future__ import annotations

from typing import Annotated

import strawberry

from kandev.domain.automations.records import AutomationRecord, SavedAutomation
from kandev.domain.automations.schedule import MAX_CHECK_COUNT
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.resolvers.sessions import started_payload
from kandev.graphql.schema.agenda_types import Agenda, CronCheck
from kandev.graphql.schema.automation_inputs import (
    AutomationIdArgument,
    AutomationPayload,
    CreateAutomationInput,
    CreateAutomationResult,
    DeleteAutomationPayload,
    DeleteAutomationResult,
    DryRunPreflightResult,
    ReackAutomationInput,
    ReackAutomationResult,
    RevealWebhookSecretResult,
    RotateWebhookSecretResult,
    SetAutomationEnabledInput,
    SetAutomationEnabledResult,
    SetAutomationTriggerEnabledInput,
    SetAutomationTriggerEnabledResult,
    StartAutomationAuthoringInput,
    StartAutomationAuthoringResult,
    UpdateAutomationInput,
    UpdateAutomationResult,
    WebhookSecretPayload,
)
from kandev.graphql.schema.automation_types import (
    AuthoringDraft,
    Automation,
    AutomationAck,
    AutomationRunConnection,
    AutomationThreadConnection,
    runs_of,
    thread_connection,
)
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.declare import argument
from kandev.graphql.schema.enums import AutomationRunStatus, AutomationRunTriggerType


async def automations(info: Info, workspace_id: strawberry.ID) -> list[Automation]:
    return [Automation.of(r) for r in await info.context.services.automations.list(str(workspace_id))]


async def automation(info: Info, id: strawberry.ID) -> Automation:
    return Automation.of(await info.context.services.automations.get(str(id)))


async def automation_runs(
    info: Info,
    automation_id: strawberry.ID,
    first: int = 50,
    after: str | None = None,
    status: AutomationRunStatus | None = None,
    trigger_type: AutomationRunTriggerType | None = None,
) -> AutomationRunConnection:
    return await runs_of(info, str(automation_id), first, after, status, trigger_type)


async def automation_thread(
    info: Info, automation_id: strawberry.ID, first: int = 50, after: str | None = None
) -> AutomationThreadConnection:
    page = await info.context.services.automations.thread(str(automation_id), first=first, after=after)
    return thread_connection(page)


async def agenda(info: Info, workspace_id: strawberry.ID) -> Agenda:
    return Agenda.of(await info.context.services.automations.agenda(str(workspace_id)))


# Generous bounds on what is parsed at all; the schedule's own limits answer valid: false with the reason.
_EXPRESSION = (
    "A five-field cron expression, an @-name (@hourly, @daily, ...) or @every D, D a Go duration (30m, 1.5h, "
    "1h30m, 90000ms) or days (7d)."
)
_TIMEZONE = "An IANA zone such as Europe/Berlin; empty: UTC."


def validate_cron(
    info: Info,
    expression: Annotated[str, argument(_EXPRESSION, max_length=1_000)],
    timezone: Annotated[str, argument(_TIMEZONE, max_length=200)] = "",
    count: Annotated[int, argument("How many next fires to list, 1-50.", minimum=1, maximum=MAX_CHECK_COUNT)] = 5,
) -> CronCheck:
    return CronCheck.of(info.context.services.automations.check_schedule(expression, timezone, count))


def _saved(saved: SavedAutomation) -> AutomationPayload:
    return AutomationPayload(automation=Automation.of(saved.automation), webhook_secret=saved.webhook_secret)


def _payload(record: AutomationRecord) -> AutomationPayload:
    return AutomationPayload(automation=Automation.of(record))


async def create_automation(info: Info, input: CreateAutomationInput) -> CreateAutomationResult:
    call = info.context.services.automations.create(str(input.workspace_id), input.to_fields())
    return await attempt(call, _saved)


async def start_automation_authoring(
    info: Info, input: StartAutomationAuthoringInput
) -> StartAutomationAuthoringResult:
    agent_profile_id = str(input.agent_profile_id) if input.agent_profile_id else None
    call = info.context.services.automations.start_authoring(str(input.workspace_id), input.prompt, agent_profile_id)
    return await attempt(call, started_payload)


async def authoring_draft(info: Info, task_id: strawberry.ID) -> AuthoringDraft:
    return AuthoringDraft.of(await info.context.services.automations.authoring_draft(str(task_id)))


async def update_automation(info: Info, input: UpdateAutomationInput) -> UpdateAutomationResult:
    call = info.context.services.automations.update(str(input.automation_id), input.to_fields())
    return await attempt(call, _saved)


async def set_automation_enabled(info: Info, input: SetAutomationEnabledInput) -> SetAutomationEnabledResult:
    call = info.context.services.automations.set_enabled(str(input.automation_id), input.enabled)
    return await attempt(call, _payload)


async def set_automation_trigger_enabled(
    info: Info, input: SetAutomationTriggerEnabledInput
) -> SetAutomationTriggerEnabledResult:
    call = info.context.services.automations.set_trigger_enabled(str(input.trigger_id), input.enabled)
    return await attempt(call, _payload)


async def delete_automation(info: Info, automation_id: AutomationIdArgument) -> DeleteAutomationResult:
    call = info.context.services.automations.delete(str(automation_id))
    return await attempt(call, lambda r: DeleteAutomationPayload(automation_id=strawberry.ID(r.id)))


async def reveal_webhook_secret(info: Info, automation_id: AutomationIdArgument) -> RevealWebhookSecretResult:
    call = info.context.services.automations.reveal_webhook_secret(str(automation_id))
    return await attempt(call, lambda s: WebhookSecretPayload(automation_id=automation_id, secret=s))


async def rotate_webhook_secret(info: Info, automation_id: AutomationIdArgument) -> RotateWebhookSecretResult:
    call = info.context.services.automations.rotate_webhook_secret(str(automation_id))
    return await attempt(call, lambda s: WebhookSecretPayload(automation_id=automation_id, secret=s))


async def reack_automation(info: Info, input: ReackAutomationInput) -> ReackAutomationResult:
    call = info.context.services.automations.reack(str(input.automation_id))
    return await attempt(call, _payload)


async def dry_run_preflight(info: Info, input: CreateAutomationInput) -> DryRunPreflightResult:
    call = info.context.services.automations.dry_run(str(input.workspace_id), input.to_fields())
    return await attempt(call, AutomationAck.of)

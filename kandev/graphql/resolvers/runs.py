"""Run queries, mutations and the automationEvents subscription: thin adapters over AutomationRunService."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime

import strawberry

from kandev.domain.automations.firing import FireOutcome
from kandev.domain.automations.history import RunFilter
from kandev.domain.automations.records import RunRecord
from kandev.domain.automations.run_events import run_of_json
from kandev.domain.automations.thread import entry_of_json
from kandev.graphql.resolvers.common import attempt
from kandev.graphql.schema.automation_types import (
    AutomationAck,
    AutomationRun,
    AutomationRunConnection,
    AutomationThreadMessage,
    run_connection,
)
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.enums import AutomationEventKind, AutomationRunStatus, AutomationRunTriggerType
from kandev.graphql.schema.run_inputs import (
    AutomationEvent,
    AutomationRunPayload,
    DeleteAllRunsInput,
    DeleteAllRunsPayload,
    DeleteAllRunsResult,
    DeleteRunInput,
    DeleteRunPayload,
    DeleteRunResult,
    RunAutomationNowInput,
    RunAutomationNowPayload,
    RunAutomationNowResult,
    StopRunInput,
    StopRunResult,
)
from kandev.graphql.schema.selection import selects
from kandev.models.enums import RunStatus, RunTriggerType
from kandev.platform.event_bus import automation_channel


async def runs(
    info: Info,
    workspace_id: strawberry.ID,
    first: int = 50,
    after: str | None = None,
    status: AutomationRunStatus | None = None,
    trigger_type: AutomationRunTriggerType | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> AutomationRunConnection:
    filters = RunFilter(
        status=RunStatus(status.value) if status else None,
        trigger_type=RunTriggerType(trigger_type.value) if trigger_type else None,
        since=since,
        until=until,
    )
    page = await info.context.services.automation_runs.in_workspace(
        str(workspace_id), filters, first=first, after=after, count=selects(info, "totalCount")
    )
    return run_connection(page.records, page.cursors, page.has_next_page, page.total_count)


def _fired(result: tuple[FireOutcome, RunRecord | None]) -> RunAutomationNowPayload:
    outcome, run = result
    return RunAutomationNowPayload(
        admission=outcome.admission, reason=outcome.reason, run=AutomationRun.of(run) if run else None
    )


async def run_automation_now(info: Info, input: RunAutomationNowInput) -> RunAutomationNowResult:
    return await attempt(info.context.services.automation_runs.run_now(str(input.automation_id)), _fired)


async def stop_run(info: Info, input: StopRunInput) -> StopRunResult:
    call = info.context.services.automation_runs.stop(str(input.run_id))
    return await attempt(call, lambda r: AutomationRunPayload(run=AutomationRun.of(r)))


async def delete_run(info: Info, input: DeleteRunInput) -> DeleteRunResult:
    call = info.context.services.automation_runs.delete(str(input.run_id))
    return await attempt(call, lambda r: DeleteRunPayload(run_id=strawberry.ID(r.id)))


async def delete_all_runs(info: Info, input: DeleteAllRunsInput) -> DeleteAllRunsResult:
    call = info.context.services.automation_runs.delete_all(str(input.automation_id))
    return await attempt(call, lambda n: DeleteAllRunsPayload(automation_id=input.automation_id, deleted_count=n))


async def automation_events(info: Info, workspace_id: strawberry.ID) -> AsyncGenerator[AutomationEvent, None]:
    services = info.context.services
    await services.workspaces.get(str(workspace_id))  # authorize before listening
    async with services.ctx.bus.subscribe(automation_channel(str(workspace_id))) as events:
        yield AutomationEvent(kind=AutomationEventKind.SUBSCRIBED)
        async for payload in events:
            run, next_fire, entry = payload["run"], payload.get("next_fire"), payload.get("thread_message")
            yield AutomationEvent(
                kind=AutomationEventKind(payload["kind"]),
                automation_id=strawberry.ID(payload["automation_id"]),
                run=AutomationRun.of(run_of_json(run)) if run is not None else None,
                next_fire=datetime.fromisoformat(next_fire) if next_fire else None,
                thread_message=AutomationThreadMessage.of(entry_of_json(entry)) if entry is not None else None,
                ack=AutomationAck.of_json(payload.get("ack")),
            )

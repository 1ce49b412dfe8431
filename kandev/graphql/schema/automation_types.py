"""Automations, their triggers, repositories and runs as object types (copied from domain records once)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import cast

import strawberry
from strawberry.scalars import JSON

from kandev.domain.automations.agenda import next_fire, trigger_next_fire
from kandev.domain.automations.authoring import AuthoringDraft as DraftRecord
from kandev.domain.automations.indicator import NextRun, NextRunState
from kandev.domain.automations.preflight import Ack
from kandev.domain.automations.records import AutomationRecord, RepositoryRecord, RunRecord, TriggerRecord
from kandev.domain.automations.thread import ThreadEntry, ThreadPage
from kandev.graphql.schema.context import Info
from kandev.graphql.schema.enums import (
    AckStatus,
    AuthoringDraftState,
    AutomationContext,
    AutomationCreatedVia,
    AutomationDestination,
    AutomationRunStatus,
    AutomationRunTriggerType,
    AutomationThreadKind,
    AutomationTriggerType,
    PendingAction,
)
from kandev.graphql.schema.fields import described
from kandev.graphql.schema.selection import selects
from kandev.graphql.schema.types import PageInfo
from kandev.graphql.schema.usage_types import Budget
from kandev.models.enums import RunStatus, RunTriggerType


def _id(value: str | None) -> strawberry.ID | None:
    return None if value is None else strawberry.ID(value)


@strawberry.type(description="What fires an automation; each trigger is enabled on its own.")
class AutomationTrigger:
    record: strawberry.Private[TriggerRecord]
    automation_enabled: strawberry.Private[bool]

    id: strawberry.ID
    automation_id: strawberry.ID
    type: AutomationTriggerType
    enabled: bool
    expression: str | None = strawberry.field(description="SCHEDULED: the cron or @-expression; null otherwise.")
    timezone: str | None = strawberry.field(description="SCHEDULED: the IANA zone (empty: UTC); null otherwise.")
    filters: JSON | None = strawberry.field(description="A GitHub condition's filters; null otherwise.")
    require_signature: bool | None = strawberry.field(
        description="WEBHOOK: only deliveries signed with the secret are taken (X-Kandev-Timestamp and "
        "X-Kandev-Signature: sha256=<hex HMAC-SHA256 of '<timestamp>.<raw body>'), within 5 minutes, each "
        "signature once; null for other trigger types."
    )
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, record: TriggerRecord, automation_enabled: bool = True) -> AutomationTrigger:
        scheduled = record.type == AutomationTriggerType.SCHEDULED
        github = not scheduled and record.type != AutomationTriggerType.WEBHOOK
        return cls(
            record=record,
            automation_enabled=automation_enabled,
            id=strawberry.ID(record.id),
            automation_id=strawberry.ID(record.automation_id),
            type=AutomationTriggerType(record.type),
            enabled=record.enabled,
            expression=record.config.get("expression", "") if scheduled else None,
            timezone=record.config.get("timezone", "") if scheduled else None,
            filters=cast(JSON, dict(record.config)) if github else None,
            require_signature=bool(record.config.get("require_signature"))
            if record.type == AutomationTriggerType.WEBHOOK
            else None,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )

    @described(
        "SCHEDULED: when it fires next (@every counts from the trigger's last save); null when it or its "
        "automation is disabled, and for other trigger types."
    )
    def next_fire(self, info: Info) -> datetime | None:
        now = info.context.services.automations.now()
        return trigger_next_fire(self.record, now, automation_enabled=self.automation_enabled)


@strawberry.type(description="One repository and base branch an automation's runs work in, in order.")
class AutomationRepository:
    repository_id: strawberry.ID
    base_branch: str
    position: int

    @classmethod
    def of(cls, record: RepositoryRecord) -> AutomationRepository:
        return cls(
            repository_id=strawberry.ID(record.repository_id), base_branch=record.base_branch, position=record.position
        )


@strawberry.type(description="One firing of an automation.")
class AutomationRun:
    id: strawberry.ID
    automation_id: strawberry.ID
    trigger_id: strawberry.ID | None = strawberry.field(description="Null for a manual run or a deleted trigger.")
    trigger_type: AutomationRunTriggerType
    status: AutomationRunStatus
    reason: str | None = strawberry.field(description="Why the run was skipped or failed.")
    task_id: strawberry.ID | None
    session_id: strawberry.ID | None
    turn_id: strawberry.ID | None
    title_snapshot: str = strawberry.field(description="The run's title as rendered when it fired.")
    created_at: datetime
    finished_at: datetime | None
    stopped_at: datetime | None
    occurred_at: datetime | None = strawberry.field(description="The moment the trigger names (a schedule's due time).")
    continuation_note: str | None = strawberry.field(
        description="Why a continue-session run started a new task instead of continuing the previous one."
    )
    pending_action: PendingAction = strawberry.field(
        description="What the run's task waits on (as Task.pendingAction), for the task's newest run only: it "
        "owns the task's current conversation, so older runs of a continue-session automation read NONE, as "
        "do runs without a task. automationEvents sends RUN_UPDATED whenever it changes."
    )

    @classmethod
    def of(cls, record: RunRecord) -> AutomationRun:
        return cls(
            id=strawberry.ID(record.id),
            automation_id=strawberry.ID(record.automation_id),
            trigger_id=_id(record.trigger_id),
            trigger_type=AutomationRunTriggerType(record.trigger_type),
            status=AutomationRunStatus(record.status),
            reason=record.reason,
            task_id=_id(record.task_id),
            session_id=_id(record.session_id),
            turn_id=_id(record.turn_id),
            title_snapshot=record.title_snapshot,
            created_at=record.created_at,
            finished_at=record.finished_at,
            stopped_at=record.stopped_at,
            occurred_at=record.occurred_at,
            continuation_note=record.continuation_note,
            pending_action=PendingAction(record.pending_action),
        )


@strawberry.type
class AutomationRunEdge:
    cursor: str
    node: AutomationRun


@strawberry.type(description="A page of an automation's runs, newest first.")
class AutomationRunConnection:
    edges: list[AutomationRunEdge]
    page_info: PageInfo
    # Counted only when the query selects totalCount.
    count: strawberry.Private[int | None]

    @strawberry.field
    def total_count(self) -> int:
        assert self.count is not None, "the runs resolver counts whenever totalCount is selected"
        return self.count

    @strawberry.field
    def nodes(self) -> list[AutomationRun]:
        return [edge.node for edge in self.edges]


@strawberry.type(description="One entry of an automation's thread.")
class AutomationThreadMessage:
    id: strawberry.ID
    automation_id: strawberry.ID
    kind: AutomationThreadKind
    text: str = strawberry.field(
        description="The entry in words. A run's entries name its trigger type and prompt template, never the "
        "trigger's data; credentials appear by name and outcome, never by value."
    )
    run_id: strawberry.ID | None = strawberry.field(description="The run a RUN_* entry is about.")
    task_id: strawberry.ID | None = strawberry.field(
        description="The run's task, whose conversation holds the run's full transcript."
    )
    created_at: datetime

    @classmethod
    def of(cls, entry: ThreadEntry) -> AutomationThreadMessage:
        return cls(
            id=strawberry.ID(entry.id),
            automation_id=strawberry.ID(entry.automation_id),
            kind=AutomationThreadKind(entry.kind),
            text=entry.text,
            run_id=_id(entry.run_id),
            task_id=_id(entry.task_id),
            created_at=entry.created_at,
        )


@strawberry.type
class AutomationThreadEdge:
    cursor: str
    node: AutomationThreadMessage


@strawberry.type(description="A page of an automation's thread, oldest first.")
class AutomationThreadConnection:
    edges: list[AutomationThreadEdge]
    page_info: PageInfo

    @strawberry.field
    def nodes(self) -> list[AutomationThreadMessage]:
        return [edge.node for edge in self.edges]


async def indicator_of(info: Info, automation: AutomationRecord) -> NextRunIndicator:
    running_since = await info.context.loaders.running_since.load(automation.id)
    return NextRunIndicator.of(info.context.services.automations.indicator(automation, running_since))


def thread_connection(page: ThreadPage) -> AutomationThreadConnection:
    edges = [
        AutomationThreadEdge(cursor=c, node=AutomationThreadMessage.of(e))
        for e, c in zip(page.entries, page.cursors, strict=True)
    ]
    end = page.cursors[-1] if page.cursors else None
    return AutomationThreadConnection(edges=edges, page_info=PageInfo(has_next_page=page.has_next_page, end_cursor=end))


@strawberry.type(description="The live indicator at the end of an automation's thread: what it does next.")
class NextRunIndicator:
    state: NextRunState
    label: str = strawberry.field(description="The indicator in words, e.g. 'Next run at … UTC (in 4 minutes)'.")
    at: datetime | None = strawberry.field(description="SCHEDULED: the next fire.")
    relative: str | None = strawberry.field(description="SCHEDULED: a relative hint, e.g. 'in 4 hours'.")
    webhook_method: str | None = strawberry.field(description="WEBHOOK: the method its webhook takes (POST).")
    webhook_path: str | None = strawberry.field(description="WEBHOOK: the path its webhook is called on.")
    running_since: datetime | None = strawberry.field(description="RUNNING: when its oldest active run fired.")
    elapsed_seconds: int | None = strawberry.field(description="RUNNING: how long, as of this answer.")
    slow_after_seconds: int = strawberry.field(
        description="After how long a run is taking longer than usual (KANDEV_AUTOMATION_SLOW_RUN_MINUTES), so a "
        "client can flip the flag itself as time passes."
    )
    slow: bool = strawberry.field(description="RUNNING: the run is taking longer than usual (it is not stopped).")

    @classmethod
    def of(cls, value: NextRun) -> NextRunIndicator:
        return cls(**{f.name: getattr(value, f.name) for f in dataclasses.fields(value)})


@strawberry.type(description="The agent profile a run is routed to.")
class AckProfile:
    id: strawberry.ID
    name: str


@strawberry.type(description="A credential a run needs, by name: whether it is there and what checking it found.")
class AckCredential:
    name: str = strawberry.field(description="'GitHub connection' or 'secret NAME'.")
    present: bool
    outcome: str = strawberry.field(
        description="authenticated, present, missing, rejected or not verified. Never the value."
    )


@strawberry.type(
    description="A pre-flight acknowledgement: what the automation's next run gets, checked without running anything."
)
class AutomationAck:
    status: AckStatus
    routed_profile: AckProfile | None = strawberry.field(
        description="The profile runs launch with: the automation's own, or the workspace default when it names "
        "none; null when neither is usable."
    )
    follows_default: bool = strawberry.field(
        description="The automation names no agent profile: runs use the workspace default (routedProfile)."
    )
    tools: list[str] = strawberry.field(description="The MCP tool names the run's session gets.")
    credentials: list[AckCredential]
    next_run: str | None = strawberry.field(
        description="An ISO time, the webhook URL path, 'on GitHub events', 'manual only' or 'disabled'; "
        "null while PENDING."
    )
    summary: str = strawberry.field(description="What the automation does, in plain English.")
    detail: str | None = strawberry.field(description="Why FAILED or WARN (or what PENDING waits on).")
    acked_at: datetime | None = strawberry.field(description="When the check ran; null while PENDING.")

    @classmethod
    def of(cls, ack: Ack) -> AutomationAck:
        profile = None
        if ack.routed_profile_id is not None:
            profile = AckProfile(id=strawberry.ID(ack.routed_profile_id), name=ack.routed_profile_name or "")
        return cls(
            status=AckStatus(ack.status.value),
            routed_profile=profile,
            follows_default=ack.follows_default,
            tools=list(ack.tools),
            credentials=[AckCredential(name=c.name, present=c.present, outcome=c.outcome) for c in ack.credentials],
            next_run=ack.next_run,
            summary=ack.summary,
            detail=ack.detail,
            acked_at=ack.acked_at,
        )

    @classmethod
    def of_json(cls, values: dict[str, object] | None) -> AutomationAck | None:
        ack = Ack.from_json(values)
        return None if ack is None else cls.of(ack)


@strawberry.type(description="Work a schedule, a webhook or a GitHub event creates in a workspace.")
class Automation:
    record: strawberry.Private[AutomationRecord]

    id: strawberry.ID
    workspace_id: strawberry.ID
    name: str
    description: str
    agent_profile_id: strawberry.ID | None = strawberry.field(description="Null: none chosen yet (needed to launch).")
    executor_profile_id: strawberry.ID | None = strawberry.field(description="Null: none chosen yet.")
    destination: AutomationDestination
    workflow_id: strawberry.ID | None = strawberry.field(description="Required for the NORMAL destination.")
    workflow_step_id: strawberry.ID | None = strawberry.field(description="Null: the workflow's start step.")
    prompt: str
    title_template: str = strawberry.field(description="Each run's title, with placeholders; empty: the default.")
    context: AutomationContext
    max_concurrent_runs: int
    enabled: bool
    created_via: AutomationCreatedVia
    created_by: str
    created_at: datetime
    updated_at: datetime
    has_webhook_secret: bool = strawberry.field(
        description="The webhook trigger's secret is set; revealWebhookSecret shows it, rotateWebhookSecret "
        "replaces it."
    )
    triggers: list[AutomationTrigger]
    repositories: list[AutomationRepository] = strawberry.field(
        description="Repository and base-branch pairs in order; empty: each run works in a scratch directory."
    )
    last_ack: AutomationAck | None = strawberry.field(
        description="The last pre-flight acknowledgement (PENDING right after a save); null: never checked. "
        "automationEvents sends ACK_CHANGED whenever it is stored."
    )

    @described("The monthly budget and this month's spend; null without one.")
    async def budget(self, info: Info) -> Budget | None:
        return Budget.of(await info.context.services.usage.automation_budget(self.record.id))

    @classmethod
    def of(cls, record: AutomationRecord) -> Automation:
        return cls(
            record=record,
            id=strawberry.ID(record.id),
            workspace_id=strawberry.ID(record.workspace_id),
            name=record.name,
            description=record.description,
            agent_profile_id=_id(record.agent_profile_id),
            executor_profile_id=_id(record.executor_profile_id),
            destination=AutomationDestination(record.destination),
            workflow_id=_id(record.workflow_id),
            workflow_step_id=_id(record.workflow_step_id),
            prompt=record.prompt,
            title_template=record.title_template,
            context=AutomationContext(record.context),
            max_concurrent_runs=record.max_concurrent_runs,
            enabled=record.enabled,
            created_via=AutomationCreatedVia(record.created_via),
            created_by=record.created_by,
            created_at=record.created_at,
            updated_at=record.updated_at,
            has_webhook_secret=record.has_webhook_secret,
            triggers=[AutomationTrigger.of(t, record.enabled) for t in record.triggers],
            repositories=[AutomationRepository.of(r) for r in record.repositories],
            last_ack=AutomationAck.of_json(record.last_ack),
        )

    @described(
        "When the automation fires next; null when it is disabled or has no enabled schedule (a webhook or "
        "GitHub condition fires when something arrives)."
    )
    def next_fire(self, info: Info) -> datetime | None:
        found = next_fire(self.record, info.context.services.automations.now())
        return None if found is None else found[0]

    @described(
        "What it does next, for the indicator at its thread's end: the next fire with a relative hint, the "
        "webhook it waits on, Disabled, or Running with the elapsed time. automationEvents sends NEXT_FIRE_CHANGED "
        "and run events when it changes."
    )
    async def next_run(self, info: Info) -> NextRunIndicator:
        return await indicator_of(info, self.record)

    @described(
        "Its thread, oldest first: the creation intent, acknowledgements, next-run plans, each run's request and "
        "response or error (linking to the run's task conversation), updates, disabling and deletion."
    )
    async def thread(self, info: Info, first: int = 50, after: str | None = None) -> AutomationThreadConnection:
        return thread_connection(
            await info.context.services.automations.thread(self.record.id, first=first, after=after)
        )

    @described("The automation's runs, newest first.")
    async def runs(
        self,
        info: Info,
        first: int = 50,
        after: str | None = None,
        status: AutomationRunStatus | None = None,
        trigger_type: AutomationRunTriggerType | None = None,
    ) -> AutomationRunConnection:
        return await runs_of(info, self.record.id, first, after, status, trigger_type)


async def runs_of(
    info: Info,
    automation_id: str,
    first: int,
    after: str | None,
    status: AutomationRunStatus | None,
    trigger_type: AutomationRunTriggerType | None,
) -> AutomationRunConnection:
    """A page of an automation's runs, for `Automation.runs` and the `automationRuns` query alike."""
    page = await info.context.services.automations.list_runs(
        automation_id,
        first=first,
        after=after,
        status=RunStatus(status.value) if status else None,
        trigger_type=RunTriggerType(trigger_type.value) if trigger_type else None,
        count=selects(info, "totalCount"),
    )
    return run_connection(page.records, page.cursors, page.has_next_page, page.total_count)


def run_connection(
    runs: list[RunRecord], cursors: list[str], has_next_page: bool, total: int | None
) -> AutomationRunConnection:
    edges = [AutomationRunEdge(cursor=c, node=AutomationRun.of(r)) for r, c in zip(runs, cursors, strict=True)]
    page_info = PageInfo(has_next_page=has_next_page, end_cursor=cursors[-1] if cursors else None)
    return AutomationRunConnection(edges=edges, page_info=page_info, count=total)


@strawberry.type(description="A trigger as an authoring chat captured it, shaped as AutomationTriggerInput.")
class AuthoringDraftTrigger:
    type: AutomationTriggerType
    expression: str | None = strawberry.field(description="SCHEDULED: the schedule expression.")
    timezone: str | None = strawberry.field(description="SCHEDULED: an IANA zone; empty: UTC.")
    filters: JSON | None = strawberry.field(description="A GitHub condition's filters.")


@strawberry.type(
    description="What a 'describe an automation' chat has captured so far, to pre-fill the automation form "
    "(the agent and repositories are chosen in the form)."
)
class AuthoringDraft:
    task_id: strawberry.ID = strawberry.field(description="The chat's task.")
    state: AuthoringDraftState
    operator_messages: int = strawberry.field(description="Messages the operator has sent in the chat.")
    name: str | None
    prompt: str | None
    triggers: list[AuthoringDraftTrigger]
    automation_id: strawberry.ID | None = strawberry.field(
        description="The automation the chat created (its page is the confirmation's link); null until then."
    )

    @classmethod
    def of(cls, record: DraftRecord) -> AuthoringDraft:
        draft = record.draft
        captured = draft.definition()["triggers"] if draft.trigger is not None else []
        triggers = [
            AuthoringDraftTrigger(
                type=AutomationTriggerType(t["type"]),
                expression=t.get("expression"),
                timezone=t.get("timezone"),
                filters=t.get("filters"),
            )
            for t in captured
        ]
        return cls(
            task_id=strawberry.ID(record.task_id),
            state=AuthoringDraftState(record.state.value),
            operator_messages=record.operator_messages,
            name=draft.definition()["name"] or None,
            prompt=draft.prompt,
            triggers=triggers,
            automation_id=strawberry.ID(record.automation_id) if record.automation_id else None,
        )

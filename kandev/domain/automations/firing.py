"""Firing an automation: the one entry point of every trigger (schedule, webhook, GitHub, Run now).

`fire` admits a firing in one transaction and, once committed, enqueues the job on the automations queue
that creates the run's task and starts its agent (kandev.domain.automations.launch). Callers in rq jobs use
a system principal (kandev.wiring.SYSTEM through provide_services); Run now uses the operator's, so access to
the automation is checked like any read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import func, null, select
from sqlalchemy.exc import IntegrityError

from kandev.domain.automations.references import load_automation_and_trigger
from kandev.domain.automations.run_events import emit_run_event
from kandev.domain.automations.runs import active_sql
from kandev.domain.automations.templates import TemplateContext, render
from kandev.domain.context import ServiceContext
from kandev.domain.usage.budgets import automation_refusal
from kandev.models import Automation, AutomationRun, AutomationTrigger
from kandev.models.base import new_id, utcnow
from kandev.models.enums import RunStatus, RunTriggerType, TriggerType

TITLE_LIMIT = 200


class Admission(StrEnum):
    FIRED = "fired"  # a triggered run was written and its launch job enqueued
    SKIPPED = "skipped"  # the concurrency cap was reached: a skipped run was written, with the reason
    DEDUPLICATED = "deduplicated"  # the dedup key already fired: nothing was written
    REFUSED = "refused"  # the automation or the trigger is disabled (or the trigger is gone): nothing written


# What a dedup key names, by its prefix (scheduling, webhooks, GitHub firings): why a repeat does not run.
_ALREADY = {
    "scheduled": "already fired for this minute",
    "webhook": "already fired for this delivery",
    "github_pr": "already fired for this pull request event",
    "github_pr_merged": "already fired for this merged pull request",
    "github_push": "already fired for this push",
    "github_ci": "already fired for this check run",
}


def deduplicated_reason(dedup_key: str) -> str:
    """Why a firing whose key already fired does not run, in words."""
    return _ALREADY.get(dedup_key.partition(":")[0], "already fired for this key")


def cap_reason(active: int, allowed: int) -> str:
    return f"{active} run(s) still active; the automation allows {allowed} at once"


def new_run(
    automation: Automation,
    trigger_id: str | None,
    trigger_type: RunTriggerType,
    occurred: datetime,
    payload: object,
    dedup_key: str | None,
    active: int,
    now: datetime,
) -> AutomationRun:
    """The run a firing admits: triggered (holding its dedup key) while fewer than the cap are active, else
    skipped with the reason (the key not consumed, so a later attempt may still fire)."""
    title = render(automation.title_template or automation.name, context_of(trigger_type, occurred, payload))
    run = AutomationRun(
        id=new_id(),
        automation_id=automation.id,
        trigger_id=trigger_id,
        trigger_type=trigger_type,
        status=RunStatus.TRIGGERED,
        trigger_data=payload,
        occurred_at=occurred,
        title_snapshot=(title.strip() or automation.name)[:TITLE_LIMIT],
        created_at=now,
    )
    if active >= automation.max_concurrent_runs:
        run.status, run.finished_at = RunStatus.SKIPPED, now
        run.reason = cap_reason(active, automation.max_concurrent_runs)
    else:
        run.dedup_key = dedup_key
    return run


@dataclass(frozen=True)
class FireOutcome:
    admission: Admission
    run_id: str | None = None  # the run written (FIRED, SKIPPED) or the one holding the key (DEDUPLICATED)
    reason: str | None = None  # in words, for SKIPPED, DEDUPLICATED and REFUSED

    @property
    def fired(self) -> bool:
        return self.admission == Admission.FIRED


async def fire(
    ctx: ServiceContext,
    automation_id: str,
    *,
    trigger_id: str | None,
    trigger_type: RunTriggerType | str,
    occurrence: datetime | None = None,
    data: object = None,
    dedup_key: str | None = None,
) -> FireOutcome:
    """Admit one firing of the automation, in one transaction.

    - `trigger_id`: the trigger row that fired (None for Run now); a disabled or missing trigger refuses.
    - `trigger_type`: a RunTriggerType value (`scheduled`, `webhook`, `github_pr`, …, `manual`).
    - `occurrence`: the moment `{{trigger.timestamp}}` names (a schedule's due minute); default now.
    - `data`: the trigger data (`{{data.*}}`; the webhook payload, any JSON value; `{"pr": {...}}` for PR
      runs); None: {}. Stored on the run; never chooses credentials, repositories or commands.
    - `dedup_key`: unique per automation (None: never deduplicated). A key that already fired answers
      DEDUPLICATED with the reason ("already fired for this minute / delivery / pull request event …") and
      writes nothing, even under concurrent callers on SQLite and PostgreSQL. A cap skip
      does not consume the key, so a later attempt of the same key may still fire.

    A deleted, unknown or (for the principal) invisible automation raises NotFoundError. Everything else is
    an outcome: REFUSED (disabled automation or trigger; no row), DEDUPLICATED (no row), SKIPPED (the
    concurrency cap is reached: a `skipped` run with the reason), FIRED (a `triggered` run; its launch job is
    enqueued after commit, and an automationEvents RUN_CREATED is published).
    """
    trigger_type = RunTriggerType(trigger_type)
    payload = {} if data is None else dict(data) if isinstance(data, Mapping) else data
    try:
        async with ctx.unit_of_work() as uow:
            db = uow.db
            automation, trigger = await load_automation_and_trigger(db, ctx.principal, automation_id, trigger_id)
            if not ctx.db.is_sqlite:
                # Held to the commit, so two concurrent firings count each other (SQLite's writers are
                # serialized already, and would only spend a statement on it).
                await db.execute(select(Automation.id).where(Automation.id == automation.id).with_for_update())
            refusal = _refusal(automation, trigger_id, trigger)
            if refusal is not None:
                return FireOutcome(Admission.REFUSED, reason=refusal)
            # The key's holder and the active runs, in one statement (a fire's statements are its latency).
            holder_id = (
                select(AutomationRun.id)
                .where(AutomationRun.automation_id == automation.id, AutomationRun.dedup_key == dedup_key)
                .scalar_subquery()
                if dedup_key is not None
                else null()
            )
            active_count = (
                select(func.count())
                .select_from(AutomationRun)
                .where(AutomationRun.automation_id == automation.id, active_sql())
                .scalar_subquery()
            )
            holder, active = (await db.execute(select(holder_id, active_count))).one()
            if holder is not None:
                assert dedup_key is not None
                return FireOutcome(Admission.DEDUPLICATED, run_id=holder, reason=deduplicated_reason(dedup_key))
            now = utcnow()
            run = new_run(automation, trigger_id, trigger_type, occurrence or now, payload, dedup_key, active or 0, now)
            if run.status != RunStatus.SKIPPED and (spent := await automation_refusal(db, automation.id, now)):
                run.status, run.finished_at, run.reason, run.dedup_key = RunStatus.SKIPPED, now, spent, None
            db.add(run)
            await db.flush()
            await emit_run_event(uow, "RUN_CREATED", run, automation.workspace_id)
            if run.status == RunStatus.SKIPPED:
                return FireOutcome(Admission.SKIPPED, run_id=run.id, reason=run.reason)
            run_id = run.id
            uow.then(lambda: ctx.jobs.enqueue_automation_run(run_id))
            return FireOutcome(Admission.FIRED, run_id=run_id)
    except IntegrityError:
        # A concurrent firing committed the same key first; the insert was the transaction's only write.
        if dedup_key is None:
            raise
        async with ctx.read() as db:
            holder = await db.scalar(
                select(AutomationRun.id).where(
                    AutomationRun.automation_id == automation_id, AutomationRun.dedup_key == dedup_key
                )
            )
        return FireOutcome(Admission.DEDUPLICATED, run_id=holder, reason=deduplicated_reason(dedup_key))


def _refusal(automation: Automation, trigger_id: str | None, trigger: AutomationTrigger | None) -> str | None:
    """Why nothing may fire now, or None: a disabled automation, a disabled or foreign trigger."""
    if not automation.enabled:
        return "the automation is disabled"
    if trigger_id is None:
        return None
    if trigger is None:
        return "the trigger no longer exists"
    if not trigger.enabled:
        return "the trigger is disabled"
    return None


def context_of(trigger_type: str, occurred: datetime, data: object) -> TemplateContext:
    """What a run's templates may read: the trigger data, plus the PR fields or the webhook payload."""
    fields = data if isinstance(data, Mapping) else {}
    pr = fields.get("pr") if trigger_type in (TriggerType.GITHUB_PR, TriggerType.GITHUB_PR_MERGED) else None
    webhook: object | None = None
    body: str | None = None
    if trigger_type == TriggerType.WEBHOOK:
        webhook = data
        raw = fields.get("body") if set(fields) == {"body"} else None
        body = raw if isinstance(raw, str) else _json(data)
    return TemplateContext(
        trigger_type=str(trigger_type),
        trigger_timestamp=occurred,
        data=data,
        pr=pr if isinstance(pr, Mapping) else None,
        webhook_body=body,
        webhook=webhook,
    )


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

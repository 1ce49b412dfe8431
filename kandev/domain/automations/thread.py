"""An automation's thread: one conversation per automation, the history of what it did and will do next.

Its own system messages (creation intent, acknowledgements, next-run markers, updates, disable, delete)
interleave with each run's request and outcome, which link to that run and its task's own conversation. An
entry is written in the transaction of what it records, so a run and its entry commit together (nothing lost
on a crash) and a per-entry key keeps a retried step from writing it twice. An entry that can't be written
is logged and left out (its own savepoint rolls back): the thread never fails the run, launch, settle or save
it records. A run's entries name the trigger type and the prompt template, never the trigger's data: a
webhook payload can carry anything.

A new automation's thread reads its creation intent, then its first acknowledgement, then the plan (the
next-run marker is written when an ack is stored and the plan differs from the thread's last one).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, desc, or_, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.automations.agenda import schedule_of
from kandev.domain.automations.export import Names, names_for
from kandev.domain.automations.indicator import NextRunState, next_run
from kandev.domain.automations.records import AutomationRecord, TriggerRecord, webhook_path
from kandev.domain.context import UnitOfWork
from kandev.domain.pagination import decode_cursor, encode_cursor
from kandev.models import AutomationRun, AutomationThreadMessage, Message
from kandev.models.base import new_id, utcnow
from kandev.models.enums import RunStatus, ThreadKind, TriggerType
from kandev.platform.database import dialect_insert
from kandev.platform.event_bus import AutomationEventPayload, automation_channel

log = logging.getLogger("kandev.automations.thread")

# A run's response is the agent's last message of the run's turn, kept whole up to this many characters.
RESPONSE_LIMIT = 4_000
_PROMPT_LIMIT = 2_000
_CREATION = "creation"

_TRIGGERS = {
    TriggerType.SCHEDULED: "schedule",
    TriggerType.WEBHOOK: "webhook",
    TriggerType.GITHUB_PR: "GitHub pull request",
    TriggerType.GITHUB_PR_MERGED: "GitHub pull request merge",
    TriggerType.GITHUB_PUSH: "GitHub push",
    TriggerType.GITHUB_CI: "GitHub check run",
    "manual": "Run now",
}


@dataclass(frozen=True)
class ThreadEntry:
    id: str
    automation_id: str
    kind: str
    text: str
    run_id: str | None
    task_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class ThreadPage:
    entries: list[ThreadEntry]
    cursors: list[str]
    has_next_page: bool


async def post(
    uow: UnitOfWork,
    workspace_id: str,
    automation_id: str,
    kind: ThreadKind,
    text: str,
    *,
    run_id: str | None = None,
    task_id: str | None = None,
    key: str | None = None,
    at: datetime | None = None,
) -> None:
    """Add an entry, published on automationEvents (THREAD_MESSAGE) after commit; one with a `key` the thread
    already holds is left out (no error, nothing written or sent), and so is one the database refuses (logged)."""
    entry = ThreadEntry(new_id(), automation_id, kind.value, text, run_id, task_id, at or utcnow())
    db = uow.db
    statement = dialect_insert(db, AutomationThreadMessage).values(
        id=entry.id,
        automation_id=automation_id,
        kind=entry.kind,
        text=text,
        run_id=run_id,
        task_id=task_id,
        dedup_key=key,
        created_at=entry.created_at,
    )
    if key is not None:
        statement = statement.on_conflict_do_nothing(index_elements=["automation_id", "dedup_key"])
    try:
        async with _contained(db):
            written = await db.scalar(statement.returning(AutomationThreadMessage.id))
    except SQLAlchemyError:
        log.warning(
            "the %s entry of automation %s could not be written to its thread; what it records stands",
            kind.value,
            automation_id,
            exc_info=True,
        )
        return
    if written is None:
        return
    payload = AutomationEventPayload(kind="THREAD_MESSAGE", automation_id=automation_id, run=None)
    payload["thread_message"] = entry_json(entry)
    uow.emit(automation_channel(workspace_id), payload)


@asynccontextmanager
async def _contained(db: AsyncSession) -> AsyncIterator[None]:
    """A thread write whose failure leaves the transaction usable: PostgreSQL aborts a transaction on a failed
    statement, so there it gets a savepoint; SQLite undoes only the failed statement, so the two round trips
    of a savepoint are spared."""
    if db.get_bind().dialect.name == "sqlite":
        yield
        return
    async with db.begin_nested():
        yield


def entry_json(entry: ThreadEntry) -> dict[str, Any]:
    values = dataclasses.asdict(entry)
    values["created_at"] = entry.created_at.isoformat()
    return values


def entry_of_json(values: dict[str, Any]) -> ThreadEntry:
    return ThreadEntry(**{**values, "created_at": datetime.fromisoformat(values["created_at"])})


# -- what the automation is -------------------------------------------------------------------------------


def facts(automation: AutomationRecord, names: Names) -> dict[str, str]:
    """The automation's settings in words, by label (the creation intent lists them, an update diffs them)."""
    repositories = [
        f"{names.repositories.get(pair.repository_id, ('a deleted repository', None))[0]} ({pair.base_branch})"
        for pair in sorted(automation.repositories, key=lambda p: p.position)
    ]
    destination = (
        "hidden run tasks (kept out of the board)"
        if automation.destination == "hidden"
        else f"the board, workflow {names.workflows.get(automation.workflow_id or '', 'unknown')}"
    )
    return {
        "Name": automation.name,
        "Fires": "; ".join(describe_trigger(t, automation.id) for t in automation.triggers) or "only on Run now",
        "Agent profile": names.agent_profiles.get(automation.agent_profile_id or "", "none chosen"),
        "Executor profile": names.executor_profiles.get(automation.executor_profile_id or "", "none chosen"),
        "Works in": ", ".join(repositories) or "a scratch directory",
        "Destination": destination,
        "Between runs": "continues one session" if automation.context == "continue_session" else "a new task per run",
        "At most": f"{automation.max_concurrent_runs} run(s) at once",
        "Enabled": "yes" if automation.enabled else "no",
        "Prompt template": _clip(automation.prompt, _PROMPT_LIMIT),
    }


def describe_trigger(trigger: TriggerRecord, automation_id: str) -> str:
    off = "" if trigger.enabled else " (disabled)"
    if trigger.type == TriggerType.SCHEDULED:
        schedule = schedule_of(trigger.config, trigger.updated_at)
        expression = trigger.config.get("expression", "")
        described = schedule.describe() if schedule is not None else "an expression no longer valid"
        return f"{described} [{expression}]{off}"
    if trigger.type == TriggerType.WEBHOOK:
        return f"POST {webhook_path(automation_id)}{off}"
    return f"each {_TRIGGERS.get(trigger.type, trigger.type)} that matches its filters{off}"


def creation_text(automation: AutomationRecord, names: Names, via: str, actor: str) -> str:
    how = "in a chat" if via == "chat" else "with the form"
    lines = [f"Created {how} by {actor}."]
    lines += [f"{label}: {value}" for label, value in facts(automation, names).items()]
    return "\n".join(lines)


def changes_text(before: Mapping[str, str], after: Mapping[str, str], heading: str) -> str | None:
    """What an update changed, in words; None when it changed nothing the thread shows."""
    changed = []
    for label, value in after.items():
        old = before.get(label)
        if old == value:
            continue
        if label == "Prompt template":
            changed.append(f"Prompt template changed to: {value}")
        else:
            changed.append(f"{label}: {old} → {value}")
    if not changed:
        return None
    return "\n".join([heading, *changed])


def next_run_text(automation: AutomationRecord, now: datetime) -> str:
    """The plan as of now (the indicator's reading of it, running aside), as a sentence of the thread."""
    plan = next_run(automation, None, now, slow_after=0)
    if plan.state == NextRunState.SCHEDULED:
        assert plan.at is not None
        return f"Next run at {plan.at.strftime('%Y-%m-%d %H:%M')} UTC."
    if plan.state == NextRunState.WEBHOOK:
        return f"Next run when a webhook arrives: {plan.webhook_method} {plan.webhook_path}."
    return _PLANS[plan.state]


_PLANS = {
    NextRunState.DELETED: "Deleted: it fires no more.",
    NextRunState.DISABLED: "Disabled: nothing fires until it is enabled.",
    NextRunState.EVENT: "Next run when a matching GitHub event arrives.",
    NextRunState.MANUAL: "No trigger is enabled: it runs only on Run now.",
}


async def note_created(uow: UnitOfWork, automation: AutomationRecord, actor: str) -> None:
    """The creation intent; its acknowledgement and then its plan follow when the check is stored."""
    await _creation_intent(uow, automation, actor)


async def note_plan(uow: UnitOfWork, automation: AutomationRecord, now: datetime) -> None:
    """The next-run marker, when the plan differs from the thread's last one (or there is none yet)."""
    plan = next_run_text(automation, now)
    last = await uow.db.scalar(
        select(AutomationThreadMessage.text)
        .where(
            AutomationThreadMessage.automation_id == automation.id,
            AutomationThreadMessage.kind == ThreadKind.NEXT_RUN_MARKER,
        )
        .order_by(AutomationThreadMessage.created_at.desc(), AutomationThreadMessage.id.desc())
        .limit(1)
    )
    if last != plan:
        await post(uow, automation.workspace_id, automation.id, ThreadKind.NEXT_RUN_MARKER, plan)


async def note_updated(
    uow: UnitOfWork,
    before: AutomationRecord,
    after: AutomationRecord,
    actor: str,
    now: datetime,
    *,
    in_chat: bool = False,
) -> None:
    """What a save changed (a disable is its own kind of entry; a change made in an authoring chat is a
    re-authoring), and the plan when it moved."""
    if before.enabled and not after.enabled:
        await post(uow, after.workspace_id, after.id, ThreadKind.DISABLED, f"Disabled by {actor}.")
    else:
        names = await names_for(uow.db, [before, after])
        heading = f"Re-authored in chat by {actor}." if in_chat else f"Updated by {actor}."
        text = changes_text(facts(before, names), facts(after, names), heading)
        if text is not None:
            kind = ThreadKind.REAUTHORED if in_chat else ThreadKind.UPDATED
            await post(uow, after.workspace_id, after.id, kind, text)
    plan = next_run_text(after, now)
    if plan != next_run_text(before, now):
        await post(uow, after.workspace_id, after.id, ThreadKind.NEXT_RUN_MARKER, plan)


async def note_deleted(uow: UnitOfWork, workspace_id: str, automation_id: str, actor: str) -> None:
    text = f"Deleted by {actor}. It fires no more; this thread stays as the record of what it did."
    await post(uow, workspace_id, automation_id, ThreadKind.DELETED, text, key="deleted")


async def has_creation_intent(db: AsyncSession, automation_id: str) -> bool:
    found = await db.scalar(
        select(AutomationThreadMessage.id).where(
            AutomationThreadMessage.automation_id == automation_id, AutomationThreadMessage.dedup_key == _CREATION
        )
    )
    return found is not None


async def backfill_creation_intent(uow: UnitOfWork, automation: AutomationRecord) -> None:
    """An automation saved before threads existed gets its creation intent once (first in its thread), from
    its settings as they are now; concurrent readers write it once between them."""
    footnote = "\n(Recorded when this thread began: the settings above are those of that moment.)"
    await _creation_intent(uow, automation, automation.created_by, footnote)


async def _creation_intent(uow: UnitOfWork, automation: AutomationRecord, actor: str, footnote: str = "") -> None:
    names = await names_for(uow.db, [automation])
    text = creation_text(automation, names, automation.created_via, actor) + footnote
    at = automation.created_at
    await post(uow, automation.workspace_id, automation.id, ThreadKind.CREATION_INTENT, text, key=_CREATION, at=at)


# -- what its runs did --------------------------------------------------------------------------------------


async def note_run(uow: UnitOfWork, workspace_id: str, run: AutomationRun, prompt_template: str | None = None) -> None:
    """The run's request and its outcome, once each. A firing's own transaction writes nothing here (it is on
    the schedule's latency path): the request is written when the run launches (`prompt_template` given), or
    when it ends without launching; a skip is its outcome alone."""
    if run.status == RunStatus.TRIGGERED and run.stopped_at is None:
        return
    automation_id = run.automation_id
    launched_now = run.status == RunStatus.TASK_CREATED and run.turn_id is None
    if launched_now or (run.task_id is None and run.status != RunStatus.SKIPPED):
        fired_by = _TRIGGERS.get(run.trigger_type, run.trigger_type)
        template = "" if prompt_template is None else f" Prompt (template): {_clip(prompt_template, _PROMPT_LIMIT)}"
        text, key = f"Run fired by {fired_by}.{template}", f"run:{run.id}:request"
        await post(
            uow, workspace_id, automation_id, ThreadKind.RUN_REQUEST, text, run_id=run.id, key=key, at=run.created_at
        )
    outcome = await _outcome(uow.db, run)
    if outcome is not None:
        kind, text = outcome
        at = run.created_at if run.status == RunStatus.SKIPPED else None
        key = f"run:{run.id}:outcome"
        await post(uow, workspace_id, automation_id, kind, text, run_id=run.id, task_id=run.task_id, key=key, at=at)


async def note_skipped(uow: UnitOfWork, workspace_id: str, runs: list[AutomationRun]) -> None:
    """note_run for firings skipped together (a batch of webhook deliveries at the cap): their entries in one
    statement, logged and left out together if the database refuses them."""
    entries = [
        ThreadEntry(new_id(), r.automation_id, ThreadKind.RUN_ERROR.value, _skipped_text(r), r.id, None, r.created_at)
        for r in runs
    ]
    if not entries:
        return
    statement = dialect_insert(uow.db, AutomationThreadMessage).on_conflict_do_nothing(
        index_elements=["automation_id", "dedup_key"]
    )
    rows = [{**entry_json(e), "created_at": e.created_at, "dedup_key": f"run:{e.run_id}:outcome"} for e in entries]
    try:
        async with _contained(uow.db):
            await uow.db.execute(statement, rows)
    except SQLAlchemyError:
        log.warning("%d skipped runs could not be written to their threads", len(entries), exc_info=True)
        return
    for entry in entries:
        payload = AutomationEventPayload(kind="THREAD_MESSAGE", automation_id=entry.automation_id, run=None)
        payload["thread_message"] = entry_json(entry)
        uow.emit(automation_channel(workspace_id), payload)


def _skipped_text(run: AutomationRun) -> str:
    fired_by = _TRIGGERS.get(run.trigger_type, run.trigger_type)
    return f"A run fired by {fired_by} was skipped: {run.reason}."


async def _outcome(db: AsyncSession, run: AutomationRun) -> tuple[ThreadKind, str] | None:
    if run.status == RunStatus.SKIPPED:
        return ThreadKind.RUN_ERROR, _skipped_text(run)
    if run.status == RunStatus.TRIGGERED and run.stopped_at is not None:
        return ThreadKind.RUN_ERROR, "The run was stopped before it started."
    if run.status == RunStatus.SUCCEEDED:
        return ThreadKind.RUN_RESPONSE, await _response(db, run) or "The run finished without a message."
    if run.status == RunStatus.FAILED:
        why = "it was stopped" if run.stopped_at is not None else run.reason or "no reason was given"
        return ThreadKind.RUN_ERROR, f"The run did not succeed: {why}"
    return None


async def _response(db: AsyncSession, run: AutomationRun) -> str | None:
    if run.turn_id is None:
        return None
    text = await db.scalar(
        select(Message.text)
        .where(Message.turn_id == run.turn_id, Message.kind == "AGENT")
        .order_by(desc(Message.seq))
        .limit(1)
    )
    return _clip(text, RESPONSE_LIMIT) if text else None


# -- reading ------------------------------------------------------------------------------------------------


async def page(db: AsyncSession, automation_id: str, first: int, after: str | None) -> ThreadPage:
    """Oldest first, by (created_at, id)."""
    query = select(AutomationThreadMessage).where(AutomationThreadMessage.automation_id == automation_id)
    if after is not None:
        created_at, entry_id = decode_cursor(after)
        query = query.where(
            or_(
                AutomationThreadMessage.created_at > created_at,
                and_(AutomationThreadMessage.created_at == created_at, AutomationThreadMessage.id > entry_id),
            )
        )
    rows = list(
        await db.scalars(
            query.order_by(AutomationThreadMessage.created_at, AutomationThreadMessage.id).limit(first + 1)
        )
    )
    entries = [
        ThreadEntry(r.id, r.automation_id, r.kind, r.text, r.run_id, r.task_id, r.created_at) for r in rows[:first]
    ]
    return ThreadPage(entries, [encode_cursor(e.created_at, e.id) for e in entries], len(rows) > first)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

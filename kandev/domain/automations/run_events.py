"""automationEvents: a run's change, queued on the unit of work and published only after its commit."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from kandev.domain.automations.records import RunRecord
from kandev.domain.automations.thread import note_run, note_skipped
from kandev.domain.context import UnitOfWork
from kandev.models import AutomationRun
from kandev.models.enums import RunStatus
from kandev.platform.event_bus import AutomationEventPayload, automation_channel

_DATES = ("created_at", "finished_at", "stopped_at", "occurred_at")


def run_json(record: RunRecord) -> dict[str, Any]:
    values = dataclasses.asdict(record)
    for name in _DATES:
        value = values[name]
        values[name] = value.isoformat() if value is not None else None
    values["status"] = str(record.status)
    return values


def run_of_json(values: dict[str, Any]) -> RunRecord:
    parsed: dict[str, Any] = {
        k: (datetime.fromisoformat(v) if k in _DATES and v is not None else v) for k, v in values.items()
    }
    return RunRecord(**parsed)


async def emit_run_event(
    uow: UnitOfWork, kind: str, run: AutomationRun, workspace_id: str, *, prompt_template: str | None = None
) -> RunRecord:
    """Queue the run's event with the run as every view shows it (its derived status included), and note its
    request or outcome in the automation's thread (a launch or stop passes its automation's `prompt_template`)."""
    if run.task_id is None:
        record = RunRecord.of_unbound(run)  # nothing to read: a firing's RUN_CREATED costs no statement
    else:
        await uow.db.flush()
        record = RunRecord.of((await uow.db.execute(RunRecord.query().where(AutomationRun.id == run.id))).one())
    uow.emit(
        automation_channel(workspace_id),
        AutomationEventPayload(kind=kind, automation_id=run.automation_id, run=run_json(record)),
    )
    await note_run(uow, workspace_id, run, prompt_template)
    return record


async def emit_runs_created(uow: UnitOfWork, runs: list[AutomationRun], workspace_id: str) -> None:
    """RUN_CREATED for runs admitted together (none bound to a task yet), their skips noted in one statement."""
    for run in runs:
        uow.emit(
            automation_channel(workspace_id),
            AutomationEventPayload(
                kind="RUN_CREATED", automation_id=run.automation_id, run=run_json(RunRecord.of_unbound(run))
            ),
        )
    await note_skipped(uow, workspace_id, [r for r in runs if r.status == RunStatus.SKIPPED])


def emit_next_fire(uow: UnitOfWork, workspace_id: str, automation_id: str, next_fire: datetime | None) -> None:
    """The automation's next fire moved (a save, or the scheduler claimed a fire)."""
    uow.emit(
        automation_channel(workspace_id),
        AutomationEventPayload(
            kind="NEXT_FIRE_CHANGED",
            automation_id=automation_id,
            run=None,
            next_fire=next_fire.isoformat() if next_fire is not None else None,
        ),
    )


def emit_run_deleted(uow: UnitOfWork, record: RunRecord, workspace_id: str) -> None:
    uow.emit(
        automation_channel(workspace_id),
        AutomationEventPayload(kind="RUN_DELETED", automation_id=record.automation_id, run=run_json(record)),
    )

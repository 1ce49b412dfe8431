"""Live pending indicators of runs: every change of a task's pending action is noted on the unit of work
(UnitOfWork.note_pending_action, by whichever aggregate changed it), and just before commit the newest run of
each noted automation task is announced once as RUN_UPDATED."""

from __future__ import annotations

from sqlalchemy import inspect

from kandev.domain.automations import runs
from kandev.domain.automations.records import RunRecord
from kandev.domain.automations.run_events import run_json
from kandev.domain.context import Event, UnitOfWork
from kandev.models import AutomationRun, Task
from kandev.models.enums import TaskOrigin
from kandev.platform.event_bus import AutomationEventPayload, automation_channel

_AUTOMATION_ORIGINS = (TaskOrigin.AUTOMATION, TaskOrigin.AUTOMATION_RUN)
_RUN_KINDS = ("RUN_CREATED", "RUN_UPDATED")


def watch(uow: UnitOfWork) -> None:
    """Every unit of work announces, just before commit, the runs whose tasks it noted (costs nothing when it
    noted none)."""
    uow.before_commit.append(lambda: announce_pending(uow))


def _maybe_automation_task(uow: UnitOfWork, task_id: str) -> bool:
    """False only for a task this transaction loaded and that no automation fired (no statement spent)."""
    key = inspect(Task).identity_key_from_primary_key((task_id,))
    task = uow.db.identity_map.get(key)
    return task is None or task.origin in _AUTOMATION_ORIGINS


async def announce_pending(uow: UnitOfWork) -> None:
    """RUN_UPDATED for the newest run of each noted task, in one statement for all of them; a run event this
    transaction already queued carries the run as it is now instead of being followed by a second one."""
    task_ids = sorted(t for t in uow.pending_tasks if _maybe_automation_task(uow, t))
    uow.pending_tasks.clear()
    if not task_ids:
        return
    await uow.db.flush()
    query = (
        RunRecord.query()
        .add_columns(Task.workspace_id)
        .where(AutomationRun.task_id.in_(task_ids), ~runs.has_newer_run())
    )
    for row in (await uow.db.execute(query)).all():
        record, workspace_id = RunRecord.of(row[:-1]), row[-1]
        _queue(uow, workspace_id, record)


def _queue(uow: UnitOfWork, workspace_id: str, record: RunRecord) -> None:
    channel = automation_channel(workspace_id)
    fresh = run_json(record)
    queued = False
    for index, event in enumerate(uow.events):
        payload, run = event.payload, event.payload.get("run")
        same_run = isinstance(run, dict) and run.get("id") == record.id
        if event.channel == channel and payload.get("kind") in _RUN_KINDS and same_run:
            uow.events[index] = Event(channel, {**payload, "run": fresh})
            queued = True
    if not queued:
        uow.emit(channel, AutomationEventPayload(kind="RUN_UPDATED", automation_id=record.automation_id, run=fresh))

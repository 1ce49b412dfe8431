"""Admitting webhook deliveries in the transaction that records them, by fire's rules (firing.new_run): in
arrival order, a triggered run while the automation has a free slot (the batch's own runs counted), else a
skipped run with the reason; each delivery records what it came to. A batch costs a few statements, not a
few per delivery: one count of the automations' active runs, one insert of the runs, one update of the
deliveries, one insert of the skips' thread entries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select, update

from kandev.domain.automations.firing import Admission, new_run
from kandev.domain.automations.run_events import emit_runs_created
from kandev.domain.automations.runs import active_sql
from kandev.domain.context import UnitOfWork
from kandev.models import Automation, AutomationRun, WebhookDelivery
from kandev.models.base import utcnow
from kandev.models.enums import RunStatus, RunTriggerType


@dataclass(frozen=True)
class Admitted:
    """A recorded delivery to admit."""

    delivery_id: str
    automation_id: str
    trigger_id: str | None
    payload: Any


async def admit(uow: UnitOfWork, deliveries: list[Admitted], sqlite: bool) -> dict[str, AutomationRun]:
    """Each delivery's run (triggered or skipped), by delivery id, written with the deliveries' outcomes."""
    db = uow.db
    ids = sorted({d.automation_id for d in deliveries})
    if not sqlite:
        # Held to the commit, as fire holds it: concurrent firings of an automation count each other.
        await db.execute(select(Automation.id).where(Automation.id.in_(ids)).with_for_update())
    # The automations and their active runs in one statement (a batch's statements are its latency).
    active_count = (
        select(func.count())
        .select_from(AutomationRun)
        .where(AutomationRun.automation_id == Automation.id, active_sql())
        .correlate(Automation)
        .scalar_subquery()
    )
    rows = (await db.execute(select(Automation, active_count).where(Automation.id.in_(ids)))).all()
    automations = {automation.id: automation for automation, _ in rows}
    active: dict[str, int] = {automation.id: count or 0 for automation, count in rows}
    now = utcnow()
    runs: dict[str, AutomationRun] = {}
    for delivery in deliveries:
        automation = automations[delivery.automation_id]
        count = active.get(automation.id, 0)
        key = f"webhook:{delivery.delivery_id}"
        run = new_run(automation, delivery.trigger_id, RunTriggerType.WEBHOOK, now, delivery.payload, key, count, now)
        if run.status == RunStatus.TRIGGERED:
            active[automation.id] = count + 1
        runs[delivery.delivery_id] = run
    # Core, not the ORM: its per-object bookkeeping would cost more than the statement.
    columns = [c.key for c in AutomationRun.__table__.columns]
    await db.execute(insert(AutomationRun), [{name: getattr(run, name) for name in columns} for run in runs.values()])
    outcomes = [
        {"id": delivery_id, "processed_at": now, "run_id": run.id, "outcome": outcome_of(run)}
        for delivery_id, run in runs.items()
    ]
    await db.execute(update(WebhookDelivery), outcomes)
    by_workspace: dict[str, list[AutomationRun]] = {}
    for delivery in deliveries:
        workspace_id = automations[delivery.automation_id].workspace_id
        by_workspace.setdefault(workspace_id, []).append(runs[delivery.delivery_id])
    for workspace_id, admitted in by_workspace.items():
        await emit_runs_created(uow, admitted, workspace_id)
    return runs


def outcome_of(run: AutomationRun) -> str:
    return (Admission.SKIPPED if run.status == RunStatus.SKIPPED else Admission.FIRED).value

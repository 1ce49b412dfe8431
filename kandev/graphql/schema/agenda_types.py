"""The agenda of a workspace's automations and the answer of validateCron."""

from __future__ import annotations

from datetime import datetime

import strawberry

from kandev.domain.automations.agenda import Agenda as AgendaRecord
from kandev.domain.automations.agenda import AgendaEntry
from kandev.domain.automations.schedule import CronCheck as CronCheckRecord
from kandev.graphql.schema.automation_types import Automation, AutomationRun, AutomationTrigger


@strawberry.type(description="Whether a schedule expression is valid in a timezone, what it means and when it fires.")
class CronCheck:
    valid: bool
    error: str | None = strawberry.field(description="Why the expression or timezone is refused; null when valid.")
    description: str | None = strawberry.field(description="The schedule in words; null when invalid.")
    next_fires: list[datetime] = strawberry.field(
        description="The next fires (UTC), as many as asked; @every counts from now, as if saved now."
    )

    @classmethod
    def of(cls, record: CronCheckRecord) -> CronCheck:
        return cls(valid=record.valid, error=record.error, description=record.description, next_fires=record.next_fires)


@strawberry.type(description="An enabled automation's next fire and the schedule that fires it.")
class AgendaItem:
    automation: Automation
    next_fire: datetime
    trigger: AutomationTrigger

    @classmethod
    def of(cls, entry: AgendaEntry) -> AgendaItem:
        return cls(
            automation=Automation.of(entry.automation),
            next_fire=entry.next_fire,
            trigger=AutomationTrigger.of(entry.trigger, entry.automation.enabled),
        )


@strawberry.type(description="What a workspace's automations do next and what they did last.")
class Agenda:
    upcoming: list[AgendaItem] = strawberry.field(
        description="Enabled automations with an enabled schedule, soonest next fire first."
    )
    recent: list[AutomationRun] = strawberry.field(
        description="The newest 50 runs across the workspace's automations, newest first."
    )

    @classmethod
    def of(cls, record: AgendaRecord) -> Agenda:
        return cls(
            upcoming=[AgendaItem.of(e) for e in record.upcoming], recent=[AutomationRun.of(r) for r in record.recent]
        )

"""When automations fire next, and the agenda of a workspace: what fires next and its newest runs.

Computed from the saved schedules alone (no query beyond the automations and their triggers): a schedule
fires next at its first occurrence after now, `@every` counting from its trigger's last save."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from kandev.domain.automations.records import AutomationRecord, RunRecord, TriggerRecord
from kandev.domain.automations.schedule import Schedule
from kandev.domain.errors import ValidationError
from kandev.models.enums import TriggerType

RECENT_RUNS = 50


@dataclass(frozen=True)
class AgendaEntry:
    """An enabled automation's next fire and the trigger that fires it."""

    automation: AutomationRecord
    next_fire: datetime
    trigger: TriggerRecord


@dataclass(frozen=True)
class Agenda:
    upcoming: list[AgendaEntry]
    recent: list[RunRecord]


@lru_cache(maxsize=4096)
def _schedule(expression: str, timezone: str, anchor: datetime) -> Schedule | None:
    try:
        return Schedule.parse(expression, timezone, anchor=anchor)
    except (ValidationError, ValueError):
        # Saved under older rules and refused by today's: the scheduler cannot fire it either.
        return None


def schedule_of(config: dict[str, object], anchor: datetime) -> Schedule | None:
    """A scheduled trigger's schedule, `@every` counting from `anchor` (the trigger's last save); None when
    the saved expression is no longer valid."""
    return _schedule(str(config.get("expression", "")), str(config.get("timezone", "")), anchor)


def computed_next_fire(
    kind: str, enabled: bool, config: dict[str, object], anchor: datetime, now: datetime
) -> datetime | None:
    """A trigger's first fire after `now` from its settings alone; None unless an enabled schedule."""
    if not enabled or kind != TriggerType.SCHEDULED:
        return None
    schedule = schedule_of(config, anchor)
    return None if schedule is None else schedule.next_after(now)


def trigger_next_fire(trigger: TriggerRecord, now: datetime, *, automation_enabled: bool = True) -> datetime | None:
    """The trigger's next fire after `now`; None unless it is an enabled schedule of an enabled automation.

    The stored next fire (kept on save, advanced by the scheduler) when it is still ahead; computed otherwise
    (a scheduler that is down, or a row saved before next fires were stored)."""
    if not automation_enabled:
        return None
    stored = trigger.next_fire_at
    if stored is not None and stored > now and trigger.enabled and trigger.type == TriggerType.SCHEDULED:
        return stored
    return computed_next_fire(trigger.type, trigger.enabled, trigger.config, trigger.updated_at, now)


def next_fire(automation: AutomationRecord, now: datetime) -> tuple[datetime, TriggerRecord] | None:
    """The automation's next fire after `now` and its trigger; None when it is disabled, deleted or has no
    enabled schedule (a webhook or GitHub-only automation fires when something arrives, not at a time)."""
    if not automation.enabled or automation.deleted_at is not None:
        return None
    fires = [(when, t) for t in automation.triggers if (when := trigger_next_fire(t, now)) is not None]
    return min(fires, key=lambda fire: (fire[0], fire[1].id)) if fires else None


def upcoming(automations: list[AutomationRecord], now: datetime) -> list[AgendaEntry]:
    """Enabled scheduled automations by next fire (then name and id, so equal times keep one order)."""
    entries = []
    for automation in automations:
        found = next_fire(automation, now)
        if found is not None:
            entries.append(AgendaEntry(automation, found[0], found[1]))
    return sorted(entries, key=lambda e: (e.next_fire, e.automation.name, e.automation.id))

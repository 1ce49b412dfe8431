"""The next-run indicator at the end of an automation's thread: when it fires next (an absolute time and a
relative hint), what a webhook automation waits for, "Disabled", or "Running" with the elapsed time and a
flag once a run takes longer than usual. Computed from the automation, its oldest active run and now, so
every read and every automationEvents message says the same."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from kandev.domain.automations.agenda import next_fire
from kandev.domain.automations.records import AutomationRecord, webhook_path
from kandev.models.enums import TriggerType


class NextRunState(StrEnum):
    SCHEDULED = "scheduled"
    WEBHOOK = "webhook"
    EVENT = "event"
    MANUAL = "manual"
    RUNNING = "running"
    DISABLED = "disabled"
    DELETED = "deleted"


@dataclass(frozen=True)
class NextRun:
    state: NextRunState
    label: str
    at: datetime | None = None
    relative: str | None = None
    webhook_method: str | None = None
    webhook_path: str | None = None
    running_since: datetime | None = None
    elapsed_seconds: int | None = None
    slow_after_seconds: int = 600
    slow: bool = False


def next_run(automation: AutomationRecord, running_since: datetime | None, now: datetime, slow_after: float) -> NextRun:
    """`running_since`: when its oldest active run fired (None: nothing runs); `slow_after` in seconds."""
    limit = int(slow_after)
    if automation.deleted_at is not None:
        return NextRun(NextRunState.DELETED, "Deleted", slow_after_seconds=limit)
    if running_since is not None:
        elapsed = max(0, int((now - running_since).total_seconds()))
        slow = elapsed >= limit
        label = f"Running for {_span(elapsed)}" + (" — taking longer than usual" if slow else "")
        return NextRun(
            NextRunState.RUNNING,
            label,
            running_since=running_since,
            elapsed_seconds=elapsed,
            slow_after_seconds=limit,
            slow=slow,
        )
    if not automation.enabled:
        return NextRun(NextRunState.DISABLED, "Disabled", slow_after_seconds=limit)
    found = next_fire(automation, now)
    if found is not None:
        at = found[0]
        relative = f"in {_span(int((at - now).total_seconds()))}"
        label = f"Next run at {at.strftime('%Y-%m-%d %H:%M')} UTC ({relative})"
        return NextRun(NextRunState.SCHEDULED, label, at=at, relative=relative, slow_after_seconds=limit)
    enabled = {t.type for t in automation.triggers if t.enabled}
    if TriggerType.WEBHOOK in enabled:
        path = webhook_path(automation.id)
        return NextRun(
            NextRunState.WEBHOOK,
            f"Triggered by external webhook: POST {path}",
            webhook_method="POST",
            webhook_path=path,
            slow_after_seconds=limit,
        )
    if enabled - {TriggerType.SCHEDULED}:
        return NextRun(NextRunState.EVENT, "Runs on matching GitHub events", slow_after_seconds=limit)
    if enabled:  # a schedule that never fires (say, 30 February) or no longer reads
        label = "Its schedule has no next fire (check the expression): runs on Run now only"
        return NextRun(NextRunState.MANUAL, label, slow_after_seconds=limit)
    return NextRun(NextRunState.MANUAL, "No trigger enabled: runs on Run now only", slow_after_seconds=limit)


def _span(seconds: int) -> str:
    """A rough duration in words: "less than a minute", "4 minutes", "2 hours", "3 days"."""
    if seconds < 60:
        return "less than a minute"
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    raise AssertionError("unreachable")

"""Plain views of automations, their triggers, repositories and runs, and the commands that write them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, TypeGuard, TypeVar

from sqlalchemy import Select, select

from kandev.domain.automations import runs
from kandev.domain.records import field_names
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Automation, AutomationRepository, AutomationRun, AutomationTrigger, Task
from kandev.models.enums import (
    AutomationContext,
    AutomationCreatedVia,
    AutomationDestination,
    PendingAction,
    TriggerType,
)

# Where an automation's webhook is called (the REST route, and what acks, threads and indicators show).
WEBHOOK_ROUTE = "/api/v1/automations/webhook/{automation_id}"


def webhook_path(automation_id: str) -> str:
    return WEBHOOK_ROUTE.format(automation_id=automation_id)


_T = TypeVar("_T")


class _Missing(Enum):
    MISSING = "missing"


MISSING = _Missing.MISSING
"""An omitted field: unchanged on update, the default on create (unlike an explicit value, null included)."""


def given(value: _T | _Missing) -> TypeGuard[_T]:
    return value is not MISSING


@dataclass(frozen=True)
class TriggerFields:
    """One trigger as the operator wants it; `config` holds the type's settings (see rules.check_trigger)."""

    type: TriggerType
    enabled: bool = True
    config: dict[str, Any] = field(default_factory=dict)


@dataclass
class AutomationFields:
    """Automation input. MISSING keeps a field (update) or takes its default (create); for the nullable
    fields an explicit None clears them. `triggers` and `repositories`, when given, replace the whole set."""

    name: str | _Missing = MISSING
    description: str | None | _Missing = MISSING
    agent_profile_id: str | None | _Missing = MISSING
    executor_profile_id: str | None | _Missing = MISSING
    destination: AutomationDestination | _Missing = MISSING
    workflow_id: str | None | _Missing = MISSING
    workflow_step_id: str | None | _Missing = MISSING
    repositories: list[RepositoryChoice] | _Missing = MISSING
    prompt: str | _Missing = MISSING
    title_template: str | None | _Missing = MISSING
    context: AutomationContext | _Missing = MISSING
    max_concurrent_runs: int | _Missing = MISSING
    enabled: bool | _Missing = MISSING
    triggers: list[TriggerFields] | _Missing = MISSING
    created_via: AutomationCreatedVia | _Missing = MISSING


@dataclass(frozen=True)
class TriggerRecord:
    id: str
    automation_id: str
    type: str
    enabled: bool
    config: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    next_fire_at: datetime | None = None

    @classmethod
    def of(cls, row: AutomationTrigger) -> TriggerRecord:
        return cls(**{f: getattr(row, f) for f in field_names(cls)} | {"config": dict(row.config or {})})


@dataclass(frozen=True)
class RepositoryRecord:
    """One (repository, base branch) pair, in the automation's order."""

    repository_id: str
    base_branch: str
    position: int

    @classmethod
    def of(cls, row: AutomationRepository) -> RepositoryRecord:
        return cls(repository_id=row.repository_id, base_branch=row.base_branch, position=row.position)


@dataclass(frozen=True)
class AutomationRecord:
    id: str
    workspace_id: str
    name: str
    description: str
    agent_profile_id: str | None
    executor_profile_id: str | None
    destination: str
    workflow_id: str | None
    workflow_step_id: str | None
    prompt: str
    title_template: str
    context: str
    max_concurrent_runs: int
    enabled: bool
    created_via: str
    created_by: str
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    triggers: tuple[TriggerRecord, ...] = ()
    repositories: tuple[RepositoryRecord, ...] = ()
    has_webhook_secret: bool = False
    # The last pre-flight ack as stored (preflight.Ack JSON); None: never checked.
    last_ack: dict[str, Any] | None = None

    @classmethod
    def of(
        cls,
        row: Automation,
        triggers: list[AutomationTrigger] | tuple[TriggerRecord, ...] = (),
        repositories: list[AutomationRepository] | tuple[RepositoryRecord, ...] = (),
    ) -> AutomationRecord:
        derived = ("triggers", "repositories", "has_webhook_secret")
        plain = {f: getattr(row, f) for f in field_names(cls) if f not in derived}
        return cls(
            **plain,
            triggers=tuple(t if isinstance(t, TriggerRecord) else TriggerRecord.of(t) for t in triggers),
            repositories=tuple(r if isinstance(r, RepositoryRecord) else RepositoryRecord.of(r) for r in repositories),
            has_webhook_secret=row.webhook_secret_ciphertext is not None,
        )


@dataclass(frozen=True)
class SavedAutomation:
    """A written automation; `webhook_secret` only when this write generated it (shown once)."""

    automation: AutomationRecord
    webhook_secret: str | None = None


@dataclass(frozen=True)
class RunRecord:
    id: str
    automation_id: str
    trigger_id: str | None
    trigger_type: str
    status: str
    reason: str | None
    dedup_key: str | None
    task_id: str | None
    session_id: str | None
    turn_id: str | None
    title_snapshot: str
    trigger_data: Any  # a JSON value: an object, or a webhook's array or scalar body
    created_at: datetime
    finished_at: datetime | None
    stopped_at: datetime | None
    occurred_at: datetime | None = None
    continuation_note: str | None = None
    # runs.pending_action_sql: what the task waits on, for its newest run only.
    pending_action: str = PendingAction.NONE.value

    @classmethod
    def query(cls) -> Select[Any]:
        """The runs with their tasks' facts; rows become records with `RunRecord.of`. `status` is the shown
        status (runs.shown_status), so every view derives archived and cancelled the same way; the pending
        action comes in the same statement, so a page of runs costs no more statements for it."""
        return select(
            *[getattr(AutomationRun, n) for n in _stored_fields()],
            runs.pending_action_sql(),
            AutomationRun.status,
            *runs.task_columns(),
        ).outerjoin(Task, Task.id == AutomationRun.task_id)

    @classmethod
    def of_unbound(cls, run: AutomationRun) -> RunRecord:
        """A run no task is bound to yet, straight from its row: there are no task facts to read (its shown
        status is derived the same way, from the stored one alone), and it waits on nothing."""
        values = {n: getattr(run, n) for n in _stored_fields()}
        values["status"] = runs.shown_status(run.status, run.stopped_at, None, None, None, None)
        return cls(**values)

    @classmethod
    def of(cls, row: Any) -> RunRecord:
        names = [*_stored_fields(), "pending_action"]
        values = dict(zip(names, row[: len(names)], strict=True))
        stored, deleted_at, archived_at, task_state = row[len(names) : len(names) + 4]
        values["status"] = runs.shown_status(
            stored, values["stopped_at"], values["task_id"], deleted_at, archived_at, task_state
        )
        return cls(**values)


def _stored_fields() -> list[str]:
    return [n for n in field_names(RunRecord) if n not in ("status", "pending_action")]


@dataclass(frozen=True)
class RunPage:
    records: list[RunRecord]
    has_next_page: bool
    cursors: list[str]
    total_count: int | None = None

"""Plain, serializable views of aggregates: what events carry and what the API layer renders."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kandev.models import Message, Task


@dataclass(frozen=True)
class TaskRecord:
    id: str
    workspace_id: str
    workflow_id: str
    workflow_step_id: str
    parent_id: str | None
    title: str
    prompt: str
    state: str
    autopilot: bool
    origin: str
    external_id: str | None
    agent_profile_id: str | None
    executor_profile_id: str | None
    block_reason: str | None
    created_at: datetime
    updated_at: datetime
    archived_at: datetime | None
    deleted_at: datetime | None
    # None while the task's create has not finished (see TaskService.create).
    creation_completed_at: datetime | None = None
    # A start recorded behind dependencies: {"prompt", "agent_profile_id", "executor_profile_id"}.
    deferred_launch: dict[str, Any] | None = None
    # What it changed, as last measured (kandev.domain.changes.stats); None until then.
    change_files: int | None = None
    change_additions: int | None = None
    change_deletions: int | None = None
    # Shipping: merge its pull requests once green and approved (kandev.domain.shipping).
    auto_merge: bool = False

    @classmethod
    def of(cls, task: Task) -> TaskRecord:
        return cls(**{name: getattr(task, name) for name in field_names(cls)})

    @classmethod
    def columns(cls) -> list[Any]:
        """The task's columns in field order: `select(*TaskRecord.columns())` rows are `TaskRecord(*row)`,
        without hydrating ORM objects (a page reads hundreds)."""
        return [getattr(Task, name) for name in field_names(cls)]

    def to_json(self) -> dict[str, Any]:
        return _json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        times = ("created_at", "updated_at", "archived_at", "deleted_at", "creation_completed_at")
        return cls(**_parse_times(data, times))


@dataclass(frozen=True)
class SessionRecord:
    id: str
    task_id: str
    agent_profile_id: str | None
    name: str
    is_primary: bool
    state: str
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    completion_pending: bool = False
    plan_mode: bool = False

    @classmethod
    def of(cls, row: Any) -> SessionRecord:
        return cls(**{name: getattr(row, name) for name in field_names(cls)})

    def to_json(self) -> dict[str, Any]:
        return _json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        return cls(**_parse_times(data, ("created_at", "updated_at", "ended_at")))


@dataclass(frozen=True)
class MessageRecord:
    id: str
    session_id: str
    turn_id: str | None
    seq: int
    kind: str
    text: str
    data: dict[str, Any]
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, row: Any) -> MessageRecord:
        return cls(**{name: getattr(row, name) for name in field_names(cls)})

    @classmethod
    def columns(cls) -> list[Any]:
        """The message's columns in field order: `select(*MessageRecord.columns())` rows are
        `MessageRecord(*row)`, without hydrating ORM objects (a transcript page reads up to 500)."""
        return [getattr(Message, name) for name in field_names(cls)]

    def to_json(self) -> dict[str, Any]:
        return _json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MessageRecord:
        return cls(**_parse_times(data, ("created_at", "updated_at")))


@dataclass(frozen=True)
class TurnRecord:
    id: str
    session_id: str
    seq: int
    state: str
    stop_reason: str | None
    error: str | None
    started_at: datetime
    ended_at: datetime | None

    @classmethod
    def of(cls, row: Any) -> TurnRecord:
        return cls(**{name: getattr(row, name) for name in field_names(cls)})

    def to_json(self) -> dict[str, Any]:
        return _json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnRecord:
        return cls(**_parse_times(data, ("started_at", "ended_at")))


_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(record_type: type) -> tuple[str, ...]:
    """A record's field names, looked up once: `dataclasses.fields` per row costs more than the copy."""
    names = _NAMES.get(record_type)
    if names is None:
        names = _NAMES[record_type] = tuple(f.name for f in dataclasses.fields(record_type))
    return names


def _json(record: Any) -> dict[str, Any]:
    data = dataclasses.asdict(record)
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in data.items()}


def _parse_times(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    values = dict(data)
    for key in keys:
        if values.get(key):
            values[key] = datetime.fromisoformat(values[key])
    return values

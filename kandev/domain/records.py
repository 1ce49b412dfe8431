"""Plain, serializable views of aggregates: what events carry and what the API layer renders."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kandev.models import Task


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

    @classmethod
    def of(cls, task: Task) -> TaskRecord:
        return cls(**{f.name: getattr(task, f.name) for f in dataclasses.fields(cls)})

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for key, value in data.items():
            if isinstance(value, datetime):
                data[key] = value.isoformat()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        values = dict(data)
        for key in ("created_at", "updated_at", "archived_at", "deleted_at"):
            if values.get(key):
                values[key] = datetime.fromisoformat(values[key])
        return cls(**values)

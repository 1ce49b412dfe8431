"""GraphQL enums, mirroring the stored value sets."""

from enum import Enum

import strawberry

from kandev.models import enums as m

TaskState = strawberry.enum(m.TaskState, description="Where a task is in its lifecycle.")
PendingAction = strawberry.enum(m.PendingAction, description="What the task waits on, most urgent first.")
SessionState = strawberry.enum(m.SessionState, description="Lifecycle of one agent conversation.")


@strawberry.enum(description="What happened to the task in a taskEvents message.")
class TaskEventKind(Enum):
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    MOVED = "MOVED"
    ARCHIVED = "ARCHIVED"
    DELETED = "DELETED"


@strawberry.enum(description="Who or what created the task.")
class TaskOrigin(Enum):
    USER = "user"
    AGENT = "agent"
    AUTOMATION = "automation"
    AUTOMATION_RUN = "automation_run"

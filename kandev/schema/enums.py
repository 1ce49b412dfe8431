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


MessageKind = strawberry.enum(m.MessageKind, description="What a transcript message is.")
TurnState = strawberry.enum(m.TurnState, description="How a turn is going or how it ended.")
AgentKind = strawberry.enum(m.AgentKind, description="SCRIPTED: the built-in agent; ACP: a command to spawn.")
ExecutorKind = strawberry.enum(
    m.ExecutorKind,
    description="WORKTREE: a git worktree per task; LOCAL: the repository itself; SCRATCH: an empty directory.",
)
PermissionPolicy = strawberry.enum(
    m.PermissionPolicy,
    description="What happens when the agent asks permission: allow, deny, or ask an operator.",
)


@strawberry.enum(description="List order by position: ASC oldest first, DESC newest first.")
class SortOrder(Enum):
    ASC = "ASC"
    DESC = "DESC"


@strawberry.enum(description="QUEUED waits for the running turn; INTERRUPT cancels it first.")
class DeliveryMode(Enum):
    QUEUED = "QUEUED"
    INTERRUPT = "INTERRUPT"


@strawberry.enum(description="What happened in a sessionEvents message.")
class SessionEventKind(Enum):
    MESSAGE_APPENDED = "MESSAGE_APPENDED"
    MESSAGE_UPDATED = "MESSAGE_UPDATED"
    TURN_STARTED = "TURN_STARTED"
    TURN_ENDED = "TURN_ENDED"
    STATE_CHANGED = "STATE_CHANGED"
    PROMPT_QUEUED = "PROMPT_QUEUED"
    WORKSPACE_SOURCES_UPDATED = "WORKSPACE_SOURCES_UPDATED"

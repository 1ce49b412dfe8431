"""GraphQL enums, mirroring the stored value sets."""

from enum import Enum

import strawberry

from kandev.domain.automations.indicator import NextRunState
from kandev.models import enums as m

# The stored value sets are registered in place (strawberry.enum marks the class itself and returns it), so
# the names below are the model classes: plain aliases mypy accepts as types.
strawberry.enum(m.TaskState, description="Where a task is in its lifecycle.")
strawberry.enum(m.PendingAction, description="What the task waits on, most urgent first.")
strawberry.enum(m.SessionState, description="Lifecycle of one agent conversation.")
strawberry.enum(m.MessageKind, description="What a transcript message is.")
strawberry.enum(m.TurnState, description="How a turn is going or how it ended.")
strawberry.enum(
    m.AgentKind,
    description=(
        "SCRIPTED: the built-in agent that follows directives; AUTHOR: the built-in automation-authoring agent "
        "(no model), the default of startAutomationAuthoring; ACP: a command to spawn."
    ),
)
strawberry.enum(
    m.McpServerKind,
    description="REMOTE: an http endpoint; NPM: an exact-version npm package run locally; EXECUTABLE: an "
    "existing executable run locally (both local kinds are admin-only).",
)
strawberry.enum(m.McpScope, description="Where a workspace MCP server is selected, widest first.")
strawberry.enum(
    m.ExecutorKind,
    description="WORKTREE: a git worktree per task; LOCAL: the repository itself; SCRATCH: an empty directory; "
    "SANDBOX: the task's worktree in Linux namespaces (bubblewrap); DOCKER: the task's worktree in a Docker container.",
)
strawberry.enum(m.PullPolicy, description="NEVER: the image must be on the worker; IF_MISSING: pulled when absent.")
strawberry.enum(
    m.PermissionPolicy,
    description="What happens when the agent asks permission: allow, deny, or ask an operator.",
)

strawberry.enum(
    m.AutomationDestination,
    description="HIDDEN: each run's task stays in the automation's history only; NORMAL: ordinary workflow work "
    "on the board.",
)
strawberry.enum(
    m.AutomationContext,
    description="NEW_TASK_PER_RUN: every firing gets its own task and session; CONTINUE_SESSION: later firings "
    "send a new turn to the first run's session.",
)
strawberry.enum(m.AutomationCreatedVia, description="Where the automation was made: the settings form or a chat.")
strawberry.enum(m.TriggerType, name="AutomationTriggerType", description="What a trigger listens to.")
strawberry.enum(m.RunTriggerType, name="AutomationRunTriggerType", description="What fired a run (MANUAL: Run now).")
strawberry.enum(
    m.RunStatus,
    name="AutomationRunStatus",
    description="TRIGGERED: admitted, task not bound yet; TASK_CREATED: its task and turn exist; SUCCEEDED / "
    "FAILED: its turn ended (the session waits for a reply); SKIPPED: not run, with the reason; ARCHIVED: its "
    "task was archived; CANCELLED: the run was stopped, or its task deleted or cancelled (the last two are "
    "derived when read, never stored).",
)

strawberry.enum(
    m.ThreadKind,
    name="AutomationThreadKind",
    description="What a thread entry records: the creation intent (the form's values, or the chat), a pre-flight "
    "acknowledgement, the next-run plan, a run's request, response or error, an update, disabling, deletion, or "
    "a re-authoring in chat.",
)
strawberry.enum(
    NextRunState,
    description="SCHEDULED: fires at a time; WEBHOOK: when its webhook is called; EVENT: on matching GitHub "
    "events; MANUAL: no trigger enabled, Run now only; RUNNING: a run is active; DISABLED; DELETED.",
)

TaskState = m.TaskState
PendingAction = m.PendingAction
SessionState = m.SessionState
MessageKind = m.MessageKind
TurnState = m.TurnState
AgentKind = m.AgentKind
ExecutorKind = m.ExecutorKind
PermissionPolicy = m.PermissionPolicy
PullPolicy = m.PullPolicy
AutomationDestination = m.AutomationDestination
AutomationContext = m.AutomationContext
AutomationCreatedVia = m.AutomationCreatedVia
AutomationTriggerType = m.TriggerType
AutomationRunTriggerType = m.RunTriggerType
AutomationRunStatus = m.RunStatus
AutomationThreadKind = m.ThreadKind


_SUBSCRIBED = (
    "The first message of every subscription: the server listens from now on. Load (or reload) the "
    "snapshot after it, and nothing that happens meanwhile is missed; it comes again after a reconnect."
)


@strawberry.enum(description="What happened to the task in a taskEvents message.")
class TaskEventKind(Enum):
    SUBSCRIBED = strawberry.enum_value("SUBSCRIBED", description=_SUBSCRIBED + " Carries no task.")
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    MOVED = "MOVED"
    ARCHIVED = "ARCHIVED"
    DELETED = "DELETED"
    CHANGES = strawberry.enum_value(
        "CHANGES",
        description="What the task changed (task.changeStats) is new; changedFiles names the files whose diff changed "
        "(empty: too many to list, refetch all).",
    )
    REVIEW_THREAD = strawberry.enum_value(
        "REVIEW_THREAD", description="A review thread was opened or changed; carries reviewThread as it is now."
    )
    REVIEW_THREAD_DELETED = strawberry.enum_value(
        "REVIEW_THREAD_DELETED", description="A review thread went with its last comment; carries it as it was."
    )
    PULL_REQUEST = strawberry.enum_value(
        "PULL_REQUEST",
        description="A pull (merge) request of the task was opened or refreshed: read task.pullRequests again.",
    )


@strawberry.enum(description="What happened to a run in an automationEvents message.")
class AutomationEventKind(Enum):
    SUBSCRIBED = strawberry.enum_value("SUBSCRIBED", description=_SUBSCRIBED + " Carries no run.")
    RUN_CREATED = "RUN_CREATED"
    RUN_UPDATED = "RUN_UPDATED"
    RUN_DELETED = "RUN_DELETED"
    NEXT_FIRE_CHANGED = strawberry.enum_value(
        "NEXT_FIRE_CHANGED", description="The automation's next scheduled fire moved; carries nextFire, no run."
    )
    THREAD_MESSAGE = strawberry.enum_value(
        "THREAD_MESSAGE", description="A new entry of the automation's thread; carries threadMessage, no run."
    )
    ACK_CHANGED = strawberry.enum_value(
        "ACK_CHANGED", description="The automation's pre-flight acknowledgement was stored; carries ack, no run."
    )


@strawberry.enum(description="A pre-flight acknowledgement's verdict.")
class AckStatus(Enum):
    OK = strawberry.enum_value("OK", description="The next run has what it needs.")
    WARN = strawberry.enum_value("WARN", description="It can run, with a concern (see detail).")
    FAILED = strawberry.enum_value("FAILED", description="A run would fail (see detail); reackAutomation checks again.")
    PENDING = strawberry.enum_value("PENDING", description="The check is queued or running.")


@strawberry.enum(description="How far a 'describe an automation' chat has come.")
class AuthoringDraftState(Enum):
    COLLECTING = strawberry.enum_value("COLLECTING", description="The agent is asking what is missing.")
    CONFIRMING = strawberry.enum_value(
        "CONFIRMING",
        description="The full definition is shown, awaiting a yes (or a yes held while a credential is missing).",
    )
    CONFIRMED = strawberry.enum_value(
        "CONFIRMED", description="The operator said yes and the chat created the automation (automationId)."
    )
    HANDED_OFF = strawberry.enum_value(
        "HANDED_OFF", description="No viable definition after five messages: the form takes over with the draft."
    )


@strawberry.enum(description="Who or what created the task.")
class TaskOrigin(Enum):
    USER = "user"
    AGENT = "agent"
    AUTOMATION = "automation"
    AUTOMATION_RUN = "automation_run"
    AUTOMATION_AUTHORING = "automation_authoring"


@strawberry.enum(description="List order by position: ASC oldest first, DESC newest first.")
class SortOrder(Enum):
    ASC = "ASC"
    DESC = "DESC"


@strawberry.enum(description="QUEUED waits for the running turn; INTERRUPT cancels it first.")
class DeliveryMode(Enum):
    QUEUED = "QUEUED"
    INTERRUPT = "INTERRUPT"


@strawberry.enum(
    description="Which part of the workspace's configuration a workspaceEvents message is about; refetch that list."
)
class WorkspaceEventKind(Enum):
    SUBSCRIBED = strawberry.enum_value("SUBSCRIBED", description=_SUBSCRIBED + " Carries no id.")
    WORKSPACE = strawberry.enum_value(
        "WORKSPACE", description="A workspace was renamed or changed, or (told to its owner only) created."
    )
    WORKFLOW = strawberry.enum_value(
        "WORKFLOW", description="A workflow or one of its steps was created, changed, reordered or deleted."
    )
    AGENT_PROFILE = "AGENT_PROFILE"
    EXECUTOR_PROFILE = "EXECUTOR_PROFILE"
    REPOSITORY = "REPOSITORY"
    SECRET = strawberry.enum_value("SECRET", description="A secret was created, replaced or deleted (never its value).")
    MCP_SERVER = strawberry.enum_value(
        "MCP_SERVER",
        description="A workspace (or server-wide) MCP server definition was created, changed or deleted, or "
        "selected or deselected at a scope (profile, repository, task, session).",
    )
    ACCESS_TOKEN = strawberry.enum_value(
        "ACCESS_TOKEN",
        description="One of the caller's own personal access tokens was issued or revoked (told to its owner only, "
        "in whatever workspace; never its text or hash).",
    )


@strawberry.enum(description="What happened in a sessionEvents message.")
class SessionEventKind(Enum):
    SUBSCRIBED = strawberry.enum_value("SUBSCRIBED", description=_SUBSCRIBED + " Carries the session as it is then.")
    MESSAGE_APPENDED = "MESSAGE_APPENDED"
    MESSAGE_UPDATED = "MESSAGE_UPDATED"
    TURN_STARTED = "TURN_STARTED"
    TURN_ENDED = "TURN_ENDED"
    STATE_CHANGED = "STATE_CHANGED"
    PROMPT_QUEUED = "PROMPT_QUEUED"
    WORKSPACE_SOURCES_UPDATED = "WORKSPACE_SOURCES_UPDATED"

"""Value sets stored as plain strings; the GraphQL enums mirror these."""

from enum import StrEnum


class TaskState(StrEnum):
    TODO = "TODO"
    SCHEDULING = "SCHEDULING"
    IN_PROGRESS = "IN_PROGRESS"
    REVIEW = "REVIEW"
    BLOCKED = "BLOCKED"
    WAITING_FOR_INPUT = "WAITING_FOR_INPUT"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class TaskOrigin(StrEnum):
    USER = "user"
    AGENT = "agent"
    AUTOMATION = "automation"
    AUTOMATION_RUN = "automation_run"
    AUTOMATION_AUTHORING = "automation_authoring"


# Tasks kept out of the board, task lists and taskEvents: an automation run's (its history is the automation's)
# and an authoring conversation's (it lives in the "describe an automation" panel).
HIDDEN_ORIGINS = (TaskOrigin.AUTOMATION_RUN, TaskOrigin.AUTOMATION_AUTHORING)


class PendingAction(StrEnum):
    NONE = "NONE"
    CLARIFICATION = "CLARIFICATION"
    PERMISSION = "PERMISSION"
    COMPLETION_PENDING = "COMPLETION_PENDING"
    # Its turn needs a worker capability (docker, sandbox, ...) no live worker offers.
    WAITING_FOR_WORKER = "WAITING_FOR_WORKER"
    # The task's budget is spent: nothing is sent to its agent until a person raises it.
    BUDGET_REACHED = "BUDGET_REACHED"


class SessionState(StrEnum):
    CREATED = "CREATED"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    WAITING_FOR_INPUT = "WAITING_FOR_INPUT"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


TERMINAL_SESSION_STATES = frozenset({SessionState.COMPLETED, SessionState.FAILED, SessionState.CANCELLED})


class TurnState(StrEnum):
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class PromptState(StrEnum):
    QUEUED = "QUEUED"
    CLAIMED = "CLAIMED"
    SUPERSEDED = "SUPERSEDED"
    CANCELLED = "CANCELLED"


class MessageKind(StrEnum):
    USER = "USER"
    AGENT = "AGENT"
    THOUGHT = "THOUGHT"
    TOOL_CALL = "TOOL_CALL"
    PLAN = "PLAN"
    SYSTEM = "SYSTEM"
    ERROR = "ERROR"
    RICH_OUTPUT = "RICH_OUTPUT"
    # Review comments sent to the agent (sendReviewToAgent): one message listing the threads.
    REVIEW = "REVIEW"


class AgentKind(StrEnum):
    SCRIPTED = "SCRIPTED"
    ACP = "ACP"
    AUTHOR = "AUTHOR"


class PermissionPolicy(StrEnum):
    ALLOW = "ALLOW"
    DENY = "DENY"
    ASK = "ASK"


class ExecutorKind(StrEnum):
    SCRATCH = "scratch"
    WORKTREE = "worktree"
    LOCAL = "local"
    # A task's worktree in a box: Linux namespaces (bubblewrap), or a Docker container.
    SANDBOX = "sandbox"
    DOCKER = "docker"


class PullPolicy(StrEnum):
    """Whether a DOCKER executor may pull its image: never (it must be on the worker), or when it is missing."""

    NEVER = "NEVER"
    IF_MISSING = "IF_MISSING"


class TransitionTrigger(StrEnum):
    MANUAL = "manual"
    AUTO_COMPLETE = "auto_complete"
    APPROVAL = "approval"
    ON_TURN_START = "on_turn_start"
    ON_TURN_COMPLETE = "on_turn_complete"
    TASK_UPDATE = "task_update"
    START_TASK = "start_task"
    CHILDREN_COMPLETED = "children_completed"
    CREATE = "create"
    STEP_DELETED = "step_deleted"
    MERGED = "merged"


class AutomationDestination(StrEnum):
    """hidden: each run's task stays out of the board and lists; normal: ordinary workflow work."""

    HIDDEN = "hidden"
    NORMAL = "normal"


class AutomationContext(StrEnum):
    """What a firing works in: a new task each time, or the previous run's task and primary session."""

    NEW_TASK_PER_RUN = "new_task_per_run"
    CONTINUE_SESSION = "continue_session"


class AutomationCreatedVia(StrEnum):
    FORM = "form"
    CHAT = "chat"


class TriggerType(StrEnum):
    """What a trigger of an automation listens to."""

    SCHEDULED = "scheduled"
    GITHUB_PR = "github_pr"
    GITHUB_PR_MERGED = "github_pr_merged"
    GITHUB_PUSH = "github_push"
    GITHUB_CI = "github_ci"
    WEBHOOK = "webhook"


class RunTriggerType(StrEnum):
    """What fired a run: one of the trigger types, or an operator's Run now (manual, no trigger row)."""

    SCHEDULED = "scheduled"
    GITHUB_PR = "github_pr"
    GITHUB_PR_MERGED = "github_pr_merged"
    GITHUB_PUSH = "github_push"
    GITHUB_CI = "github_ci"
    WEBHOOK = "webhook"
    MANUAL = "manual"


class ThreadKind(StrEnum):
    """What an entry of an automation's thread records."""

    CREATION_INTENT = "creation_intent"
    PREFLIGHT_ACK = "preflight_ack"
    NEXT_RUN_MARKER = "next_run_marker"
    RUN_REQUEST = "run_request"
    RUN_RESPONSE = "run_response"
    RUN_ERROR = "run_error"
    UPDATED = "updated"
    DISABLED = "disabled"
    DELETED = "deleted"
    REAUTHORED = "reauthored"


class RunStatus(StrEnum):
    """Run statuses: the first five are stored; archived and cancelled are derived at read time, never stored
    (kandev.domain.automations.runs.shown_status)."""

    TRIGGERED = "triggered"
    TASK_CREATED = "task_created"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    ARCHIVED = "archived"
    CANCELLED = "cancelled"


class McpServerKind(StrEnum):
    REMOTE = "REMOTE"
    NPM = "NPM"
    EXECUTABLE = "EXECUTABLE"


class McpScope(StrEnum):
    """Where a workspace MCP definition is selected, widest first (the order origins are listed in)."""

    PROFILE = "PROFILE"
    REPOSITORY = "REPOSITORY"
    TASK = "TASK"
    SESSION = "SESSION"

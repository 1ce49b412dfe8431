"""ORM tables, one module per aggregate; importing this package registers them all on Base.metadata."""

from kandev.models.attachments import Attachment, PromptAttachment
from kandev.models.automations import (
    Automation,
    AutomationRepository,
    AutomationRun,
    AutomationThreadMessage,
    AutomationTrigger,
    WebhookDelivery,
    WebhookSignature,
)
from kandev.models.base import Base
from kandev.models.github import (
    GithubApp,
    GithubConnection,
    GithubInstallation,
    GithubPendingFiring,
    GithubPrPollState,
    GithubWebhookDelivery,
    TaskContribution,
    TaskPullRequest,
)
from kandev.models.gitlab import GitlabConnection, TaskMergeRequest
from kandev.models.mcp_servers import McpServer, McpServerSelection
from kandev.models.notifications import NotificationChannel, NotificationDelivery
from kandev.models.profiles import AgentProfile, ExecutorProfile
from kandev.models.reviews import ReviewComment, ReviewedFile, ReviewThread, TaskChangeStats
from kandev.models.secrets import Secret
from kandev.models.sessions import (
    Clarification,
    Message,
    ParentQuestion,
    PermissionRequest,
    QueuedPrompt,
    Session,
    SessionToken,
    Turn,
)
from kandev.models.shipping import CheckFixRound, ShipOperation, TaskShipRequest
from kandev.models.tasks import StepTransition, Task, TaskCleanup, TaskDependency, TaskFolder, TaskRepository
from kandev.models.usage import Budget, TurnUsage
from kandev.models.users import AccessToken, AgentIdentity, User
from kandev.models.workflows import Workflow, WorkflowStep
from kandev.models.workspaces import Repository, TaskChoice, Workspace

__all__ = [
    "AccessToken",
    "AgentIdentity",
    "AgentProfile",
    "Attachment",
    "Automation",
    "AutomationRepository",
    "AutomationRun",
    "AutomationThreadMessage",
    "AutomationTrigger",
    "Base",
    "Budget",
    "CheckFixRound",
    "Clarification",
    "ExecutorProfile",
    "GithubApp",
    "GithubConnection",
    "GithubInstallation",
    "GithubPendingFiring",
    "GithubPrPollState",
    "GithubWebhookDelivery",
    "GitlabConnection",
    "TaskMergeRequest",
    "McpServer",
    "McpServerSelection",
    "Message",
    "NotificationChannel",
    "NotificationDelivery",
    "ParentQuestion",
    "PermissionRequest",
    "PromptAttachment",
    "QueuedPrompt",
    "Repository",
    "ReviewComment",
    "ReviewThread",
    "ReviewedFile",
    "Secret",
    "Session",
    "SessionToken",
    "ShipOperation",
    "StepTransition",
    "Task",
    "TaskChangeStats",
    "TaskChoice",
    "TaskCleanup",
    "TaskDependency",
    "TaskFolder",
    "TaskContribution",
    "TaskPullRequest",
    "TaskRepository",
    "TaskShipRequest",
    "Turn",
    "TurnUsage",
    "User",
    "Workflow",
    "WorkflowStep",
    "WebhookDelivery",
    "WebhookSignature",
    "Workspace",
]

"""ORM tables, one module per aggregate; importing this package registers them all on Base.metadata."""

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
from kandev.models.profiles import AgentProfile, ExecutorProfile
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
from kandev.models.tasks import StepTransition, Task, TaskCleanup, TaskDependency, TaskFolder, TaskRepository
from kandev.models.usage import Budget, TurnUsage
from kandev.models.users import AccessToken, AgentIdentity, User
from kandev.models.workflows import Workflow, WorkflowStep
from kandev.models.workspaces import Repository, Workspace

__all__ = [
    "AccessToken",
    "AgentIdentity",
    "AgentProfile",
    "Automation",
    "AutomationRepository",
    "AutomationRun",
    "AutomationThreadMessage",
    "AutomationTrigger",
    "Base",
    "Budget",
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
    "ParentQuestion",
    "PermissionRequest",
    "QueuedPrompt",
    "Repository",
    "Secret",
    "Session",
    "SessionToken",
    "StepTransition",
    "Task",
    "TaskCleanup",
    "TaskDependency",
    "TaskFolder",
    "TaskContribution",
    "TaskPullRequest",
    "TaskRepository",
    "Turn",
    "TurnUsage",
    "User",
    "Workflow",
    "WorkflowStep",
    "WebhookDelivery",
    "WebhookSignature",
    "Workspace",
]

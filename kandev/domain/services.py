"""One bundle of services per request, job or CLI command, over one ServiceContext; and the wiring of the
hooks a step move sets off (the domain's composition root)."""

from __future__ import annotations

from functools import cached_property

from kandev.domain.access.tokens import AccessTokenService
from kandev.domain.attachments.service import AttachmentService
from kandev.domain.automations.run_service import AutomationRunService
from kandev.domain.automations.service import AutomationService
from kandev.domain.changes.service import ChangesService
from kandev.domain.context import Principal, ServiceContext
from kandev.domain.github.connections import GithubService
from kandev.domain.github.task_review import TaskPullRequestService
from kandev.domain.gitlab.connections import GitlabService
from kandev.domain.gitlab.merge_requests import TaskMergeRequestService
from kandev.domain.lookups import Lookups
from kandev.domain.mcp.definitions import McpServerService
from kandev.domain.mcp.registry import McpRegistryService
from kandev.domain.mcp.selections import McpSelectionService
from kandev.domain.notifications.channels import NotificationChannelService
from kandev.domain.reviews.service import ReviewService
from kandev.domain.sessions.clarifications import ClarificationService
from kandev.domain.sessions.ends import complete_task_sessions
from kandev.domain.sessions.parent_questions import ParentQuestionService
from kandev.domain.sessions.pending_actions import PendingActionService
from kandev.domain.sessions.permissions import PermissionService
from kandev.domain.sessions.rich_output import RichOutputService
from kandev.domain.sessions.service import SessionService
from kandev.domain.shipping.service import ShipService
from kandev.domain.tasks.dependencies import DependencyService
from kandev.domain.tasks.file_preview import FilePreviewService
from kandev.domain.tasks.service import TaskService
from kandev.domain.tasks.titles import TitleService
from kandev.domain.usage.service import UsageService
from kandev.domain.workflow.engine import after_task_state_change
from kandev.domain.workflow.service import WorkflowService
from kandev.domain.workflow.signals import SignalService
from kandev.domain.workflow.starts import check_start, start_agent
from kandev.domain.workspace.agent_profiles import AgentProfileService
from kandev.domain.workspace.executor_profiles import ExecutorProfileService
from kandev.domain.workspace.repositories import RepositoryService
from kandev.domain.workspace.secrets import SecretService
from kandev.domain.workspace.service import WorkspaceService
from kandev.domain.workspace.sources import WorkspaceSourceService


class WorkflowHooks:
    """MoveHooks, implemented by the modules above `transitions`."""

    check_start = staticmethod(check_start)
    start_agent = staticmethod(start_agent)
    complete_task_sessions = staticmethod(complete_task_sessions)
    after_task_state_change = staticmethod(after_task_state_change)


MOVE_HOOKS = WorkflowHooks()


class Services:
    def __init__(self, ctx: ServiceContext) -> None:
        self.ctx = ctx

    @property
    def principal(self) -> Principal:
        return self.ctx.principal

    @cached_property
    def usage(self) -> UsageService:
        return UsageService(self.ctx)

    @cached_property
    def tasks(self) -> TaskService:
        return TaskService(self.ctx)

    @cached_property
    def attachments(self) -> AttachmentService:
        return AttachmentService(self.ctx)

    @cached_property
    def notification_channels(self) -> NotificationChannelService:
        return NotificationChannelService(self.ctx)

    @cached_property
    def workspaces(self) -> WorkspaceService:
        return WorkspaceService(self.ctx)

    @cached_property
    def workflows(self) -> WorkflowService:
        return WorkflowService(self.ctx)

    @cached_property
    def sessions(self) -> SessionService:
        return SessionService(self.ctx)

    @cached_property
    def access_tokens(self) -> AccessTokenService:
        return AccessTokenService(self.ctx)

    @cached_property
    def agent_profiles(self) -> AgentProfileService:
        return AgentProfileService(self.ctx)

    @cached_property
    def executor_profiles(self) -> ExecutorProfileService:
        return ExecutorProfileService(self.ctx)

    @cached_property
    def repositories(self) -> RepositoryService:
        return RepositoryService(self.ctx)

    @cached_property
    def mcp_servers(self) -> McpServerService:
        return McpServerService(self.ctx)

    @cached_property
    def mcp_registry(self) -> McpRegistryService:
        return McpRegistryService(self.ctx)

    @cached_property
    def mcp_selections(self) -> McpSelectionService:
        return McpSelectionService(self.ctx)

    @cached_property
    def secrets(self) -> SecretService:
        return SecretService(self.ctx, self.ctx.settings.server_key)

    @cached_property
    def permissions(self) -> PermissionService:
        return PermissionService(self.ctx)

    @cached_property
    def clarifications(self) -> ClarificationService:
        return ClarificationService(self.ctx)

    @cached_property
    def parent_questions(self) -> ParentQuestionService:
        return ParentQuestionService(self.ctx)

    @cached_property
    def pending_actions(self) -> PendingActionService:
        return PendingActionService(self.ctx)

    @cached_property
    def titles(self) -> TitleService:
        return TitleService(self.ctx)

    @cached_property
    def signals(self) -> SignalService:
        return SignalService(self.ctx)

    @cached_property
    def dependencies(self) -> DependencyService:
        return DependencyService(self.ctx)

    @cached_property
    def rich_output(self) -> RichOutputService:
        return RichOutputService(self.ctx)

    @cached_property
    def ship(self) -> ShipService:
        return ShipService(self.ctx)

    @cached_property
    def changes(self) -> ChangesService:
        return ChangesService(self.ctx)

    @cached_property
    def reviews(self) -> ReviewService:
        return ReviewService(self.ctx)

    @cached_property
    def file_previews(self) -> FilePreviewService:
        return FilePreviewService(self.ctx)

    @cached_property
    def workspace_sources(self) -> WorkspaceSourceService:
        return WorkspaceSourceService(self.ctx)

    @cached_property
    def automations(self) -> AutomationService:
        return AutomationService(self.ctx, self.ctx.settings.server_key)

    @cached_property
    def automation_runs(self) -> AutomationRunService:
        return AutomationRunService(self.ctx)

    @cached_property
    def github(self) -> GithubService:
        return GithubService(self.ctx)

    @cached_property
    def gitlab(self) -> GitlabService:
        return GitlabService(self.ctx)

    @cached_property
    def task_pull_requests(self) -> TaskPullRequestService:
        return TaskPullRequestService(self.ctx)

    @cached_property
    def task_merge_requests(self) -> TaskMergeRequestService:
        return TaskMergeRequestService(self.ctx)

    @cached_property
    def lookups(self) -> Lookups:
        return Lookups(self.ctx)

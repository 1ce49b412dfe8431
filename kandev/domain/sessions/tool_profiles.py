"""MCP profiles: which tools a caller gets, decided by the backend from durable state, never by the agent.

A profile is a base surface plus capability groups. The tool names of each are declared here as
data, so the API can show a session's tools without importing the MCP layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kandev.domain.access.session_tokens import announce_access_change
from kandev.domain.context import UnitOfWork
from kandev.domain.sessions.prompts import is_terminal
from kandev.models import GithubConnection, GitlabConnection, Repository, Session, Task, TaskRepository
from kandev.models.base import utcnow
from kandev.models.enums import TaskOrigin
from kandev.platform.event_bus import ToolsChange, tools_channel


class Surface(StrEnum):
    KANBAN_TASK = "kanban-task"
    CONFIGURATION = "configuration"
    EXTERNAL = "external"
    AUTOMATION_COORDINATOR = "automation-coordinator"
    AUTOMATION_AUTHORING = "automation-authoring"


class Capability(StrEnum):
    USER_QUESTION = "user-question"
    PARENT_QUESTION = "parent-question"
    TASK_TITLE = "task-title"
    GITHUB_PR = "github-pr"
    GITLAB_MR = "gitlab-mr"


_READS = (
    "list_workspaces_kandev",
    "list_workflows_kandev",
    "list_workflow_steps_kandev",
    "list_tasks_kandev",
    "list_agents_kandev",
)
_CONFIGURATION = (
    *_READS,
    "create_workspace_kandev",
    "move_task_kandev",
    "archive_task_kandev",
    "delete_task_kandev",
    "get_task_conversation_kandev",
    "create_workflow_kandev",
    "update_workflow_kandev",
    "delete_workflow_kandev",
    "create_workflow_step_kandev",
    "update_workflow_step_kandev",
    "delete_workflow_step_kandev",
    "reorder_workflow_steps_kandev",
    # The spec's name, without the suffix (the automation-authoring surface will share it).
    "dry_run_preflight",
)
SURFACE_TOOLS: dict[Surface, tuple[str, ...]] = {
    Surface.KANBAN_TASK: (
        *_READS,
        "create_task_kandev",
        "update_task_kandev",
        "move_task_kandev",
        "archive_task_kandev",
        "delete_task_kandev",
        "message_task_kandev",
        "get_task_conversation_kandev",
        "list_task_sessions_kandev",
        "step_complete_kandev",
        "spawn_session_kandev",
        "stop_task_kandev",
        "list_related_tasks_kandev",
        "add_task_dependency_kandev",
        "remove_task_dependency_kandev",
        "show_rich_output_kandev",
        "add_workspace_sources_kandev",
        "add_branch_to_task_kandev",
        "update_repository_base_branch_kandev",
        "list_review_comments_kandev",
        "reply_review_comment_kandev",
        "resolve_review_comment_kandev",
        "commit_changes_kandev",
        "push_branch_kandev",
        "open_pull_request_kandev",
    ),
    Surface.CONFIGURATION: _CONFIGURATION,
    Surface.EXTERNAL: (
        *_CONFIGURATION,
        "create_task_kandev",
        "list_pending_agent_permissions_kandev",
        "resolve_agent_permission_kandev",
        "list_pending_questions_kandev",
        "answer_question_kandev",
        "add_task_dependency_kandev",
        "remove_task_dependency_kandev",
        "add_workspace_sources_kandev",
        "update_repository_base_branch_kandev",
    ),
    # An automation run's session coordinates other work: reads, new tasks, messages, stops, sessions,
    # dependencies, other agents' questions and permissions, and archiving. No deletion, configuration,
    # task-local authoring (step signal, rich output, title, sources, branches) or provider tools.
    Surface.AUTOMATION_COORDINATOR: (
        *_READS,
        "create_task_kandev",
        "archive_task_kandev",
        "message_task_kandev",
        "get_task_conversation_kandev",
        "list_task_sessions_kandev",
        "spawn_session_kandev",
        "stop_task_kandev",
        "list_related_tasks_kandev",
        "add_task_dependency_kandev",
        "remove_task_dependency_kandev",
        "list_pending_questions_kandev",
        "answer_question_kandev",
        "list_pending_agent_permissions_kandev",
        "resolve_agent_permission_kandev",
    ),
    # A "describe an automation" chat: exactly the spec's authoring tools, named as the spec names them.
    Surface.AUTOMATION_AUTHORING: (
        "list_available_agents",
        "validate_cron",
        "dry_run_preflight",
        "create_automation",
        "update_automation",
        "delete_automation",
        "trigger_automation_now",
    ),
}
# Capability groups add tools as their features land (questions, titles, provider automation).
CAPABILITY_TOOLS: dict[Capability, tuple[str, ...]] = {capability: () for capability in Capability}
CAPABILITY_TOOLS[Capability.USER_QUESTION] = ("ask_user_question_kandev",)
CAPABILITY_TOOLS[Capability.PARENT_QUESTION] = ("ask_parent_question_kandev",)
CAPABILITY_TOOLS[Capability.TASK_TITLE] = ("set_task_title_kandev",)
CAPABILITY_TOOLS[Capability.GITHUB_PR] = ("get_task_pr_automation_kandev", "update_task_pr_automation_kandev")
CAPABILITY_TOOLS[Capability.GITLAB_MR] = ("get_task_mr_automation_kandev", "update_task_mr_automation_kandev")

SESSION_PURPOSE_SURFACE = {
    "task": Surface.KANBAN_TASK,
    "configuration": Surface.CONFIGURATION,
    "automation": Surface.AUTOMATION_COORDINATOR,
}


@dataclass(frozen=True)
class McpProfile:
    surface: Surface
    capabilities: frozenset[Capability] = frozenset()

    def tool_names(self) -> list[str]:
        names = list(SURFACE_TOOLS[self.surface])
        for capability in sorted(self.capabilities):
            names += [n for n in CAPABILITY_TOOLS[capability] if n not in names]
        return names

    def to_json(self) -> dict[str, Any]:
        return {"surface": self.surface.value, "capabilities": sorted(c.value for c in self.capabilities)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> McpProfile | None:
        if not data or "surface" not in data:
            return None
        return cls(Surface(data["surface"]), frozenset(Capability(c) for c in data.get("capabilities", [])))


EXTERNAL_PROFILE = McpProfile(Surface.EXTERNAL)


def compute_profile(
    session: Session, task: Task, *, title_owner: bool = False, providers: frozenset[str] = frozenset()
) -> McpProfile:
    """The profile a session should have now: from its purpose, the task's autopilot flag, whether the
    task has a direct parent, title ownership and the providers of its repositories."""
    # Decided by what the task is, not by anything a prompt or argument says.
    if task.origin == TaskOrigin.AUTOMATION_RUN:
        surface = Surface.AUTOMATION_COORDINATOR
    elif task.origin == TaskOrigin.AUTOMATION_AUTHORING:
        surface = Surface.AUTOMATION_AUTHORING
    else:
        surface = SESSION_PURPOSE_SURFACE.get(session.purpose, Surface.KANBAN_TASK)
    capabilities: set[Capability] = set()
    if surface == Surface.KANBAN_TASK:
        # Never both question tools: an autopilot child asks its parent, an autopilot root asks nobody.
        if not task.autopilot:
            capabilities.add(Capability.USER_QUESTION)
        elif task.parent_id is not None:
            capabilities.add(Capability.PARENT_QUESTION)
        if title_owner:
            capabilities.add(Capability.TASK_TITLE)
        if "github" in providers:
            capabilities.add(Capability.GITHUB_PR)
        if "gitlab" in providers:
            capabilities.add(Capability.GITLAB_MR)
    return McpProfile(surface, frozenset(capabilities))


def store_profile(uow: UnitOfWork, session: Session, profile: McpProfile) -> bool:
    """Save the profile as a new revision when it differs; True when it changed (then the caller
    must tell the session's MCP connection, once, after commit)."""
    if McpProfile.from_json(session.mcp_profile or {}) == profile:
        return False
    session.mcp_profile = profile.to_json()
    session.mcp_profile_revision = (session.mcp_profile_revision or 0) + 1
    session.updated_at = utcnow()
    return True


def owns_title(task: Task, session: Session) -> bool:
    """The session holds the title capability: the task's title is pending and this session claimed it."""
    return task.title_pending and task.title_owner_session_id == session.id


def provider_of(remote_url: str | None, gitlab_host: str | None = None, github_host: str | None = None) -> str | None:
    """The code host a remote points at, for the provider capability groups: github.com or the host of the
    workspace's GitHub connection (GitHub Enterprise); the host of the workspace's GitLab connection (a
    self-managed instance) or any host named like GitLab."""
    if not remote_url:
        return None
    host = remote_url.split("://", 1)[-1].split("@", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
    if host == "github.com" or host.endswith(".github.com") or (github_host and host == github_host.lower()):
        return "github"
    if "gitlab" in host or (gitlab_host and host == gitlab_host.lower()):
        return "gitlab"
    return None


async def task_providers(db: AsyncSession, task_id: str) -> frozenset[str]:
    """The union of the providers of the task's repositories (the hosts of the task's workspace's GitHub and
    GitLab connections count)."""
    workspace = select(Task.workspace_id).where(Task.id == task_id).scalar_subquery()
    gitlab_host = await db.scalar(select(GitlabConnection.host).where(GitlabConnection.workspace_id == workspace))
    github_host = await db.scalar(select(GithubConnection.host).where(GithubConnection.workspace_id == workspace))
    urls = await db.scalars(
        select(Repository.remote_url)
        .join(TaskRepository, TaskRepository.repository_id == Repository.id)
        .where(TaskRepository.task_id == task_id)
    )
    found = (provider_of(url, gitlab_host, github_host) for url in urls)
    return frozenset(p for p in found if p is not None)


async def refresh_profile(uow: UnitOfWork, session: Session, task: Task) -> bool:
    """Recompute the session's profile from durable state (purpose, autopilot, parent, title ownership,
    the task's providers); a change is stored as a new revision and announced once, after commit, to
    the session's MCP connection on whichever replica holds it."""
    providers = await task_providers(uow.db, task.id)
    profile = compute_profile(session, task, title_owner=owns_title(task, session), providers=providers)
    if not store_profile(uow, session, profile):
        return False
    # Cached token checks (which carry the profile) are forgotten before clients are told to re-list.
    announce_access_change(uow, session.id)
    uow.emit(tools_channel(session.id), ToolsChange(revision=session.mcp_profile_revision))
    return True


async def refresh_workspace_profiles(uow: UnitOfWork, workspace_id: str) -> int:
    """Recompute the profiles of the workspace's launched, live sessions (a GitHub or GitLab connection made
    or forgotten changes which hosts count as providers); how many changed, each announced once."""
    rows = await uow.db.execute(
        select(Session, Task)
        .join(Task, Task.id == Session.task_id)
        .where(Task.workspace_id == workspace_id, Task.deleted_at.is_(None))
        .order_by(Session.id)
    )
    changed = 0
    for session, task in list(rows):
        if session.mcp_profile and not is_terminal(session) and await refresh_profile(uow, session, task):
            changed += 1
    return changed


def session_profile(session: Session, task: Task) -> McpProfile:
    """The stored profile, or the computed one for a session that has not launched yet."""
    return McpProfile.from_json(session.mcp_profile or {}) or compute_profile(session, task)


def profile_from_columns(
    stored: dict[str, Any] | None, purpose: str, autopilot: bool, parent_id: str | None, origin: str
) -> McpProfile:
    """session_profile from the few columns a joined lookup reads (the MCP token check)."""
    return session_profile(
        Session(purpose=purpose, mcp_profile=stored or {}),
        Task(autopilot=autopilot, parent_id=parent_id, origin=origin),
    )

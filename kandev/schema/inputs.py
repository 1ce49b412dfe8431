"""Mutation inputs and the filter inputs of list queries."""

from __future__ import annotations

import strawberry
from strawberry.scalars import JSON

from kandev.schema.enums import AgentKind, DeliveryMode, ExecutorKind, PermissionPolicy, TaskState


@strawberry.input(description="A repository for a task to work in.")
class TaskRepositoryInput:
    repository_id: strawberry.ID
    base_branch: str | None = strawberry.field(default=None, description="Default: the repository's default branch.")


@strawberry.input
class CreateRepositoryInput:
    workspace_id: strawberry.ID
    name: str
    path: str = strawberry.field(description="Absolute path of a local git repository on the workers' machine.")
    default_branch: str | None = None


@strawberry.input(description="A new task. Omitted workflow and step mean the workspace default's start step.")
class CreateTaskInput:
    workspace_id: strawberry.ID
    title: str
    prompt: str | None = None
    parent_id: strawberry.ID | None = None
    autopilot: bool | None = strawberry.field(
        default=None, description="Work on its own, asking only its parent; fixed after creation."
    )
    external_id: str | None = strawberry.field(
        default=None, description="Idempotency key, unique per workspace: a repeat returns the same task."
    )
    workflow_id: strawberry.ID | None = None
    workflow_step_id: strawberry.ID | None = None
    agent_profile_id: strawberry.ID | None = None
    executor_profile_id: strawberry.ID | None = None
    repositories: list[TaskRepositoryInput] | None = None
    start_agent: bool | None = strawberry.field(
        default=None, description="Start the agent now. Default: true when a prompt is given."
    )
    blocked_by: list[strawberry.ID] | None = strawberry.field(
        default=None,
        description="Tasks this one waits on. A start requested while any has not completed is recorded and "
        "fires once every one has.",
    )
    start_when_unblocked: bool | None = strawberry.field(
        default=None, description="false: link to blockedBy without recording any start. Default: true."
    )


@strawberry.input(description="Fields to change; state COMPLETED moves the task to its final step.")
class UpdateTaskInput:
    task_id: strawberry.ID
    title: str | None = None
    state: TaskState | None = None
    deferred_launch_prompt: str | None = strawberry.field(
        default=None,
        description="Replace the prompt of the start waiting on dependencies; refused once the task started.",
    )


@strawberry.input
class MoveTaskInput:
    task_id: strawberry.ID
    workflow_step_id: strawberry.ID


@strawberry.input(
    description="Start the task's agent; from the start step the task moves to the first auto-start step."
)
class StartTaskInput:
    task_id: strawberry.ID
    prompt: str | None = strawberry.field(default=None, description="Replaces the step prompt for this start.")
    agent_profile_id: strawberry.ID | None = None


@strawberry.input
class SendMessageInput:
    task_id: strawberry.ID
    prompt: str
    session_id: strawberry.ID | None = strawberry.field(
        default=None, description="Default: the primary session, else the newest one still open."
    )
    delivery_mode: DeliveryMode = DeliveryMode.QUEUED
    reply_to_question_id: strawberry.ID | None = None


@strawberry.input(
    description="Only admins set kind ACP, command or env, or create server-wide profiles (workspaceId null); "
    "anyone may create a Scripted profile in their workspace."
)
class CreateAgentProfileInput:
    workspace_id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET,  # required, but null is a value: a server-wide profile
        description="The workspace; null: a server-wide profile, listed in every workspace (admins only).",
    )
    name: str
    kind: AgentKind = AgentKind.ACP
    command: list[str] | None = None
    env: JSON | None = None
    supports_mcp: bool | None = None
    permission_policy: PermissionPolicy | None = None


@strawberry.input(
    description="Only the fields given change. Changing kind, command or env, or a server-wide profile, is for admins."
)
class UpdateAgentProfileInput:
    agent_profile_id: strawberry.ID
    name: str | None = None
    kind: AgentKind | None = None
    command: list[str] | None = None
    env: JSON | None = None
    supports_mcp: bool | None = None
    permission_policy: PermissionPolicy | None = None


@strawberry.input(description="Admins only.")
class CreateExecutorProfileInput:
    workspace_id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET,  # required, but null is a value: a server-wide profile
        description="The workspace; null: a server-wide profile, listed in every workspace.",
    )
    name: str
    kind: ExecutorKind


@strawberry.input(description="Admins only; only the fields given change.")
class UpdateExecutorProfileInput:
    executor_profile_id: strawberry.ID
    name: str | None = None
    kind: ExecutorKind | None = None


@strawberry.input
class CreateSecretInput:
    workspace_id: strawberry.ID
    name: str
    value: str = strawberry.field(description="Stored encrypted; never returned.")


@strawberry.input
class ResolvePermissionInput:
    request_id: strawberry.ID
    option_id: str
    task_id: strawberry.ID | None = strawberry.field(
        default=None, description="Optional check: the request's task (another task's id answers not found)."
    )
    session_id: strawberry.ID | None = strawberry.field(
        default=None, description="Optional check: the request's session (another session's id answers not found)."
    )
    pending_id: str | None = strawberry.field(
        default=None, description="Optional check: the agent's id for the tool call (PermissionRequest.pendingId)."
    )

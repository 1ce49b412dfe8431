"""Mutation inputs and the filter inputs of list queries."""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from kandev.domain.attachments.content import MAX_PER_MESSAGE
from kandev.domain.shipping.fix_rounds import DEFAULT_ROUNDS as DEFAULT_FIX_ROUNDS
from kandev.domain.shipping.fix_rounds import MAX_ROUNDS as MAX_FIX_ROUNDS
from kandev.domain.tasks.dependencies import MAX_BLOCKERS
from kandev.domain.tasks.service import CreateTask
from kandev.domain.validation import MAX_EXTERNAL_ID_LENGTH, MAX_TITLE_LENGTH
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.graphql.schema.declare import arg, argument
from kandev.graphql.schema.enums import AgentKind, DeliveryMode, ExecutorKind, PermissionPolicy, TaskState
from kandev.graphql.schema.executor_types import ExecutorSettingsInput
from kandev.graphql.schema.usage_types import BudgetInput


def _optional(value: object) -> str | None:
    return str(value) if value is not None else None


TASK_ID_FOR_AGENTS = "The task's id ('self' for the task this session works on)."


ATTACHMENTS_FOR_PEOPLE = (
    f"Files uploaded with POST /api/v1/attachments (at most {MAX_PER_MESSAGE}), or attachments the task already has."
)
ATTACHMENTS_FOR_AGENTS = (
    "Ids of attachments the target task already has (listed on its conversation's messages), to hand its agent "
    "again with this message."
)


TaskIdArgument = Annotated[strawberry.ID, argument("The task's id.", agent=TASK_ID_FOR_AGENTS, min_length=1)]


@strawberry.input(description="A repository for a task to work in: a repository id, or a pull request URL.")
class TaskRepositoryInput:
    repository_id: strawberry.ID | None = arg("Repository id (or repositoryUrl).", default=None, min_length=1)
    base_branch: str | None = arg("Default: the repository's default branch.", default=None, agent="Base branch.")
    repository_url: str | None = arg(
        "Instead of repositoryId: a canonical pull request URL (https://<host>/<owner>/<repo>/pull/<number>) on "
        "the workspace's connected host. The task works on the PR's exact head and pushes to its branch.",
        default=None,
        agent="Instead of repository_id: an open pull request's canonical URL "
        "(https://<host>/<owner>/<repo>/pull/<number>) on the workspace's connected GitHub host. The task works "
        "on the PR's head commit, its pushes go to the PR's branch, and the existing PR is linked (no new one). "
        "The PR's title, body and comments are not copied into the task: give your own title and prompt.",
        min_length=1,
        max_length=1000,
    )


def _repository_choice(choice: TaskRepositoryInput) -> RepositoryChoice:
    """Both or neither locator is refused by the service (as the payload's error)."""
    repository_id = str(choice.repository_id) if choice.repository_id is not None else ""
    return RepositoryChoice(repository_id=repository_id, base_branch=choice.base_branch, url=choice.repository_url)


@strawberry.input
class CreateRepositoryInput:
    workspace_id: strawberry.ID
    name: str
    path: str = strawberry.field(description="Absolute path of a local git repository on the workers' machine.")
    default_branch: str | None = None


@strawberry.input(description="A new task. Omitted workflow and step mean the workspace default's start step.")
class CreateTaskInput:
    workspace_id: strawberry.ID | None = arg(
        "The workspace. Default: the workspace of the calling session's task (required for other callers).",
        default=None,
        agent="Workspace id. Default: the workspace of the task this session works on.",
        min_length=1,
    )
    title: str = arg("Short task title.", agent="Short task title.", min_length=1, max_length=MAX_TITLE_LENGTH)
    prompt: str | None = arg(
        "Instructions delivered to the task's agent when it starts.", default=None, aliases=("description",)
    )
    parent_id: strawberry.ID | None = arg(
        "Parent task id ('self': the calling session's task).",
        default=None,
        agent="Parent task id, or 'self' for the task this session works on.",
    )
    autopilot: bool | None = arg(
        "Work on its own, asking only its parent; fixed after creation.",
        default=None,
        agent="Start this task in autopilot mode. Default: false. The value is fixed at creation and is not "
        "inherited by subtasks. The agent does not ask the user directly; it asks its direct parent only for "
        "critical decisions.",
    )
    external_id: str | None = arg(
        "Idempotency key, unique per workspace: a repeat returns the same task.",
        default=None,
        agent="Your idempotency key for this create, unique per workspace (case-sensitive, trimmed). Retrying "
        "with the same value returns the task it made (deduplicated: true) instead of a second one. "
        "creation_complete: false means that create has not finished: ask again later.",
        max_length=MAX_EXTERNAL_ID_LENGTH,
    )
    workflow_id: strawberry.ID | None = arg(
        "Workflow to enter. Default: the workspace's default workflow.", default=None
    )
    workflow_step_id: strawberry.ID | None = arg("Step to enter. Default: the workflow's start step.", default=None)
    agent_profile_id: strawberry.ID | None = arg("Agent profile. Default: the workspace default.", default=None)
    executor_profile_id: strawberry.ID | None = arg(
        "Executor profile. Default: a subtask's parent's, else the workspace default. A task an agent creates runs "
        "where the agent runs: naming another executor is refused (VALIDATION).",
        default=None,
    )
    repositories: list[TaskRepositoryInput] | None = arg(
        "Repositories to work in, each with an optional base branch.", default=None
    )
    start_agent: bool | None = arg(
        "Start the agent now. Default: true when a prompt is given, else false.", default=None
    )
    blocked_by: list[strawberry.ID] | None = arg(
        "Tasks this one waits on ('self': the calling session's task). A start requested while any has not "
        "completed is recorded and fires once every one has.",
        default=None,
        agent="Tasks this one waits on ('self' for your own task). Use it to order steps: each step blocked_by "
        "the previous one, start_agent left at its default. The start is recorded and fires once every one of "
        "them has COMPLETED; a failed or cancelled one keeps this task blocked.",
        max_items=MAX_BLOCKERS,
    )
    start_when_unblocked: bool | None = arg(
        "false: link to blockedBy without recording any start. Default: true.",
        default=None,
        agent="With blocked_by: false links without recording any start. Default: true.",
    )
    attachment_ids: list[strawberry.ID] | None = arg(
        ATTACHMENTS_FOR_PEOPLE + " They go with the task's first prompt.",
        default=None,
        agent=ATTACHMENTS_FOR_AGENTS,
        max_items=MAX_PER_MESSAGE,
    )

    def to_command(self) -> CreateTask:
        return CreateTask(
            workspace_id=_optional(self.workspace_id),
            title=self.title,
            prompt=self.prompt or "",
            parent_id=_optional(self.parent_id),
            autopilot=bool(self.autopilot),
            external_id=self.external_id,
            workflow_id=_optional(self.workflow_id),
            workflow_step_id=_optional(self.workflow_step_id),
            agent_profile_id=_optional(self.agent_profile_id),
            executor_profile_id=_optional(self.executor_profile_id),
            start_agent=self.start_agent,
            blocked_by=[str(i) for i in self.blocked_by or []],
            start_when_unblocked=self.start_when_unblocked,
            repositories=[_repository_choice(r) for r in self.repositories or []],
            attachment_ids=[str(i) for i in self.attachment_ids or []],
        )


@strawberry.input(description="Fix failing checks of the task's pull requests (off by default).")
class FixFailingChecksInput:
    enabled: bool | None = arg("Turn it on (rounds are counted afresh) or off.", default=None)
    max_rounds: int | None = arg(
        f"At most this many rounds (1 to {MAX_FIX_ROUNDS}; default {DEFAULT_FIX_ROUNDS}).",
        default=None,
        minimum=1,
        maximum=MAX_FIX_ROUNDS,
    )


@strawberry.input(description="Fields to change; state COMPLETED moves the task to its final step.")
class UpdateTaskInput:
    task_id: strawberry.ID = arg("The task's id.", agent=TASK_ID_FOR_AGENTS, min_length=1)
    title: str | None = arg("New title.", default=None, min_length=1, max_length=MAX_TITLE_LENGTH)
    state: TaskState | None = arg("New state.", default=None)
    deferred_launch_prompt: str | None = arg(
        "Replace the prompt of the start waiting on dependencies; refused once the task started.",
        default=None,
        agent="New prompt for the start recorded behind blocked_by (agent and executor are kept). Refused once "
        "the task has started: send new context with message_task_kandev instead.",
        min_length=1,
    )
    fix_failing_checks: FixFailingChecksInput | None = arg(
        "Fix failing checks of the task's pull requests (a person's setting; agents can not change it).", default=None
    )
    auto_merge: bool | None = arg(
        "Merge the task's pull requests once green and approved (a person's setting).", default=None
    )
    budget: BudgetInput | None = arg(
        "Set, raise or remove (both limits null) the task's budget; once spent the task's agent gets nothing "
        "more (pendingAction BUDGET_REACHED) until it is raised. People only: an agent can't change budgets.",
        default=None,
        agent="People only: an agent can't change budgets.",
    )


@strawberry.input
class MoveTaskInput:
    task_id: strawberry.ID = arg("The task's id.", agent=TASK_ID_FOR_AGENTS, min_length=1)
    workflow_step_id: strawberry.ID = arg("The step to move to.", min_length=1)


@strawberry.input(
    description="Start the task's agent; from the start step the task moves to the first auto-start step."
)
class StartTaskInput:
    task_id: strawberry.ID
    prompt: str | None = strawberry.field(default=None, description="Replaces the step prompt for this start.")
    agent_profile_id: strawberry.ID | None = None


@strawberry.input
class SendMessageInput:
    task_id: strawberry.ID = arg("The task's id.", agent=TASK_ID_FOR_AGENTS, min_length=1)
    prompt: str = arg("The message.", min_length=1)
    session_id: strawberry.ID | None = arg(
        "Default: the primary session, else the newest one still open.",
        default=None,
        agent="A specific session of the task.",
    )
    delivery_mode: DeliveryMode = arg(
        "QUEUED waits for the running turn; INTERRUPT cancels it first.",
        default=DeliveryMode.QUEUED,
        agent="Default: queued.",
        lowercase=True,
    )
    reply_to_question_id: strawberry.ID | None = arg(
        "When answering a question, its id.", default=None, agent="When answering a question, its question_id."
    )
    attachment_ids: list[strawberry.ID] | None = arg(
        ATTACHMENTS_FOR_PEOPLE, default=None, agent=ATTACHMENTS_FOR_AGENTS, max_items=MAX_PER_MESSAGE
    )


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


@strawberry.input(description="Admins only. The settings apply to SANDBOX and DOCKER profiles.")
class CreateExecutorProfileInput(ExecutorSettingsInput):
    workspace_id: strawberry.ID | None = strawberry.field(
        default=strawberry.UNSET,  # required, but null is a value: a server-wide profile
        description="The workspace; null: a server-wide profile, listed in every workspace.",
    )
    name: str
    kind: ExecutorKind


@strawberry.input(
    description="Admins only; only the fields given change (a new kind starts from that kind's defaults)."
)
class UpdateExecutorProfileInput(ExecutorSettingsInput):
    executor_profile_id: strawberry.ID
    name: str | None = None
    kind: ExecutorKind | None = None


@strawberry.input
class CreateSecretInput:
    workspace_id: strawberry.ID
    name: str
    value: str = strawberry.field(description="Stored encrypted; never returned.")


@strawberry.input(description="A new value for a secret, under the same name.")
class ReplaceSecretInput:
    secret_id: strawberry.ID = arg("The secret's id.", min_length=1)
    value: str = strawberry.field(description="Stored encrypted; never returned.")


@strawberry.input
class ResolvePermissionInput:
    request_id: strawberry.ID = arg("The request's id.", min_length=1)
    option_id: str = arg("The chosen option.", min_length=1)
    task_id: strawberry.ID | None = arg(
        "Optional check: the request's task (another task's id answers not found).",
        default=None,
        agent="The task whose agent asks (optional check).",
        min_length=1,
    )
    session_id: strawberry.ID | None = arg(
        "Optional check: the request's session (another session's id answers not found).",
        default=None,
        agent="The session whose agent asks (optional check).",
        min_length=1,
    )
    pending_id: str | None = arg(
        "Optional check: the agent's id for the tool call (PermissionRequest.pendingId).",
        default=None,
        agent="The agent's id for the tool call it asks about (optional check).",
        min_length=1,
    )

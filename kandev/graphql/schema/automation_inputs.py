"""Inputs, payloads and result unions of the automation mutations: each command declared once here."""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

import strawberry
from strawberry.scalars import JSON

from kandev.domain.automations import rules
from kandev.domain.automations.records import MISSING, AutomationFields, TriggerFields
from kandev.domain.validation import MAX_TITLE_LENGTH
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.graphql.schema.automation_types import Automation, AutomationAck
from kandev.graphql.schema.declare import arg, argument
from kandev.graphql.schema.enums import (
    AutomationContext,
    AutomationCreatedVia,
    AutomationDestination,
    AutomationTriggerType,
)
from kandev.graphql.schema.errors import ExpectedError
from kandev.graphql.schema.payloads import StartTaskPayload
from kandev.models import enums as stored

_AUTOMATION_ID = "The automation's id."
_NAME = "Name (at most 200 characters)."
_DESCRIPTION = f"What the automation is for (at most {rules.MAX_DESCRIPTION_LENGTH} characters)."
_AGENT = "Agent profile the runs use (the workspace's or a server-wide one); null: none yet (a launch needs one)."
_EXECUTOR = "Executor profile the runs use (the workspace's or a server-wide one); null: none yet."
_DESTINATION = "HIDDEN (default): runs stay in the automation's history; NORMAL: tasks on the board (needs workflowId)."
_WORKFLOW = "The workflow a NORMAL run's task enters (required for NORMAL, optional for HIDDEN)."
_STEP = "The step a NORMAL run's task enters; null: the workflow's start step."
_REPOSITORIES = (
    "Ordered repository and base-branch pairs of the workspace's repositories; empty: each run works in a "
    "scratch directory (no git). Replaces the whole list."
)
_PROMPT = "What every run asks the agent; placeholders such as {{trigger.type}} and {{data.<path>}} are filled in."
_TITLE = f"Each run's title, with the same placeholders (at most {rules.MAX_TITLE_TEMPLATE_LENGTH} characters)."
_CONTEXT = (
    "NEW_TASK_PER_RUN (default): a task per firing; CONTINUE_SESSION: later firings reuse the first run's session."
)
_MAX_RUNS = "Runs that may be active at once, at least 1 (default 1); exactly 1 with CONTINUE_SESSION."
_ENABLED = "Whether the automation fires at all (default true)."
_TRIGGERS = (
    "The whole trigger set, in one of two exclusive layouts: at most one SCHEDULED plus at most one GitHub "
    "condition, or one WEBHOOK alone. Switching layouts deletes the other layout's triggers; a trigger of a "
    "type the automation already has keeps its id (and a webhook its secret)."
)
_FILTERS_SHAPE: dict[str, Any] = {
    "type": "object",
    "description": "GITHUB_PR: repositories, base_branches (globs), authors, labels, events, exclude_drafts. "
    "GITHUB_PR_MERGED: repositories, base_branches. GITHUB_PUSH: repositories, branches. GITHUB_CI: "
    "repositories, conclusions (default [failure]), check_names, head_branches. Lists are lists of text.",
    "properties": {
        "repositories": {"type": "array", "items": {"type": "string"}},
        "base_branches": {"type": "array", "items": {"type": "string"}},
        "authors": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "array", "items": {"type": "string"}},
        "events": {"type": "array", "items": {"type": "string", "enum": list(rules.PR_EVENTS)}},
        "exclude_drafts": {"type": "boolean"},
        "branches": {"type": "array", "items": {"type": "string"}},
        "conclusions": {"type": "array", "items": {"type": "string", "enum": list(rules.CHECK_CONCLUSIONS)}},
        "check_names": {"type": "array", "items": {"type": "string"}},
        "head_branches": {"type": "array", "items": {"type": "string"}},
    },
}


@strawberry.input(description="One repository an automation's runs work in.")
class AutomationRepositoryInput:
    repository_id: strawberry.ID = arg("A repository of the workspace.", min_length=1)
    base_branch: str | None = arg(
        "Base branch; default: the repository's default branch (saved as chosen).",
        default=None,
        max_length=rules.MAX_BRANCH_LENGTH,
    )


@strawberry.input(description="One trigger: SCHEDULED takes expression and timezone; a GitHub condition filters.")
class AutomationTriggerInput:
    type: AutomationTriggerType = arg("What the trigger listens to.", lowercase=True)
    enabled: bool | None = arg("Default true.", default=None)
    expression: str | None = arg(
        "SCHEDULED: five-field cron, @hourly, @daily, @weekly or @every <duration>.",
        default=None,
        max_length=rules.MAX_EXPRESSION_LENGTH,
    )
    timezone: str | None = arg(
        "SCHEDULED: IANA time zone such as Europe/Berlin; empty: UTC.",
        default=None,
        max_length=rules.MAX_TIMEZONE_LENGTH,
    )
    filters: JSON | None = arg("A GitHub condition's filters.", default=None, json_schema=_FILTERS_SHAPE)
    require_signature: bool | None = arg(
        "WEBHOOK: true takes only signed deliveries: X-Kandev-Timestamp (Unix seconds) and X-Kandev-Signature "
        "(sha256=<hex HMAC-SHA256 of '<timestamp>.<raw body>' keyed with the webhook's secret), within 5 minutes "
        "of the server's time, each signature accepted once. Default false (X-Webhook-Secret, or a signature).",
        default=None,
    )

    def to_fields(self) -> TriggerFields:
        kind = stored.TriggerType(self.type.value)
        config: dict[str, Any] = dict(self.filters) if isinstance(self.filters, dict) else {}
        if self.filters is not None and not isinstance(self.filters, dict):
            config = {"filters": self.filters}  # refused by the rules, which name the field
        for name in ("expression", "timezone", "require_signature"):
            value = getattr(self, name)
            if value is not None:
                config[name] = value
        return TriggerFields(type=kind, enabled=True if self.enabled is None else self.enabled, config=config)


def _stored(value: Any, kind: type) -> Any:
    return kind(value.value) if value is not None and value is not strawberry.UNSET else MISSING


def _kept(value: Any) -> Any:
    """UNSET (omitted) is MISSING; anything else, null included, goes through."""
    return MISSING if value is strawberry.UNSET else value


def _id(value: Any) -> Any:
    value = _kept(value)
    return value if value is MISSING or value is None else str(value)


def _not_null(value: Any) -> Any:
    """Omitted or null: MISSING (a field that can't be cleared keeps its value)."""
    return MISSING if value is strawberry.UNSET or value is None else value


@strawberry.input(description="A new automation of a workspace.")
class CreateAutomationInput:
    workspace_id: strawberry.ID = arg("The workspace's id.", min_length=1)
    name: str = arg(_NAME, min_length=1, max_length=MAX_TITLE_LENGTH)
    prompt: str = arg(_PROMPT, min_length=1)
    description: str | None = arg(_DESCRIPTION, default=None, max_length=rules.MAX_DESCRIPTION_LENGTH)
    agent_profile_id: strawberry.ID | None = arg(_AGENT, default=None)
    executor_profile_id: strawberry.ID | None = arg(_EXECUTOR, default=None)
    destination: AutomationDestination | None = arg(_DESTINATION, default=None, lowercase=True)
    workflow_id: strawberry.ID | None = arg(_WORKFLOW, default=None)
    workflow_step_id: strawberry.ID | None = arg(_STEP, default=None)
    repositories: list[AutomationRepositoryInput] | None = arg(
        _REPOSITORIES, default=None, max_items=rules.MAX_REPOSITORIES
    )
    title_template: str | None = arg(_TITLE, default=None, max_length=rules.MAX_TITLE_TEMPLATE_LENGTH)
    context: AutomationContext | None = arg(_CONTEXT, default=None, lowercase=True)
    max_concurrent_runs: int | None = arg(_MAX_RUNS, default=None, minimum=1, maximum=rules.MAX_CONCURRENT_RUNS)
    enabled: bool | None = arg(_ENABLED, default=None)
    triggers: list[AutomationTriggerInput] | None = arg(_TRIGGERS, default=None, max_items=rules.MAX_TRIGGERS)
    created_via: AutomationCreatedVia | None = arg(
        "FORM (default) or CHAT: where the automation was made.", default=None, lowercase=True
    )

    def to_fields(self) -> AutomationFields:
        return _fields(self, created_via=_stored(self.created_via, stored.AutomationCreatedVia))


@strawberry.input(
    description="Only the fields given change; null clears a nullable field. repositories and triggers, when "
    "given, replace the whole set."
)
class UpdateAutomationInput:
    automation_id: strawberry.ID = arg(_AUTOMATION_ID, min_length=1)
    name: str | None = arg(_NAME, default=strawberry.UNSET, min_length=1, max_length=MAX_TITLE_LENGTH)
    prompt: str | None = arg(_PROMPT, default=strawberry.UNSET, min_length=1)
    description: str | None = arg(
        _DESCRIPTION, default=strawberry.UNSET, max_length=rules.MAX_DESCRIPTION_LENGTH, nullable=True
    )
    agent_profile_id: strawberry.ID | None = arg(_AGENT, default=strawberry.UNSET, nullable=True)
    executor_profile_id: strawberry.ID | None = arg(_EXECUTOR, default=strawberry.UNSET, nullable=True)
    destination: AutomationDestination | None = arg(_DESTINATION, default=strawberry.UNSET, lowercase=True)
    workflow_id: strawberry.ID | None = arg(_WORKFLOW, default=strawberry.UNSET, nullable=True)
    workflow_step_id: strawberry.ID | None = arg(_STEP, default=strawberry.UNSET, nullable=True)
    repositories: list[AutomationRepositoryInput] | None = arg(
        _REPOSITORIES, default=strawberry.UNSET, max_items=rules.MAX_REPOSITORIES
    )
    title_template: str | None = arg(
        _TITLE, default=strawberry.UNSET, max_length=rules.MAX_TITLE_TEMPLATE_LENGTH, nullable=True
    )
    context: AutomationContext | None = arg(_CONTEXT, default=strawberry.UNSET, lowercase=True)
    max_concurrent_runs: int | None = arg(
        _MAX_RUNS, default=strawberry.UNSET, minimum=1, maximum=rules.MAX_CONCURRENT_RUNS
    )
    enabled: bool | None = arg(_ENABLED, default=strawberry.UNSET)
    triggers: list[AutomationTriggerInput] | None = arg(
        _TRIGGERS, default=strawberry.UNSET, max_items=rules.MAX_TRIGGERS
    )

    def to_fields(self) -> AutomationFields:
        return _fields(self, created_via=MISSING)


def _fields(value: CreateAutomationInput | UpdateAutomationInput, created_via: Any) -> AutomationFields:
    repositories = _not_null(value.repositories)
    triggers = _not_null(value.triggers)
    return AutomationFields(
        name=_not_null(value.name),
        prompt=_not_null(value.prompt),
        description=_kept(value.description),
        agent_profile_id=_id(value.agent_profile_id),
        executor_profile_id=_id(value.executor_profile_id),
        destination=_stored(value.destination, stored.AutomationDestination),
        workflow_id=_id(value.workflow_id),
        workflow_step_id=_id(value.workflow_step_id),
        repositories=repositories
        if repositories is MISSING
        else [RepositoryChoice(str(r.repository_id), r.base_branch) for r in repositories],
        title_template=_kept(value.title_template),
        context=_stored(value.context, stored.AutomationContext),
        max_concurrent_runs=_not_null(value.max_concurrent_runs),
        enabled=_not_null(value.enabled),
        triggers=triggers if triggers is MISSING else [t.to_fields() for t in triggers],
        created_via=created_via,
    )


@strawberry.input(description="The operator's first message of a 'describe an automation' chat.")
class StartAutomationAuthoringInput:
    workspace_id: strawberry.ID = arg("The workspace the automation will belong to.", min_length=1)
    prompt: str = arg("What the automation should do, in the operator's words.", min_length=1)
    agent_profile_id: strawberry.ID | None = arg(
        "The agent that helps author it (any agent profile); default: the workspace's built-in authoring agent "
        "(kind AUTHOR, added on first use).",
        default=None,
    )


@strawberry.input
class SetAutomationEnabledInput:
    automation_id: strawberry.ID = arg(_AUTOMATION_ID, min_length=1)
    enabled: bool = arg("false: the automation fires nothing until enabled again.")


@strawberry.input
class SetAutomationTriggerEnabledInput:
    trigger_id: strawberry.ID = arg("The trigger's id.", min_length=1)
    enabled: bool = arg("false: this trigger fires nothing; the automation's other triggers are unaffected.")


AutomationIdArgument = Annotated[strawberry.ID, argument(_AUTOMATION_ID, min_length=1)]


@strawberry.type
class AutomationPayload:
    automation: Automation
    webhook_secret: str | None = strawberry.field(
        default=None,
        description="The webhook trigger's secret, only in the answer that created it (copy it now; "
        "revealWebhookSecret shows it again).",
    )


@strawberry.input
class ReackAutomationInput:
    automation_id: strawberry.ID = arg(_AUTOMATION_ID, min_length=1)


@strawberry.type
class DeleteAutomationPayload:
    automation_id: strawberry.ID


@strawberry.type(
    description="A webhook secret: send it as X-Webhook-Secret, or sign deliveries with it (AutomationTrigger."
    "requireSignature). Keep it out of URLs and logs."
)
class WebhookSecretPayload:
    automation_id: strawberry.ID
    secret: str


CreateAutomationResult: TypeAlias = Annotated[
    AutomationPayload | ExpectedError, strawberry.union("CreateAutomationResult")
]
UpdateAutomationResult: TypeAlias = Annotated[
    AutomationPayload | ExpectedError, strawberry.union("UpdateAutomationResult")
]
SetAutomationEnabledResult: TypeAlias = Annotated[
    AutomationPayload | ExpectedError, strawberry.union("SetAutomationEnabledResult")
]
SetAutomationTriggerEnabledResult: TypeAlias = Annotated[
    AutomationPayload | ExpectedError, strawberry.union("SetAutomationTriggerEnabledResult")
]
StartAutomationAuthoringResult: TypeAlias = Annotated[
    StartTaskPayload | ExpectedError, strawberry.union("StartAutomationAuthoringResult")
]
DeleteAutomationResult: TypeAlias = Annotated[
    DeleteAutomationPayload | ExpectedError, strawberry.union("DeleteAutomationResult")
]
RevealWebhookSecretResult: TypeAlias = Annotated[
    WebhookSecretPayload | ExpectedError, strawberry.union("RevealWebhookSecretResult")
]
RotateWebhookSecretResult: TypeAlias = Annotated[
    WebhookSecretPayload | ExpectedError, strawberry.union("RotateWebhookSecretResult")
]
ReackAutomationResult: TypeAlias = Annotated[
    AutomationPayload | ExpectedError, strawberry.union("ReackAutomationResult")
]
DryRunPreflightResult: TypeAlias = Annotated[AutomationAck | ExpectedError, strawberry.union("DryRunPreflightResult")]

"""The rules an automation's own fields and its triggers obey, checked before anything is written. Each
refusal is a ValidationError naming the input at fault by its GraphQL name (never echoing its value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kandev.domain.automations.records import TriggerFields
from kandev.domain.automations.schedule import Schedule
from kandev.domain.errors import ValidationError
from kandev.domain.validation import check_prompt, check_tree, clean_name
from kandev.models.enums import AutomationContext, TriggerType

MAX_DESCRIPTION_LENGTH = 5_000
MAX_TITLE_TEMPLATE_LENGTH = 500
MAX_CONCURRENT_RUNS = 100
MAX_REPOSITORIES = 20
MAX_BRANCH_LENGTH = 200
MAX_TRIGGERS = 2
MAX_EXPRESSION_LENGTH = 200
MAX_TIMEZONE_LENGTH = 64
MAX_FILTER_ITEMS = 100
MAX_FILTER_LENGTH = 200

GITHUB_CONDITIONS = frozenset(
    {TriggerType.GITHUB_PR, TriggerType.GITHUB_PR_MERGED, TriggerType.GITHUB_PUSH, TriggerType.GITHUB_CI}
)
PR_EVENTS = ("opened", "reopened", "synchronize", "ready_for_review", "edited", "labeled")
CHECK_CONCLUSIONS = (
    "success",
    "failure",
    "neutral",
    "cancelled",
    "skipped",
    "timed_out",
    "action_required",
    "stale",
)
# Each GitHub condition's filters: name -> "list" (of strings) or "bool". An empty repository list is not
# evaluated (the spec); `all_repositories` is the explicit choice of every repository of the workspace on the
# connected host, stored as such (never inferred from an empty list).
ALL_REPOSITORIES = "all_repositories"
FILTERS: dict[TriggerType, dict[str, str]] = {
    TriggerType.GITHUB_PR: {
        "repositories": "list",
        ALL_REPOSITORIES: "bool",
        "base_branches": "list",
        "authors": "list",
        "labels": "list",
        "events": "list",
        "exclude_drafts": "bool",
    },
    TriggerType.GITHUB_PR_MERGED: {"repositories": "list", "base_branches": "list"},
    TriggerType.GITHUB_PUSH: {"repositories": "list", ALL_REPOSITORIES: "bool", "branches": "list"},
    TriggerType.GITHUB_CI: {
        "repositories": "list",
        ALL_REPOSITORIES: "bool",
        "conclusions": "list",
        "check_names": "list",
        "head_branches": "list",
    },
}
_CLOSED = {"events": PR_EVENTS, "conclusions": CHECK_CONCLUSIONS}
_DEFAULTS: dict[TriggerType, dict[str, Any]] = {
    TriggerType.GITHUB_PR: {"events": ["opened"], "exclude_drafts": False},
    TriggerType.GITHUB_CI: {"conclusions": ["failure"]},
}


def check_name(value: str) -> str:
    return clean_name(value, "name")


def check_description(value: str | None) -> str:
    text = (value or "").strip()
    check_tree(text, "description")
    if len(text) > MAX_DESCRIPTION_LENGTH:
        raise ValidationError(f"description must be at most {MAX_DESCRIPTION_LENGTH} characters", field="description")
    return text


def check_automation_prompt(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("prompt must not be empty: it is what every run asks the agent", field="prompt")
    check_prompt(value, "prompt")
    return value


def check_title_template(value: str | None) -> str:
    text = (value or "").strip()
    check_tree(text, "titleTemplate")
    if len(text) > MAX_TITLE_TEMPLATE_LENGTH:
        raise ValidationError(
            f"titleTemplate must be at most {MAX_TITLE_TEMPLATE_LENGTH} characters", field="titleTemplate"
        )
    return text


def check_concurrency(context: AutomationContext, max_concurrent_runs: int) -> None:
    if isinstance(max_concurrent_runs, bool) or not isinstance(max_concurrent_runs, int):
        raise ValidationError("maxConcurrentRuns must be a whole number", field="maxConcurrentRuns")
    if not 1 <= max_concurrent_runs <= MAX_CONCURRENT_RUNS:
        raise ValidationError(
            f"maxConcurrentRuns must be between 1 and {MAX_CONCURRENT_RUNS}", field="maxConcurrentRuns"
        )
    if context == AutomationContext.CONTINUE_SESSION and max_concurrent_runs != 1:
        raise ValidationError(
            "maxConcurrentRuns must be 1 when runs continue the previous session (one session, one active run)",
            field="maxConcurrentRuns",
        )


def check_branch(value: str | None, field: str) -> str | None:
    """A base branch as given (trimmed), None when empty (the repository's default branch)."""
    branch = (value or "").strip()
    if not branch:
        return None
    check_tree(branch, field)
    if len(branch) > MAX_BRANCH_LENGTH or branch.startswith("-") or any(c.isspace() for c in branch):
        raise ValidationError(f"{field} is not a branch name (at most {MAX_BRANCH_LENGTH} characters)", field=field)
    return branch


def _check_schedule(expression: str, timezone: str) -> None:
    """The schedule module decides what an expression and a zone may be (imported here only: it is the
    scheduler's, and loading it is deferred to the one check that needs it)."""

    Schedule.parse(expression, timezone)


def check_layout(triggers: Sequence[TriggerFields]) -> None:
    """Two exclusive layouts: a schedule plus at most one GitHub condition, or one webhook trigger alone."""
    if len(triggers) > MAX_TRIGGERS:
        raise ValidationError(
            "an automation has at most a schedule and one GitHub condition, or one webhook trigger",
            field="triggers",
        )
    kinds = [t.type for t in triggers]
    if TriggerType.WEBHOOK in kinds and len(kinds) > 1:
        raise ValidationError(
            "a webhook automation has only its webhook trigger: the webhook and scheduled layouts are exclusive",
            field="triggers",
        )
    if kinds.count(TriggerType.SCHEDULED) > 1:
        raise ValidationError("an automation has at most one schedule", field="triggers")
    if sum(kind in GITHUB_CONDITIONS for kind in kinds) > 1:
        raise ValidationError("an automation has at most one GitHub condition", field="triggers")


def check_trigger(trigger: TriggerFields, index: int) -> dict[str, Any]:
    """The trigger's stored config: {expression, timezone} for a schedule, the filters of a GitHub
    condition (with their defaults), {} for a webhook or {"require_signature": true} for one that takes
    signed deliveries only."""
    path = f"triggers[{index}]"
    config = trigger.config or {}
    if not isinstance(config, dict):
        raise ValidationError(f"{path}.config must be an object", field=f"{path}.config")
    check_tree(config, f"{path}.config")
    if trigger.type == TriggerType.SCHEDULED:
        return _scheduled(config, path)
    if trigger.type == TriggerType.WEBHOOK:
        return _webhook(config, path)
    return _filters(trigger.type, config, path)


def _webhook(config: dict[str, Any], path: str) -> dict[str, Any]:
    unknown = sorted(set(config) - {"require_signature"})
    if unknown:
        raise ValidationError("a webhook trigger's only setting is require_signature", field=f"{path}.config")
    required = config.get("require_signature")
    if required is not None and not isinstance(required, bool):
        raise ValidationError("require_signature must be true or false", field=f"{path}.requireSignature")
    return {"require_signature": True} if required else {}


def _scheduled(config: dict[str, Any], path: str) -> dict[str, Any]:
    unknown = sorted(set(config) - {"expression", "timezone"})
    if unknown:
        raise ValidationError(f"{path} has unknown settings: {', '.join(unknown)}", field=f"{path}.config")
    expression = config.get("expression")
    timezone = config.get("timezone") or ""
    if not isinstance(expression, str) or not expression.strip():
        raise ValidationError("a schedule needs its expression", field=f"{path}.expression")
    if not isinstance(timezone, str):
        raise ValidationError("timezone must be text (empty: UTC)", field=f"{path}.timezone")
    expression, timezone = " ".join(expression.split()), timezone.strip()
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise ValidationError(
            f"expression must be at most {MAX_EXPRESSION_LENGTH} characters", field=f"{path}.expression"
        )
    if len(timezone) > MAX_TIMEZONE_LENGTH:
        raise ValidationError(f"timezone must be at most {MAX_TIMEZONE_LENGTH} characters", field=f"{path}.timezone")
    try:
        _check_schedule(expression, timezone)
    except ValidationError as error:
        inner = error.field if error.field in ("expression", "timezone") else "expression"
        raise ValidationError(error.message, field=f"{path}.{inner}") from None
    except ValueError:  # a parser's own refusal that is not a domain error: still the caller's input at fault
        raise ValidationError("expression is not a schedule Kandev understands", field=f"{path}.expression") from None
    return {"expression": expression, "timezone": timezone}


def _filters(kind: TriggerType, config: dict[str, Any], path: str) -> dict[str, Any]:
    allowed = FILTERS[kind]
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        shown = ", ".join(name if name.isidentifier() else "<key>" for name in unknown)
        raise ValidationError(f"{path} has unknown settings: {shown}", field=f"{path}.config")
    stored: dict[str, Any] = dict(_DEFAULTS.get(kind, {}))
    for name, shape in allowed.items():
        if name not in config or config[name] is None:
            continue
        value, where = config[name], f"{path}.config.{name}"
        if shape == "bool":
            if not isinstance(value, bool):
                raise ValidationError(f"{name} must be true or false", field=where)
            stored[name] = value
            continue
        items = _string_list(name, value, where)
        # An empty list of a filter with a default means the default (CI checks: failure).
        stored[name] = items if items or name not in stored else stored[name]
    if stored.get(ALL_REPOSITORIES) and stored.get("repositories"):
        raise ValidationError(
            "choose all repositories or a list of them, not both", field=f"{path}.config.{ALL_REPOSITORIES}"
        )
    return stored


def evaluated_repositories(config: dict[str, Any], connected: dict[str, str]) -> list[str]:
    """The `owner/name` repositories a GitHub condition evaluates: its list (an item may be a workspace
    repository id), every connected one when it chose all repositories, none for an empty list. Deduplicated
    case-insensitively, in order."""
    chosen = config.get("repositories") or []
    if config.get(ALL_REPOSITORIES):
        items = sorted(connected.values(), key=str.lower)
    else:
        items = [connected.get(item, item) for item in chosen if isinstance(item, str)]
    return list({item.lower(): item for item in items if "/" in item}.values())


def _string_list(name: str, value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(f"{name} must be a list of text", field=where)
    if len(value) > MAX_FILTER_ITEMS:
        raise ValidationError(f"{name} takes at most {MAX_FILTER_ITEMS} items", field=where)
    items = [item.strip() for item in value if item.strip()]
    if any(len(item) > MAX_FILTER_LENGTH for item in items):
        raise ValidationError(f"{name} items must be at most {MAX_FILTER_LENGTH} characters", field=where)
    closed = _CLOSED.get(name)
    if closed is not None:
        items = [item.lower() for item in items]
        if any(item not in closed for item in items):
            raise ValidationError(f"{name} takes only: {', '.join(closed)}", field=where)
    return list(dict.fromkeys(items))

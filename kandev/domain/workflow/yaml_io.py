"""A workflow as YAML: every step field in order, move_to_step naming its target step by name.

Parsing only checks the document's shape; the workflow service applies the same rules as its
mutations. Messages name the place at fault (a step index, a key, a line) and never echo values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

from kandev.domain.errors import ValidationError
from kandev.domain.workflow.rules import MOVE_TO_STEP
from kandev.models import Workflow, WorkflowStep

FORMAT_VERSION = 1
MAX_YAML_LENGTH = 512 * 1024
MAX_STEPS = 100
_TOP_KEYS = ("version", "name", "description", "steps")
# Step keys and the Python types each accepts (None: the key may be null).
_STEP_KEYS: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "prompt": (str, type(None)),
    "is_start_step": (bool,),
    "is_final_step": (bool,),
    "auto_advance_requires_signal": (bool,),
    "allow_manual_move": (bool,),
    "wip_limit": (int, type(None)),
    "events": (dict, type(None)),
}
FIELD = "yaml"


@dataclass
class StepDraft:
    name: str
    prompt: str = ""
    is_start_step: bool = False
    is_final_step: bool = False
    auto_advance_requires_signal: bool = False
    allow_manual_move: bool = True
    wip_limit: int | None = None
    # As written: move_to_step actions carry "step" (a step name) instead of "step_id".
    events: dict[str, Any] = field(default_factory=dict)


@dataclass
class WorkflowDraft:
    name: str
    description: str
    steps: list[StepDraft]


class _Dumper(yaml.SafeDumper):
    """Block style throughout; multi-line text as literal blocks so prompts stay readable and diffable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not value.endswith((" ", "\t")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def to_yaml(workflow: Workflow, steps: Sequence[WorkflowStep]) -> str:
    """The workflow as a YAML document; the same workflow always gives the same text."""
    names = {s.id: s.name for s in steps}
    document = {
        "version": FORMAT_VERSION,
        "name": workflow.name,
        "description": workflow.description or "",
        "steps": [
            {
                "name": s.name,
                "prompt": s.prompt or "",
                "is_start_step": bool(s.is_start_step),
                "is_final_step": bool(s.is_final_step),
                "auto_advance_requires_signal": bool(s.auto_advance_requires_signal),
                "allow_manual_move": bool(s.allow_manual_move),
                "wip_limit": s.wip_limit,
                "events": _export_events(s.events or {}, names),
            }
            for s in steps
        ],
    }
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _export_events(events: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    exported: dict[str, Any] = {}
    for event, actions in events.items():
        items = []
        for action in actions or []:
            item = dict(action)
            if item.get("type") == MOVE_TO_STEP:
                item["step"] = names.get(item.pop("step_id", None) or "")
            items.append(item)
        if items:
            exported[event] = items
    return exported


def parse(text: str) -> WorkflowDraft:
    """The document's workflow, or a ValidationError on field `yaml` saying where it is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("yaml must not be empty", field=FIELD)
    if len(text) > MAX_YAML_LENGTH:
        raise ValidationError(f"yaml must be at most {MAX_YAML_LENGTH} characters", field=FIELD)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise ValidationError(f"yaml could not be parsed{where}", field=FIELD) from None
    if not isinstance(document, dict):
        raise ValidationError("yaml must be a mapping with name and steps", field=FIELD)
    _only_known(document, _TOP_KEYS, "the document")
    version = document.get("version", FORMAT_VERSION)
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise ValidationError(f"version must be {FORMAT_VERSION}", field=FIELD)
    name = document.get("name")
    if not isinstance(name, str):
        raise ValidationError("name must be a string", field=FIELD)
    description = document.get("description")
    if description is not None and not isinstance(description, str):
        raise ValidationError("description must be a string", field=FIELD)
    steps = document.get("steps")
    if steps is None:
        steps = []
    if not isinstance(steps, list):
        raise ValidationError("steps must be a list", field=FIELD)
    if len(steps) > MAX_STEPS:
        raise ValidationError(f"a workflow has at most {MAX_STEPS} steps", field=FIELD)
    return WorkflowDraft(name=name, description=description or "", steps=[_step(i, s) for i, s in enumerate(steps)])


def _only_known(mapping: Mapping[Any, Any], known: Sequence[str], where: str) -> None:
    unknown = [k for k in mapping if k not in known]
    if unknown:
        raise ValidationError(f"{where} has unknown keys; allowed: {', '.join(known)}", field=FIELD)


def _step(index: int, raw: Any) -> StepDraft:
    where = f"steps[{index}]"
    if not isinstance(raw, dict):
        raise ValidationError(f"{where} must be a mapping", field=FIELD)
    _only_known(raw, tuple(_STEP_KEYS), where)
    if "name" not in raw:
        raise ValidationError(f"{where}.name is required", field=FIELD)
    for key, types in _STEP_KEYS.items():
        if key in raw and (not isinstance(raw[key], types) or (int in types and isinstance(raw[key], bool))):
            raise ValidationError(f"{where}.{key} has the wrong type", field=FIELD)
    values = {k: v for k, v in raw.items() if v is not None}
    return StepDraft(**values)


def resolve_step_names(events: Mapping[str, Any], ids_by_name: Mapping[str, str], where: str) -> dict[str, Any]:
    """Events with each move_to_step's `step` (a name) replaced by the `step_id` of that step."""
    if not isinstance(events, Mapping):
        return cast("dict[str, Any]", events)  # the service's event validation names the problem
    resolved: dict[str, Any] = {}
    for event, actions in events.items():
        if not isinstance(actions, list):
            resolved[event] = actions
            continue
        items = []
        for i, action in enumerate(actions):
            if isinstance(action, Mapping) and action.get("type") == MOVE_TO_STEP and "step_id" not in action:
                target = action.get("step")
                if not isinstance(target, str) or target not in ids_by_name:
                    raise ValidationError(
                        f"{where}.events.{event}[{i}].step must name a step of this workflow", field=FIELD
                    )
                action = {k: v for k, v in action.items() if k != "step"} | {"step_id": ids_by_name[target]}
            items.append(action)
        resolved[event] = items
    return resolved

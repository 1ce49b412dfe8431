"""Step events as data: the vocabulary, their validation, and the loop check run when a workflow is saved.

Pure functions over anything shaped like a step (`id`, `name`, `events`), so they run on rows,
on unsaved drafts (YAML import) and in unit tests alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kandev.domain.errors import ValidationError

# Events a step reacts to.
ON_ENTER = "on_enter"
ON_TURN_START = "on_turn_start"
ON_TURN_COMPLETE = "on_turn_complete"
ON_EXIT = "on_exit"
ON_CHILDREN_COMPLETED = "on_children_completed"

# Actions (WorkflowStep.events[event] is a list of {"type": action, ...}).
AUTO_START_AGENT = "auto_start_agent"
ENABLE_PLAN_MODE = "enable_plan_mode"
RESET_AGENT_CONTEXT = "reset_agent_context"
MOVE_TO_NEXT = "move_to_next"
MOVE_TO_PREVIOUS = "move_to_previous"
MOVE_TO_STEP = "move_to_step"
DISABLE_PLAN_MODE = "disable_plan_mode"

MOVES = (MOVE_TO_NEXT, MOVE_TO_PREVIOUS, MOVE_TO_STEP)
# Which actions each event accepts (the spec: entry starts or prepares the agent, turn events and
# children completion move, turn completion and exit leave plan mode).
EVENT_ACTIONS: dict[str, tuple[str, ...]] = {
    ON_ENTER: (AUTO_START_AGENT, ENABLE_PLAN_MODE, RESET_AGENT_CONTEXT),
    ON_TURN_START: MOVES,
    ON_TURN_COMPLETE: (*MOVES, DISABLE_PLAN_MODE),
    ON_EXIT: (DISABLE_PLAN_MODE,),
    ON_CHILDREN_COMPLETED: MOVES,
}
# Keys an action may carry besides "type"; the value says whether the key is required.
ACTION_FIELDS: dict[str, dict[str, bool]] = {
    AUTO_START_AGENT: {"prompt": False},  # a stored prompt override; default: the step prompt
    MOVE_TO_STEP: {"step_id": True},
}
MAX_ACTIONS_PER_EVENT = 20
MAX_ACTION_PROMPT = 100_000


class StepLike(Protocol):
    id: str
    name: str
    events: Any


def clean_events(
    events: Any, workflow_step_ids: Sequence[str], field: str = "events"
) -> dict[str, list[dict[str, Any]]]:
    """Validated and normalized events (empty events dropped); messages name the place, never the value."""
    if events is None:
        return {}
    if not isinstance(events, Mapping):
        raise ValidationError("events must be an object of event name to list of actions", field=field)
    cleaned: dict[str, list[dict[str, Any]]] = {}
    for event, actions in events.items():
        if event not in EVENT_ACTIONS:
            known = ", ".join(EVENT_ACTIONS)
            raise ValidationError(f"events has an unknown event name; known events: {known}", field=field)
        if actions is None:
            continue
        if not isinstance(actions, list):
            raise ValidationError(f"events.{event} must be a list of actions", field=field)
        if len(actions) > MAX_ACTIONS_PER_EVENT:
            raise ValidationError(f"events.{event} has more than {MAX_ACTIONS_PER_EVENT} actions", field=field)
        items = [_clean_action(event, i, a, workflow_step_ids, field) for i, a in enumerate(actions)]
        if items:
            cleaned[event] = items
    return {event: cleaned[event] for event in EVENT_ACTIONS if event in cleaned}


def _clean_action(event: str, index: int, action: Any, step_ids: Sequence[str], field: str) -> dict[str, Any]:
    where = f"events.{event}[{index}]"
    if not isinstance(action, Mapping):
        raise ValidationError(f"{where} must be an object with a type", field=field)
    kind = action.get("type")
    if not isinstance(kind, str) or kind not in EVENT_ACTIONS[event]:
        allowed = ", ".join(EVENT_ACTIONS[event])
        raise ValidationError(f"{where}.type must be one of: {allowed}", field=field)
    allowed_keys = ACTION_FIELDS.get(kind, {})
    for key in action:
        if key != "type" and key not in allowed_keys:
            raise ValidationError(f"{where} has a field that {kind} does not take", field=field)
    cleaned: dict[str, Any] = {"type": kind}
    for key, required in allowed_keys.items():
        value = action.get(key)
        if value is None:
            if required:
                raise ValidationError(f"{where}.{key} is required for {kind}", field=field)
            continue
        if not isinstance(value, str):
            raise ValidationError(f"{where}.{key} must be a string", field=field)
        cleaned[key] = value
    if kind == AUTO_START_AGENT and len(cleaned.get("prompt", "")) > MAX_ACTION_PROMPT:
        raise ValidationError(f"{where}.prompt is too long", field=field)
    if kind == MOVE_TO_STEP and cleaned["step_id"] not in step_ids:
        raise ValidationError(f"{where}.step_id must name a step of the same workflow", field=field)
    return cleaned


def references_to(steps: Sequence[StepLike], step_id: str) -> list[StepLike]:
    """Steps (other than the step itself) with a move_to_step action that leads to `step_id`."""
    return [
        s
        for s in steps
        if s.id != step_id
        and any(
            isinstance(a, Mapping) and a.get("type") == MOVE_TO_STEP and a.get("step_id") == step_id
            for actions in (s.events or {}).values()
            for a in actions or []
        )
    ]


def move_target_index(steps: Sequence[StepLike], index: int, actions: Sequence[Mapping[str, Any]]) -> int | None:
    """Where the first move action among `actions` takes a task standing on steps[index]; None: nowhere.

    The engine runs only the first move of an event; a move to the step itself is no move.
    """
    move = next((a for a in actions if isinstance(a, Mapping) and a.get("type") in MOVES), None)
    if move is None:
        return None
    if move["type"] == MOVE_TO_NEXT:
        target = index + 1 if index + 1 < len(steps) else None
    elif move["type"] == MOVE_TO_PREVIOUS:
        target = index - 1 if index > 0 else None
    else:
        target = next((i for i, s in enumerate(steps) if s.id == move.get("step_id")), None)
    return None if target == index else target


def _actions(step: StepLike, event: str) -> list[Mapping[str, Any]]:
    return list((step.events or {}).get(event) or [])


def _auto_starts(step: StepLike) -> bool:
    return any(a.get("type") == AUTO_START_AGENT for a in _actions(step, ON_ENTER) if isinstance(a, Mapping))


def loop_warnings(steps: Sequence[StepLike]) -> list[str]:
    """Warnings for step cycles a task would follow forever with no human in the loop.

    A task entering step S with no turn running ("fresh") runs a turn only if S auto-starts the
    agent; that turn's on_turn_start move takes the task, turn still running ("in flight"), to T,
    else its on_turn_complete move takes it (fresh) to T. A task arriving in flight finishes that
    turn there: the step's on_turn_complete move fires, else its own auto-start runs the next turn.
    Every state has at most one successor, so each cycle of that graph is a loop; a step without
    auto-start or moves (a human gate) breaks it. Completion signals don't: the agent sends them.
    """

    def successor(state: tuple[bool, int]) -> tuple[bool, int] | None:
        in_flight, index = state
        step = steps[index]
        if in_flight:
            target = move_target_index(steps, index, _actions(step, ON_TURN_COMPLETE))
            if target is not None:
                return False, target
        if not _auto_starts(step):
            return None
        target = move_target_index(steps, index, _actions(step, ON_TURN_START))
        if target is not None:
            return True, target
        target = move_target_index(steps, index, _actions(step, ON_TURN_COMPLETE))
        return (False, target) if target is not None else None

    cycles: list[list[int]] = []
    seen_cycles: set[frozenset[int]] = set()
    done: set[tuple[bool, int]] = set()
    for start in [(flight, i) for i in range(len(steps)) for flight in (False, True)]:
        path: list[tuple[bool, int]] = []
        on_path: dict[tuple[bool, int], int] = {}
        state: tuple[bool, int] | None = start
        while state is not None and state not in done and state not in on_path:
            on_path[state] = len(path)
            path.append(state)
            state = successor(state)
        if state is not None and state in on_path:
            loop = [index for _, index in path[on_path[state] :]]
            key = frozenset(loop)
            if key not in seen_cycles:
                seen_cycles.add(key)
                cycles.append(_rotate(loop))
        done.update(path)
    cycles.sort(key=lambda c: (c[0], len(c)))
    return [_describe(steps, cycle) for cycle in cycles]


def _rotate(loop: list[int]) -> list[int]:
    """Deduplicated steps of a cycle in travel order, starting with the earliest step."""
    order: list[int] = []
    for index in loop:
        if index not in order:
            order.append(index)
    first = order.index(min(order))
    return order[first:] + order[:first]


def _describe(steps: Sequence[StepLike], cycle: list[int]) -> str:
    names = [f"'{steps[i].name}'" for i in cycle]
    route = " → ".join([*names, names[0]])
    return (
        f"Steps {route} would move a task around forever: each starts the agent on entry and moves the "
        "task on without a human. Remove an automatic start or a move on one of them to add a human gate."
    )

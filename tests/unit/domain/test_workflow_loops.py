"""The loop warning and the step-event rules, as pure functions over step-shaped values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kandev.domain.errors import ValidationError
from kandev.domain.workflow.rules import clean_events, loop_warnings
from kandev.domain.workflow.service import DEFAULT_KANBAN_STEPS

START = {"type": "auto_start_agent"}
NEXT = {"type": "move_to_next"}
PREVIOUS = {"type": "move_to_previous"}


def to(step_id: str) -> dict[str, Any]:
    return {"type": "move_to_step", "step_id": step_id}


@dataclass
class Step:
    id: str
    events: dict[str, Any] = field(default_factory=dict)
    auto_advance_requires_signal: bool = False

    @property
    def name(self) -> str:
        return self.id.upper()


def auto(step_id: str, **events: list[dict[str, Any]]) -> Step:
    """A step that starts the agent on entry, plus the given events."""
    return Step(step_id, {"on_enter": [START], **events})


def test_the_default_kanban_workflow_has_no_loop():
    steps = [Step(str(i), spec.get("events", {})) for i, spec in enumerate(DEFAULT_KANBAN_STEPS)]
    assert loop_warnings(steps) == []


def test_two_auto_starting_steps_that_send_the_task_to_each_other_are_a_loop():
    steps = [auto("a", on_turn_complete=[NEXT]), auto("b", on_turn_complete=[PREVIOUS])]
    [warning] = loop_warnings(steps)
    assert "'A' → 'B' → 'A'" in warning and "forever" in warning


def test_a_step_without_auto_start_is_a_human_gate_that_breaks_the_pair():
    steps = [auto("a", on_turn_complete=[NEXT]), Step("b", {"on_turn_complete": [PREVIOUS]})]
    assert loop_warnings(steps) == []


def test_a_step_that_moves_nowhere_ends_the_chain():
    steps = [auto("a", on_turn_complete=[NEXT]), auto("b"), auto("c", on_turn_complete=[to("a")])]
    assert loop_warnings(steps) == []


def test_a_turn_start_move_carries_the_running_turn_whose_completion_moves_back():
    # A starts the agent and moves at turn start; the turn ends on B, whose turn-complete move returns.
    steps = [auto("a", on_turn_start=[to("b")]), Step("b", {"on_turn_complete": [to("a")]})]
    [warning] = loop_warnings(steps)
    assert "'A' → 'B' → 'A'" in warning


def test_a_turn_start_move_into_a_step_that_only_moves_at_turn_start_stops_there():
    # The carried turn ends on B; B's turn-start move needs a new turn, which nobody starts.
    steps = [auto("a", on_turn_start=[to("b")]), Step("b", {"on_turn_start": [to("a")]})]
    assert loop_warnings(steps) == []


def test_a_longer_cycle_is_reported_once_in_travel_order_from_its_first_step():
    steps = [
        auto("a", on_turn_complete=[to("c")]),
        auto("b", on_turn_complete=[to("a")]),
        auto("c", on_turn_complete=[PREVIOUS]),
    ]
    [warning] = loop_warnings(steps)
    assert "'A' → 'C' → 'B' → 'A'" in warning


def test_completion_signals_do_not_count_as_a_human_gate():
    steps = [auto("a", on_turn_complete=[NEXT]), auto("b", on_turn_complete=[PREVIOUS])]
    for step in steps:
        step.auto_advance_requires_signal = True  # the agent, not a person, sends the signal
    assert len(loop_warnings(steps)) == 1


def test_a_move_to_the_step_itself_and_moves_past_the_ends_go_nowhere():
    steps = [
        auto("a", on_turn_complete=[PREVIOUS]),
        auto("b", on_turn_complete=[to("b")]),
        auto("c", on_turn_start=[NEXT]),
    ]
    assert loop_warnings(steps) == []


def test_only_the_first_move_of_an_event_counts():
    steps = [
        auto("a", on_turn_complete=[{"type": "disable_plan_mode"}, NEXT, to("a")]),
        auto("b", on_turn_complete=[PREVIOUS]),
    ]
    assert len(loop_warnings(steps)) == 1
    steps[0].events["on_turn_complete"] = [to("a"), NEXT]
    assert loop_warnings(steps) == []


def test_children_completed_moves_are_driven_by_other_tasks_and_never_loop():
    steps = [auto("a", on_children_completed=[NEXT]), auto("b", on_children_completed=[PREVIOUS])]
    assert loop_warnings(steps) == []


def test_separate_loops_each_get_a_warning_in_step_order():
    steps = [
        auto("a", on_turn_complete=[NEXT]),
        auto("b", on_turn_complete=[PREVIOUS]),
        Step("gate"),
        auto("c", on_turn_complete=[NEXT]),
        auto("d", on_turn_complete=[PREVIOUS]),
    ]
    warnings = loop_warnings(steps)
    assert len(warnings) == 2
    assert "'A' → 'B'" in warnings[0] and "'C' → 'D'" in warnings[1]


# -- event validation ----------------------------------------------------------------------


def test_valid_events_are_kept_in_event_order_and_empty_ones_dropped():
    events = {
        "on_turn_complete": [NEXT, {"type": "disable_plan_mode"}],
        "on_enter": [{"type": "auto_start_agent", "prompt": "Review it"}, {"type": "reset_agent_context"}],
        "on_exit": [],
        "on_turn_start": None,
        "on_children_completed": [to("s1")],
    }
    assert clean_events(events, ["s1"]) == {
        "on_enter": [{"type": "auto_start_agent", "prompt": "Review it"}, {"type": "reset_agent_context"}],
        "on_turn_complete": [NEXT, {"type": "disable_plan_mode"}],
        "on_children_completed": [to("s1")],
    }


SECRET = "sk-live-SECRET-4242"


@pytest.mark.parametrize(
    ("events", "fragment"),
    [
        ([], "must be an object"),
        ({SECRET: []}, "unknown event name"),
        ({"on_enter": {"type": "auto_start_agent"}}, "must be a list"),
        ({"on_enter": [SECRET]}, "must be an object with a type"),
        ({"on_enter": [{"type": SECRET}]}, "on_enter[0].type must be one of"),
        ({"on_enter": [NEXT]}, "on_enter[0].type must be one of"),
        ({"on_exit": [START]}, "on_exit[0].type must be one of"),
        ({"on_turn_complete": [{"type": "move_to_step"}]}, "step_id is required"),
        ({"on_turn_complete": [to(SECRET)]}, "must name a step of the same workflow"),
        (
            {"on_turn_complete": [{"type": "move_to_next", SECRET: 1}]},
            "a field that move_to_next does not take",
        ),
        ({"on_enter": [{"type": "auto_start_agent", "prompt": 7}]}, "prompt must be a string"),
        ({"on_turn_start": [NEXT] * 21}, "more than 20 actions"),
    ],
)
def test_bad_events_are_named_without_echoing_what_was_sent(events, fragment):
    with pytest.raises(ValidationError) as caught:
        clean_events(events, ["s1"])
    assert caught.value.field == "events"
    assert fragment in caught.value.message
    assert SECRET not in caught.value.message

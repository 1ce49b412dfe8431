"""The next-run indicator's rules: running before all else, with the elapsed time in words and the slow flag
from the threshold on; then disabled; the next fire with a relative hint; deleted."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from kandev.domain.automations.indicator import NextRunState, next_run
from kandev.domain.automations.records import TriggerRecord
from tests.unit.domain.automations.test_export import START, automation

HOURLY = TriggerRecord(
    id="t",
    automation_id="a",
    type="scheduled",
    enabled=True,
    config={"expression": "0 * * * *", "timezone": ""},
    next_fire_at=None,
    created_at=START,
    updated_at=START,
)


@pytest.mark.parametrize(
    ("elapsed", "label", "slow"),
    [
        (timedelta(seconds=30), "Running for less than a minute", False),
        (timedelta(minutes=3, seconds=59), "Running for 3 minutes", False),
        (timedelta(minutes=10), "Running for 10 minutes — taking longer than usual", True),
        (timedelta(hours=1, minutes=5), "Running for 1 hour — taking longer than usual", True),
    ],
)
def test_a_running_automation_says_for_how_long_and_flags_it_past_the_threshold(elapsed, label, slow):
    now = START + timedelta(days=1)
    indicator = next_run(replace(automation("a", "A"), enabled=False), now - elapsed, now, slow_after=600)
    assert (indicator.state, indicator.label, indicator.slow) == (NextRunState.RUNNING, label, slow)
    assert indicator.elapsed_seconds == int(elapsed.total_seconds()) and indicator.slow_after_seconds == 600


def test_an_idle_schedule_gives_its_next_fire_with_a_relative_hint_and_disabled_or_deleted_says_so():
    hourly = replace(automation("a", "A"), triggers=(HOURLY,))
    now = START + timedelta(minutes=20)
    indicator = next_run(hourly, None, now, slow_after=600)
    assert (indicator.state, indicator.at, indicator.relative) == (
        NextRunState.SCHEDULED,
        START + timedelta(hours=1),
        "in 40 minutes",
    )
    assert indicator.label == "Next run at 2026-01-01 01:00 UTC (in 40 minutes)"
    assert next_run(replace(hourly, enabled=False), None, now, 600).state == NextRunState.DISABLED
    assert next_run(replace(hourly, deleted_at=now), now, now, 600).state == NextRunState.DELETED
    assert next_run(automation("b", "B"), None, now, 600).state == NextRunState.MANUAL


def test_a_schedule_that_never_fires_says_so_instead_of_waiting_on_github_events():
    never = replace(HOURLY, config={"expression": "0 0 30 2 *", "timezone": ""})  # 30 February
    unreadable = replace(HOURLY, config={"expression": "not a schedule", "timezone": ""})
    push = replace(HOURLY, id="p", type="github_push", config={})
    now = START + timedelta(minutes=20)
    for trigger in (never, unreadable):
        indicator = next_run(replace(automation("a", "A"), triggers=(trigger,)), None, now, 600)
        assert indicator.state == NextRunState.MANUAL and indicator.label.startswith("Its schedule has no next fire")
    with_push = replace(automation("a", "A"), triggers=(unreadable, push))
    assert next_run(with_push, None, now, 600).state == NextRunState.EVENT

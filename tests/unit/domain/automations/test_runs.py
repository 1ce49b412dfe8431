"""The shown status of a run: archived and cancelled derived from the run's stopped_at and its task, one rule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kandev.domain.automations.runs import is_active, shown_status

AT = datetime(2026, 12, 4, tzinfo=UTC)


@pytest.mark.parametrize(
    ("stored", "stopped_at", "task", "shown"),
    [
        ("task_created", None, (None, None, "IN_PROGRESS"), "task_created"),
        ("succeeded", None, (None, AT, "REVIEW"), "archived"),
        ("succeeded", None, (AT, None, "REVIEW"), "cancelled"),
        ("task_created", None, (None, None, "CANCELLED"), "cancelled"),
        ("task_created", AT, (None, None, "WAITING_FOR_INPUT"), "cancelled"),
        ("triggered", AT, None, "cancelled"),
        ("skipped", None, None, "skipped"),
        ("failed", None, (None, None, "WAITING_FOR_INPUT"), "failed"),
    ],
)
def test_a_run_shows_its_derived_status(stored, stopped_at, task, shown):
    deleted_at, archived_at, state = task or (None, None, None)
    task_id = "t" if task else None
    assert shown_status(stored, stopped_at, task_id, deleted_at, archived_at, state) == shown


def test_a_run_parked_after_its_turn_is_not_active_and_a_reply_does_not_change_that():
    # A reply moves the task to IN_PROGRESS again; the run's stored status stays succeeded.
    assert not is_active("succeeded", None, "t", None, None, "IN_PROGRESS")
    assert is_active("task_created", None, "t", None, None, "IN_PROGRESS")
    assert is_active("triggered", None, None, None, None, None)
    assert not is_active("task_created", None, "t", None, AT, "REVIEW")

"""The `profile_tick` scheduler hook: it re-checks agent profiles on its first tick and then once per
KANDEV_PROFILE_RECHECK_SECONDS, however often the scheduler ticks."""

from __future__ import annotations

import math

import pytest

from kandev.jobs import profile_checks, scheduler
from kandev.jobs.profile_checks import profile_tick


def test_the_hook_is_registered_on_the_scheduler():
    assert profile_tick in scheduler.tick_hooks


async def test_the_hook_rechecks_on_its_first_tick_and_then_only_once_the_interval_has_passed(
    settings, services, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(profile_checks, "_last", [-math.inf])
    hourly = settings.model_copy(update={"profile_recheck_seconds": 3600.0})
    assert await profile_tick(hourly) == 0
    assert await profile_tick(hourly) is None

    often = settings.model_copy(update={"profile_recheck_seconds": 1e-9})
    assert await profile_tick(often) == 0

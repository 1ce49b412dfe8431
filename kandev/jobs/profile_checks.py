"""Agent profile re-checks on the scheduler: the `profile_tick` hook runs
kandev.domain.automations.profile_checks.recheck_profiles once every KANDEV_PROFILE_RECHECK_SECONDS (and on
the scheduler's first tick). Several schedulers may each run it: every re-ack is claimed in the database."""

from __future__ import annotations

import math
import time

from kandev.domain.automations.profile_checks import recheck_profiles
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, provide_services

_last = [-math.inf]  # when this process last re-checked (monotonic)


async def profile_tick(settings: Settings) -> int | None:
    """The scheduler hook: how many automations were re-acked, or None when the re-check is not due."""

    if time.monotonic() - _last[0] < settings.profile_recheck_seconds:
        return None
    _last[0] = time.monotonic()
    async with provide_services(settings, SYSTEM) as services:
        return await recheck_profiles(services.ctx)

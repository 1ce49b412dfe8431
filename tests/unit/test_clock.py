"""The test clock: honoured only in test mode, shifted and sped up from a shared start, and invertible."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from kandev.platform.clock import REAL, Clock, clock_of
from kandev.platform.settings import Settings


def test_the_test_clock_is_ignored_outside_test_mode():
    assert clock_of(Settings(test_clock="3600,60")) is REAL
    assert clock_of(Settings(test_mode=True)) is REAL


def test_the_test_clock_counts_offset_plus_sped_up_time_since_its_start():
    start = time.time() - 10
    clock = clock_of(Settings(test_mode=True, test_clock=f"100,6,{start}"))

    expected = start + 100 + (time.time() - start) * 6
    assert abs(clock.now().timestamp() - expected) < 0.5
    assert clock.real_seconds(60) == 10


def test_real_time_is_when_the_clock_reads_an_instant():
    clock = Clock(offset=3600, speed=60, start=1_000_000)
    instant = datetime.fromtimestamp(1_000_000 + 3600 + 600, UTC)

    assert clock.real_time(instant) == 1_000_010


@pytest.mark.parametrize("spec", ["1", "1,0", "a,b", "1,2,3,4"])
def test_a_malformed_test_clock_is_refused(spec):
    with pytest.raises(ValueError):
        clock_of(Settings(test_mode=True, test_clock=spec))

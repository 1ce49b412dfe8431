"""The instant schedules are counted from: real UTC time, or in test mode a shifted and sped-up one.

`KANDEV_TEST_CLOCK=offset,speed[,start]` (honoured only with `KANDEV_TEST_MODE=1`) makes
now = start + offset + (real now - start) * speed, so a test passes many due minutes in seconds. `start` (a
Unix time) lets several processes share one clock; without it each process starts from its first reading.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from kandev.platform.settings import Settings


@dataclass(frozen=True)
class Clock:
    offset: float = 0.0
    speed: float = 1.0
    start: float = 0.0

    def now(self) -> datetime:
        real = time.time()
        return datetime.fromtimestamp(self.start + self.offset + (real - self.start) * self.speed, UTC)

    def real_time(self, instant: datetime) -> float:
        """The Unix time at which this clock reads `instant`."""
        return self.start + (instant.timestamp() - self.start - self.offset) / self.speed

    def real_seconds(self, clock_seconds: float) -> float:
        """How long a wait of `clock_seconds` on this clock lasts in real time."""
        return clock_seconds / self.speed


REAL = Clock()


@lru_cache(maxsize=16)
def _parsed(spec: str) -> Clock:
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) not in (2, 3):
        raise ValueError("KANDEV_TEST_CLOCK is 'offset,speed[,start]'")
    offset, speed = float(parts[0]), float(parts[1])
    if speed <= 0:
        raise ValueError("KANDEV_TEST_CLOCK speed must be positive")
    start = float(parts[2]) if len(parts) == 3 else time.time()
    return Clock(offset, speed, start)


def clock_of(settings: Settings) -> Clock:
    """The settings' clock: the real one unless test mode names a test clock."""
    if settings.test_mode and settings.test_clock:
        return _parsed(settings.test_clock)
    return REAL

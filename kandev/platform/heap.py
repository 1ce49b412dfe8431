"""Garbage collection for long-running processes (`kandev serve`, `kandev worker`).

What a process holds after start-up (modules, the schema, mappers) lives as long as the process: frozen
out of the collector, a full collection no longer walks it (28% of a 500-task page's time was full
collections before). Only the process entry points call this: a test process making many apps must not
freeze each one's garbage for good.
"""

from __future__ import annotations

import gc

# A young-generation collection every 700 allocations (CPython's default) runs dozens of times while
# one large page is built; objects of a request mostly die with it, so collect the young less often.
YOUNG_THRESHOLD = 10_000


def settle_heap() -> None:
    """Collect what start-up left behind, freeze the rest, and collect the young generation less often."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)

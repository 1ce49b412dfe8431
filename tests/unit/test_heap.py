"""A long-running process freezes what start-up left and collects its young generation less often."""

from __future__ import annotations

import json
import subprocess
import sys

from kandev.platform.heap import YOUNG_THRESHOLD

PROBE = """
import gc, json
import kandev.app
from kandev.platform.heap import settle_heap
before = gc.get_freeze_count()
settle_heap()
print(json.dumps({"before": before, "after": gc.get_freeze_count(), "threshold": gc.get_threshold()}))
"""


def test_settling_the_heap_freezes_the_loaded_modules_and_raises_the_young_threshold():
    # In a child process: freezing this test process would keep every later test's garbage for good.
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["before"] == 0
    assert figures["after"] > 100_000, "the schema, the models and the modules are frozen"
    assert figures["threshold"][0] == YOUNG_THRESHOLD

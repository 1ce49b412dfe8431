"""Healing time of `kandev serve` on the embedded default: kill -9 of each child (each worker, the
scheduler, the embedded Redis) until its replacement answers, and until a turn started afterwards ends."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from tests.support.healing import kill_and_heal
from tests.support.serve import serving

ROUNDS = 3
WORKERS = 2


def run() -> dict[str, Any]:
    samples: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as folder, serving(Path(folder), KANDEV_WORKERS=str(WORKERS)) as served:
        served.run_turn("warm up")
        workers = sorted(r for r in served.children() if r not in ("redis", "scheduler"))
        roles = {f"worker{i}": name for i, name in enumerate(workers, 1)}
        roles.update(scheduler="scheduler", redis="redis")
        for _ in range(ROUNDS):
            for label, role in roles.items():
                for figure, seconds in kill_and_heal(served, role).items():
                    samples.setdefault(label, {}).setdefault(figure, []).append(seconds)
    # Seconds from the kill: replacement process started, replacement answering, next turn done.
    healed = {label: {figure: _spread(v) for figure, v in figures.items()} for label, figures in samples.items()}
    return {"workers": WORKERS, "rounds": ROUNDS, **healed}


def _spread(values: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(values), 2), "max_s": round(max(values), 2)}

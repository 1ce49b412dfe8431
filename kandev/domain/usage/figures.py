"""An agent's usage report bounded to believable figures: a wrong or hostile report is clamped with a note that
says what was reported, never trusted as is and never a reason to fail the turn."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Far above any real turn (a million-token context, re-read a few dozen times), far below what breaks a sum.
MAX_TOKENS = 50_000_000
MAX_COST_USD = 10_000.0
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "context_used",
    "context_size",
)


@dataclass(frozen=True)
class Figures:
    """A report's figures, each None when the agent did not tell, with notes on what was clamped."""

    values: dict[str, int | float | None]
    model: str | None
    notes: tuple[str, ...]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if not math.isnan(number) else None


def _bounded(name: str, value: Any, limit: float, notes: list[str]) -> float | None:
    if value is None:
        return None
    number = _number(value)
    if number is None:
        notes.append(f"{name} was not a number")
        return None
    if number < 0 or number > limit:
        clamped = 0.0 if number < 0 else limit
        notes.append(f"{name} {str(value)[:40]} out of range, recorded as {clamped:g}")
        return clamped
    return number


def bound(report: Mapping[str, Any]) -> Figures:
    """The report's figures within bounds (tokens whole and at most MAX_TOKENS, cost at most MAX_COST_USD)."""
    notes: list[str] = []
    values: dict[str, int | float | None] = {}
    for name in TOKEN_FIELDS:
        number = _bounded(name, report.get(name), MAX_TOKENS, notes)
        values[name] = None if number is None else int(number)
    values["cost_usd"] = _bounded("cost_usd", report.get("cost_usd"), MAX_COST_USD, notes)
    model = report.get("model")
    return Figures(values, str(model)[:200] if model else None, tuple(notes))

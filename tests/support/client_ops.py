"""The GraphQL documents the web client sends, read from its sources (frontend/src/api) at test time.

The client builds them as TypeScript string constants and template literals interpolating other
constants (`${TASK_FIELDS}`); this evaluates exactly that much, so a test runs the documents the
client really sends rather than a copy that could drift.
"""

from __future__ import annotations

import re
from pathlib import Path

API = Path(__file__).resolve().parents[2] / "frontend" / "src" / "api"
_CONSTANT = re.compile(r"^(?:export\s+)?const\s+([A-Z_]+)\s*=\s*(`[^`]*`|\"[^\"]*\")\s*;", re.MULTILINE)
_INTERPOLATION = re.compile(r"\$\{([A-Z_]+)\}")


def _constants(*files: str) -> dict[str, str]:
    raw: dict[str, str] = {}
    for name in files:
        for match in _CONSTANT.finditer((API / name).read_text()):
            raw[match.group(1)] = match.group(2)[1:-1]
    resolved: dict[str, str] = {}

    def value(name: str) -> str:
        if name not in resolved:
            resolved[name] = _INTERPOLATION.sub(lambda m: value(m.group(1)), raw[name])
        return resolved[name]

    return {name: value(name) for name in raw}


def client_operations() -> dict[str, str]:
    """Every GraphQL operation constant of frontend/src/api/ops.ts by name, fully interpolated, with the
    session documents' optional fields filled in the way useSession's sessionOp does on this server."""
    constants = _constants("graphql.ts", "ops.ts")
    extra = constants["SESSION_EXTRA"]
    operations = {
        name: text.replace(extra, "completionPending")
        for name, text in constants.items()
        if re.match(r"\s*(query|mutation|subscription)\b", text)
    }
    assert {"TASKS", "SESSION", "WORKSPACE", "BOOT"} <= operations.keys(), sorted(operations)
    return operations

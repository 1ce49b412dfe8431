"""The GraphQL documents the web client sends, read at test time from what it is built with: the documents
graphql-codegen generated from frontend/src/api/ops.ts (fragments included), under the names ops.ts gives
them, so a test runs the documents the client really sends rather than a copy that could drift."""

from __future__ import annotations

import re
from pathlib import Path

FRONTEND = Path(__file__).resolve().parents[2] / "frontend" / "src"
_NAMED = re.compile(r"^export const ([A-Z_]+) = graphql\(`\s*(?:query|mutation|subscription)\s+(\w+)", re.MULTILINE)
_GENERATED = re.compile(r"^export const (\w+)Document = new TypedDocumentString\(`(.*?)`\)", re.MULTILINE | re.DOTALL)


def client_operations() -> dict[str, str]:
    """Every operation of frontend/src/api/ops.ts by its constant's name, as the client sends it."""
    names = {operation: constant for constant, operation in _NAMED.findall((FRONTEND / "api" / "ops.ts").read_text())}
    generated = dict(_GENERATED.findall((FRONTEND / "gql" / "graphql.ts").read_text()))
    operations = {constant: generated[operation].strip() for operation, constant in names.items()}
    assert {"TASKS", "SESSION", "WORKSPACE", "BOOT"} <= operations.keys(), sorted(operations)
    return operations

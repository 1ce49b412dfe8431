"""One authentication door: no module but kandev.edge.authentication checks a bearer credential itself, so every
surface (GraphQL HTTP and WebSocket, REST, /mcp, /mcp/session) answers the same token the same way."""

from __future__ import annotations

import ast
from pathlib import Path

import kandev

SOURCE = Path(kandev.__file__).parent
CHECKS = {"principal_for_token", "session_principal"}
# The rq dashboard is its own WSGI process with HTTP Basic sign-in for admins, outside the served app.
OUTSIDE_THE_APP = {"edge/dashboard.py"}


def callers_of_checks() -> set[str]:
    found = set()
    for path in SOURCE.rglob("*.py"):
        relative = path.relative_to(SOURCE).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in CHECKS:
                    found.add(relative)
    return found


def test_only_the_door_checks_credentials():
    assert callers_of_checks() - OUTSIDE_THE_APP == {"edge/authentication.py"}

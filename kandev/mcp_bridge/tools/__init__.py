"""Every tool of the catalogue, one module per area; importing this package registers them."""

from kandev.mcp_bridge.tools import permissions, sessions, tasks, workspaces  # noqa: F401

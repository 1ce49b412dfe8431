"""Every tool of the catalogue, one module per area; importing this package registers them."""

from kandev.mcp_bridge.tools import permissions, sessions, tasks, workflow_engine, workspaces  # noqa: F401
from kandev.mcp_bridge.tools import workflows  # noqa: F401
from kandev.mcp_bridge.tools import dependencies, rich_output  # noqa: F401


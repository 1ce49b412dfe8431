"""Every tool of the catalogue, one module per area; importing this package registers them."""

from kandev.edge.mcp_bridge.tools import (  # noqa: F401  # noqa: F401
    automation_authoring,
    automations,
    dependencies,
    permissions,
    provider_reviews,
    reviews,
    rich_output,
    sessions,
    ship,
    tasks,
    workflow_engine,
    workflows,  # noqa: F401
    workspace_sources,
    workspaces,
)

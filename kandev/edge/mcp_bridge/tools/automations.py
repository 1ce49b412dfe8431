"""Automation tools: the pre-flight check of a definition before it is saved."""

from __future__ import annotations

from kandev.edge.mcp_bridge.catalogue import command_tool, register, without_typename

_ACK = """... on AutomationAck { status routed_profile: routedProfile { id name } follows_default: followsDefault tools
  credentials { name present outcome } next_run: nextRun summary detail acked_at: ackedAt }"""

register(
    command_tool(
        "dry_run_preflight",
        "dryRunPreflight",
        "Check an automation definition before creating it, with the same arguments as creating one: which agent "
        "profile its runs go to (and whether its command is installed), the MCP tools a run gets, the credentials "
        "it needs (by name, present or not, never their values), when it runs next and a plain-English summary. "
        "Nothing is saved or run. status: OK, WARN (runs, with a concern in detail) or FAILED (a run would fail; "
        "detail says why).",
        _ACK,
        without_typename,
        operation="query",
    ),
)

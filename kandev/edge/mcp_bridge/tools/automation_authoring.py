"""The automation-authoring surface: what a "describe an automation" chat's agent may do. The names carry no
`_kandev` suffix, as the spec names them; each runs the operation the settings form uses. An automation
made here records createdVia CHAT, and a change made here is a re-authoring in its thread. A webhook
secret is never handed to the agent (it would land in the chat's transcript): the operator reveals it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kandev.edge.mcp_bridge.catalogue import ToolSpec, command_tool, obj, register, string
from kandev.edge.mcp_bridge.tools.workspaces import LIST_AGENTS

AUTOMATION = """automation { id name enabled created_via: createdVia agent_profile_id: agentProfileId
  prompt context max_concurrent_runs: maxConcurrentRuns next_fire: nextFire
  has_webhook_secret: hasWebhookSecret
  triggers { id type enabled expression timezone filters } }"""
_SECRET_NOTE = (
    "its webhook secret is not shown here; the operator reveals it in the automation's settings (Reveal webhook secret)"
)


def _saved(payload: dict[str, Any]) -> dict[str, Any]:
    automation = dict(payload["automation"])
    if automation["has_webhook_secret"]:
        automation["webhook_secret"] = _SECRET_NOTE
    return {"automation_id": automation["id"], "automation": automation}


def _cron(data: dict[str, Any]) -> dict[str, Any]:
    check = data["validateCron"]
    return {
        "valid": check["valid"],
        "error": check["error"],
        "description": check["description"],
        "next_fires": check["nextFires"],
    }


register(
    replace(
        LIST_AGENTS,
        name="list_available_agents",
        description=(
            "List the agent profiles an automation can run (the workspace's own and the server-wide ones); "
            "`available` is false while an agent's command is not installed, with `missing_command`."
        ),
    ),
    ToolSpec(
        name="validate_cron",
        description=(
            "Check a schedule without saving it: a five-field cron expression, an @-name (@hourly, @daily, "
            "@weekly) or `@every D`, D a Go duration from 1 minute to 31 days (e.g. 15m, 1.5h, 1h30m, 90000ms), "
            "in an IANA timezone (empty: UTC). Answers valid (or why not), its meaning in words and its next fires."
        ),
        input_schema=obj(
            {
                "expression": string("The schedule expression.", minLength=1, maxLength=1_000),
                "timezone": string("An IANA zone such as Europe/Berlin; empty: UTC.", maxLength=200),
                "count": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Next fires, default 5."},
            },
            required=("expression",),
        ),
        document="""query($e: String!, $tz: String!, $n: Int!) {
          validateCron(expression: $e, timezone: $tz, count: $n) { valid error description nextFires } }""",
        variables=lambda call: {
            "e": call.arguments["expression"],
            "tz": call.arguments.get("timezone", ""),
            "n": call.arguments.get("count", 5),
        },
        result=_cron,
    ),
    command_tool(
        "create_automation",
        "createAutomation",
        "Create the automation the operator confirmed (confirm the full definition first: name, what fires it, "
        "agent, repositories, prompt). Never invent a credential, secret or token: ask the operator, or point "
        "to the settings. It is recorded as made in chat (created_via is CHAT whatever is sent).",
        f"... on AutomationPayload {{ {AUTOMATION} }}",
        _saved,
    ),
    command_tool(
        "update_automation",
        "updateAutomation",
        "Change an automation (only the fields given; triggers or repositories given replace the whole set). "
        "Its thread records the change as re-authored in chat.",
        f"... on AutomationPayload {{ {AUTOMATION} }}",
        _saved,
    ),
    command_tool(
        "delete_automation",
        "deleteAutomation",
        "Delete an automation: it fires no more; its thread stays readable.",
        "... on DeleteAutomationPayload { automation_id: automationId }",
        lambda payload: {"automation_id": payload["automation_id"], "deleted": True},
    ),
    command_tool(
        "trigger_automation_now",
        "runAutomationNow",
        "Run an automation once now (a manual run), as the form's Run now does: FIRED with the run, SKIPPED when "
        "its concurrency cap is reached, REFUSED when it is disabled.",
        "... on RunAutomationNowPayload { admission reason run { id status task_id: taskId } }",
        lambda payload: {
            "run_id": (payload["run"] or {}).get("id"),
            "admission": payload["admission"],
            "reason": payload["reason"],
            "run": payload["run"],
        },
    ),
)

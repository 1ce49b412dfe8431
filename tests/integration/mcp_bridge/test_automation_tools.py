"""dry_run_preflight on the configuration surface: the ack of an unsaved definition, nothing stored."""

from __future__ import annotations

from sqlalchemy import func, select

from kandev.domain.sessions.tool_profiles import McpProfile, Surface
from kandev.models import Automation
from tests.integration.mcp_bridge.conftest import call_tool


def test_the_configuration_surface_offers_dry_run_preflight_and_a_run_session_does_not():
    assert "dry_run_preflight" in McpProfile(Surface.CONFIGURATION).tool_names()
    assert "dry_run_preflight" not in McpProfile(Surface.AUTOMATION_COORDINATOR).tool_names()


async def test_dry_run_preflight_answers_the_ack_of_a_definition_and_saves_nothing(
    surface, external, services, db, workspace_id
):
    profiles = await services.agent_profiles.list(workspace_id)
    ghost = next(p for p in profiles if p.kind == "ACP" and p.command and p.command[0] == "codex-acp")
    error, ack = await call_tool(
        surface,
        external,
        "dry_run_preflight",
        workspace_id=workspace_id,
        name="Nightly",
        prompt="Review open pull requests",
        agent_profile_id=ghost.id,
        triggers=[{"type": "scheduled", "expression": "0 2 * * *"}],
    )
    assert not error, ack
    assert ack["status"] == "FAILED"
    assert ack["detail"] == "agent profile 'Codex' is unavailable: command 'codex-acp' is not on PATH"
    assert ack["summary"].startswith("At 02:00") and ack["routed_profile"]["name"] == "Codex"
    async with db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Automation)) == 0

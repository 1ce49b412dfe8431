"""Re-acks on agent profile changes: a save (or delete) that changes what an ack reads from the profile re-acks
every automation using it with a thread message saying what changed; the scheduler's periodic re-check finds
a command installed or removed outside Kandev; nothing changed means no re-ack and no message. The pre-flight
job is run here by calling its domain function, as a worker would."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from kandev.domain.automations import thread
from kandev.domain.automations.preflight import PENDING, check_and_store
from kandev.domain.automations.profile_checks import recheck_profiles
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models import Automation
from kandev.models.enums import AgentKind, PermissionPolicy, ThreadKind
from kandev.platform.event_bus import automation_channel
from tests.integration.domain.automations.test_preflight import saved, stored

MISSING = "no-such-agent-kandev-reack"


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on PATH, where a test installs or removes an agent command outside Kandev."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder


def install(folder: Path, name: str) -> None:
    command = folder / name
    command.write_text("#!/bin/sh\nexit 0\n")
    command.chmod(0o755)


async def acp_profile(services: Any, workspace_id: str, command: str, name: str = "Agent X") -> str:
    fields = AgentProfileFields(name=name, kind=AgentKind.ACP, command=[command])
    return (await services.agent_profiles.create(workspace_id, fields)).id


async def entries(services: Any, automation_id: str) -> list[thread.ThreadEntry]:
    async with services.ctx.read() as db:
        return (await thread.page(db, automation_id, 200, None)).entries


async def acked(services: Any, automation_id: str) -> tuple[str, list[thread.ThreadEntry]]:
    """The automation checked as its job would; its status and thread afterwards."""
    status = await check_and_store(services.ctx, automation_id)
    return status, await entries(services, automation_id)


async def test_a_profile_saved_with_a_missing_command_re_acks_its_automations_failed_and_fixing_it_acks_ok(
    services, db, workspace_id
):
    profile_id = await acp_profile(services, workspace_id, sys.executable)
    first = await saved(services, workspace_id, agent_profile_id=profile_id)
    second = await saved(services, workspace_id, name="Evening digest", agent_profile_id=profile_id)
    assert (await acked(services, first))[0] == "OK" and (await acked(services, second))[0] == "OK"
    before = len(await entries(services, first))

    async with services.ctx.bus.subscribe(automation_channel(workspace_id)) as events:
        await services.agent_profiles.update(profile_id, AgentProfileFields(command=[MISSING]))
        event = await asyncio.wait_for(anext(events), 10)
    assert event["kind"] == "ACK_CHANGED" and event["ack"] == PENDING.to_json()
    for automation_id in (first, second):
        assert (await stored(db, automation_id)).last_ack == PENDING.to_json()
        status, after = await acked(services, automation_id)
        assert status == "FAILED"
        note = next(e for e in after if e.text.startswith("Agent profile"))
        assert note.kind == ThreadKind.PREFLIGHT_ACK
        assert note.text == (
            f"Agent profile 'Agent X' became unavailable: command '{MISSING}' is not on PATH. "
            "The pre-flight check runs again."
        )
    ack = (await stored(db, first)).last_ack
    assert ack is not None
    assert ack["detail"] == f"agent profile 'Agent X' is unavailable: command '{MISSING}' is not on PATH"
    assert [e.kind for e in (await entries(services, first))[before:]] == [ThreadKind.PREFLIGHT_ACK] * 2

    await services.agent_profiles.update(profile_id, AgentProfileFields(command=[sys.executable]))
    status, after = await acked(services, first)
    assert status == "OK"
    assert after[-2].text == (
        f"Agent profile 'Agent X' became available again: command '{sys.executable}' is on PATH. "
        "The pre-flight check runs again."
    )
    assert after[-1].text.startswith("Pre-flight check: OK.")


async def test_a_profile_save_that_changes_nothing_an_ack_reads_re_acks_nothing(services, db, workspace_id):
    profile_id = await acp_profile(services, workspace_id, sys.executable)
    automation_id = await saved(services, workspace_id, agent_profile_id=profile_id)
    await check_and_store(services.ctx, automation_id)
    row = await stored(db, automation_id)
    thread_before = await entries(services, automation_id)

    await services.agent_profiles.update(profile_id, AgentProfileFields(name="Agent X", command=[sys.executable]))
    await services.agent_profiles.update(profile_id, AgentProfileFields(permission_policy=PermissionPolicy.ALLOW))

    again = await stored(db, automation_id)
    assert (again.last_ack, again.ack_fingerprint, again.updated_at) == (
        row.last_ack,
        row.ack_fingerprint,
        row.updated_at,
    )
    assert await entries(services, automation_id) == thread_before
    assert await check_and_store(services.ctx, automation_id) == "unchanged"


async def test_renaming_or_turning_off_mcp_re_acks_with_what_changed(services, db, workspace_id):
    profile_id = await acp_profile(services, workspace_id, sys.executable)
    automation_id = await saved(services, workspace_id, agent_profile_id=profile_id)
    await check_and_store(services.ctx, automation_id)

    await services.agent_profiles.update(profile_id, AgentProfileFields(name="Agent Y"))
    status, after = await acked(services, automation_id)
    assert status == "OK" and after[-2].text.startswith(
        "Agent profile 'Agent X' was changed and is now named 'Agent Y'."
    )
    assert (await stored(db, automation_id)).last_ack["routed_profile_name"] == "Agent Y"  # type: ignore[index]

    await services.agent_profiles.update(profile_id, AgentProfileFields(supports_mcp=False))
    status, after = await acked(services, automation_id)
    assert status == "WARN" and after[-2].text.startswith("Agent profile 'Agent Y' was changed.")


async def test_deleting_a_profile_re_acks_its_automations_on_the_workspace_default(services, db, workspace_id):
    profile_id = await acp_profile(services, workspace_id, sys.executable)
    automation_id = await saved(services, workspace_id, agent_profile_id=profile_id)
    await check_and_store(services.ctx, automation_id)

    await services.agent_profiles.delete(profile_id)
    assert (await stored(db, automation_id)).last_ack == PENDING.to_json()
    status, after = await acked(services, automation_id)
    assert status == "OK"
    assert after[-2].text == (
        "Agent profile 'Agent X' was deleted: runs use the workspace default until another profile is chosen."
    )
    ack = (await stored(db, automation_id)).last_ack
    assert ack is not None and ack["follows_default"] and ack["routed_profile_name"] == "Scripted"


async def test_the_periodic_recheck_finds_a_command_installed_or_removed_outside_kandev_once(
    services, db, workspace_id, bin_dir
):
    profile_id = await acp_profile(services, workspace_id, "kandev-reack-agent")
    automation_id = await saved(services, workspace_id, agent_profile_id=profile_id)
    assert await check_and_store(services.ctx, automation_id) == "FAILED"
    assert await recheck_profiles(services.ctx) == 0

    install(bin_dir, "kandev-reack-agent")
    assert await recheck_profiles(services.ctx) == 1
    assert (await stored(db, automation_id)).last_ack == PENDING.to_json()
    assert await recheck_profiles(services.ctx) == 0  # its check is pending: nothing more to do
    status, after = await acked(services, automation_id)
    assert status == "OK"
    assert after[-2].text == (
        "Agent profile 'Agent X' became available again: command 'kandev-reack-agent' is on PATH. "
        "The pre-flight check runs again."
    )
    checked = await stored(db, automation_id)
    assert await recheck_profiles(services.ctx) == 0
    unchanged = await stored(db, automation_id)
    assert (unchanged.last_ack, unchanged.updated_at) == (checked.last_ack, checked.updated_at)
    assert len(await entries(services, automation_id)) == len(after)

    (bin_dir / "kandev-reack-agent").unlink()
    assert await recheck_profiles(services.ctx) == 1
    status, after = await acked(services, automation_id)
    assert status == "FAILED"
    assert after[-2].text.startswith("Agent profile 'Agent X' became unavailable: command 'kandev-reack-agent'")
    assert await recheck_profiles(services.ctx) == 0


async def test_concurrent_rechecks_re_ack_a_change_once_with_one_message(services, db, workspace_id, bin_dir):
    profile_id = await acp_profile(services, workspace_id, "kandev-reack-agent")
    automation_id = await saved(services, workspace_id, agent_profile_id=profile_id)
    await check_and_store(services.ctx, automation_id)
    before = len(await entries(services, automation_id))

    install(bin_dir, "kandev-reack-agent")
    counts = await asyncio.gather(*(recheck_profiles(services.ctx) for _ in range(4)))
    assert sum(counts) == 1
    notes = (await entries(services, automation_id))[before:]
    assert [n.text.split(":")[0] for n in notes] == ["Agent profile 'Agent X' became available again"]


async def test_the_periodic_recheck_leaves_disabled_automations_and_acks_that_gave_up_alone(
    services, db, workspace_id, bin_dir
):
    profile_id = await acp_profile(services, workspace_id, "kandev-reack-agent")
    disabled = await saved(services, workspace_id, agent_profile_id=profile_id, enabled=False)
    gave_up = await saved(services, workspace_id, name="Gave up", agent_profile_id=profile_id)
    await check_and_store(services.ctx, disabled)
    await check_and_store(services.ctx, gave_up)
    async with services.ctx.unit_of_work() as uow:
        row = await uow.db.get(Automation, gave_up)
        assert row is not None
        row.ack_fingerprint = None  # as a check stores it once its attempts are spent

    install(bin_dir, "kandev-reack-agent")
    assert await recheck_profiles(services.ctx) == 0

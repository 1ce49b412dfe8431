"""What a turn runs with: worktrees, secrets in the agent's env (redacted from its output), permissions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Message
from kandev.models.enums import PermissionPolicy
from kandev.platform.event_bus import session_channel, task_channel
from kandev.platform.settings import Settings
from tests.support.factories import new_agent_profile, settings_for
from tests.support.git_repos import make_repository
from tests.support.watch import watching
from tests.support.workers import running_worker
from tests.support.workflows import gate_in_progress

pytestmark = pytest.mark.slow


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, turn_lease_seconds=5)


async def wait_turn_end(events: Any, timeout: float = 30) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        async for event in events:
            if event["kind"] == "TURN_ENDED":
                return event
    raise AssertionError("no turn ended")


async def agent_texts(db: Any, session_id: str) -> list[str]:
    async with db.read() as s:
        rows = await s.scalars(
            select(Message.text).where(Message.session_id == session_id, Message.kind == "AGENT").order_by(Message.seq)
        )
        return list(rows)


async def test_the_worktree_executor_gives_a_task_its_own_branch_and_worktree(
    services, settings, bus, db, workspace_id, tmp_path
):
    repo = make_repository(tmp_path / "project")
    repository = await services.repositories.create(workspace_id, "project", str(repo))
    assert repository.default_branch == "main"
    created = await services.tasks.create(
        CreateTask(workspace_id=workspace_id, title="Fix the README", repositories=[RepositoryChoice(repository.id)])
    )
    with running_worker(settings):
        started = await services.sessions.start_task(created.task.id, "/say in the worktree", None)
        async with watching(bus, db, started.session.id) as watch:
            [turn] = await watch.turns_ended(1)
    assert turn.state == "COMPLETED"
    session = await services.sessions.get(started.session.id)
    workdir = Path(session.working_dir)
    assert workdir == settings.work_path / "worktrees" / created.task.id / "project"
    assert (workdir / "README").read_text() == "hello\n"
    branch = subprocess.run(
        ["git", "branch", "--show-current"], cwd=workdir, capture_output=True, text=True
    ).stdout.strip()
    assert branch.startswith(f"kandev/{created.task.id[:8]}-fix-the-readme")
    listed = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    assert str(workdir) in listed


async def test_a_task_without_a_repository_works_in_its_own_scratch_directory(
    services, settings, bus, db, workspace_id
):
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Scratch"))
    with running_worker(settings):
        started = await services.sessions.start_task(created.task.id, "/say scratch", None)
        async with watching(bus, db, started.session.id) as watch:
            await watch.turns_ended(1)
    session = await services.sessions.get(started.session.id)
    assert Path(session.working_dir) == settings.work_path / "scratch" / created.task.id


SECRET = "sk-live-0123456789abcdef"


async def keyed_profile_and_task(services: Any, workspace_id: str, **profile: Any) -> tuple[Any, Any]:
    """A workspace secret, an agent profile whose env references it, and a task to run it on."""
    await services.secrets.create(workspace_id, "API_KEY", SECRET)
    fields = AgentProfileFields(env={"API_KEY": "${secret:API_KEY}"}, **profile)
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Leaky"))
    return await services.agent_profiles.create(workspace_id, fields), created


async def test_a_secret_reaches_the_agent_env_and_is_redacted_from_what_it_says(
    services, settings, bus, db, workspace_id
):
    value = SECRET
    profile, created = await keyed_profile_and_task(services, workspace_id, name="Scripted with key", kind="SCRIPTED")
    with running_worker(settings):
        started = await services.sessions.start_task(created.task.id, f"/say the key is {value}", profile.id)
        async with watching(bus, db, started.session.id) as watch:
            await watch.turns_ended(1)
    texts = await agent_texts(db, started.session.id)
    assert texts == ["the key is [REDACTED]"]


async def test_a_secret_split_across_two_say_lines_of_the_scripted_agent_is_stored_redacted(
    services, settings, bus, db, workspace_id
):
    value = SECRET
    profile, created = await keyed_profile_and_task(services, workspace_id, name="Scripted with key", kind="SCRIPTED")
    prompt = f"/say first half {value[:10]}\n/say {value[10:]} second half"
    with running_worker(settings):
        started = await services.sessions.start_task(created.task.id, prompt, profile.id)
        async with watching(bus, db, started.session.id) as watch:
            await watch.turns_ended(1)
    # One message per line or both lines in one message: either way no part of the secret is stored.
    stored = "|".join(await agent_texts(db, started.session.id))
    assert "first half [REDACTED]" in stored and "[REDACTED] second half" in stored
    assert value[:10] not in stored and value[10:] not in stored


CHUNKED_AGENT = Path(__file__).parents[2] / "agents" / "chunked_say.py"


async def test_a_secret_streamed_in_four_character_chunks_and_split_across_two_messages_is_stored_redacted(
    services, settings, bus, db, workspace_id
):
    value = SECRET
    profile, created = await keyed_profile_and_task(
        services, workspace_id, name="Chunked with key", kind="ACP", command=[sys.executable, str(CHUNKED_AGENT)]
    )
    prompt = f"/say the key is {value} ok\n/say now split {value[:10]}\n/say {value[10:]} there"
    with running_worker(settings):
        started = await services.sessions.start_task(created.task.id, prompt, profile.id)
        async with bus.subscribe(session_channel(started.session.id)) as events:
            async with watching(bus, db, started.session.id) as watch:
                [turn] = await watch.turns_ended(1)
            published = [p async for p in _until_quiet(events)]
    assert turn.state == "COMPLETED", turn.error
    texts = await agent_texts(db, started.session.id)
    assert texts == ["the key is [REDACTED] ok", "now split [REDACTED]", "[REDACTED] there"]
    # The operator's own prompt (a USER message) carries the value; nothing the agent said may.
    wire = json.dumps([p for p in published if p.get("message", {}).get("kind") == "AGENT"])
    assert "MESSAGE_UPDATED" in wire and value[:10] not in wire and value[10:] not in wire


async def _until_quiet(events: Any) -> AsyncIterator[dict[str, Any]]:
    while True:
        try:
            yield await asyncio.wait_for(anext(events), 1.0)
        except TimeoutError:
            return


async def test_an_ask_policy_waits_for_an_operator_and_the_answer_reaches_the_agent(
    services, settings, bus, db, workspace_id
):
    profile = await new_agent_profile(services, workspace_id, "Asking", permission_policy=PermissionPolicy.ASK)
    await gate_in_progress(services, workspace_id)  # opted in: the step then waits for the signal
    created = await services.tasks.create(CreateTask(workspace_id=workspace_id, title="Needs approval"))
    with running_worker(settings):
        async with bus.subscribe(task_channel(workspace_id)) as task_events:
            started = await services.sessions.start_task(
                created.task.id, "/permission Delete the build folder", profile.id
            )
            async with asyncio.timeout(30):
                while not (pending := await services.permissions.pending(workspace_id)):
                    await anext(task_events)
        [request] = pending
        assert request.title == "Delete the build folder"
        actions = await services.lookups.pending_actions([created.task.id])
        assert actions == ["PERMISSION"]
        allow = next(o["option_id"] for o in request.options if o["kind"].startswith("allow"))
        async with watching(bus, db, started.session.id) as watch:
            await services.permissions.resolve(request.id, allow)
            await watch.turns_ended(1)
    # the permission is gone; what remains is the In Progress step waiting for its completion signal
    assert await services.lookups.pending_actions([created.task.id]) == ["COMPLETION_PENDING"]
    texts = " ".join(await agent_texts(db, started.session.id))
    assert allow in texts or "allow" in texts.lower()

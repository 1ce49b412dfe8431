"""A whole system for the executor tests: the app on a real port (its MCP endpoint included) and a real worker
that offers docker, sandbox and a capability of this test's own, whose boxes reach that app only through their
MCP bridge."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.models.enums import AgentKind, ExecutorKind
from kandev.platform.job_queues import live_capabilities
from kandev.platform.settings import Settings
from tests.support.boxes import TEST_IMAGE, own_capability, with_probe
from tests.support.factories import Started, settings_for, started_task
from tests.support.git_repos import git, make_repository
from tests.support.server import running_server
from tests.support.waiting import wait_until
from tests.support.workers import running_worker


@dataclass
class LiveSystem:
    settings: Settings
    address: str
    capability: str
    worker_pid: int


# Agents run as identities of their own (a root deployment's setting): a container's user is the identity.
AGENT_UIDS = "61910-61919"


@pytest.fixture
def identities() -> bool:
    """Whether agents run as their own identities (KANDEV_AGENT_UIDS); a module may say otherwise."""
    return os.geteuid() == 0


@pytest.fixture
def base(tmp_path: Path) -> Iterator[Path]:
    """A world-traversable folder for the data dir, the work dir and the repositories: only kandev's own modes
    (and the boxes) keep an agent identity out of what is not its own."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-boxes-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(database_url: str, redis_url: str, base: Path, identities: bool) -> Settings:
    uids = {"agent_uids": AGENT_UIDS} if identities else {}
    return settings_for(database_url, redis_url, base, turn_lease_seconds=5, **uids)


@pytest.fixture
def capability() -> str:
    return own_capability()


@pytest.fixture
async def live(settings: Settings, capability: str) -> AsyncIterator[LiveSystem]:
    async with running_server(settings) as address:
        wired = settings.model_copy(update={"public_url": f"http://{address}"})
        env = {"KANDEV_WORKER_CAPABILITIES": f"docker,sandbox,{capability}"}
        if settings.agent_uids:
            env["KANDEV_AGENT_UIDS"] = settings.agent_uids
        with running_worker(wired, **env) as worker:
            await advertised(settings, capability)
            yield LiveSystem(wired, address, capability, worker.pid)


async def advertised(settings: Settings, capability: str, timeout: float = 30) -> None:
    """Until a live worker offers `capability` (a worker advertises once it has started)."""
    redis = Redis.from_url(settings.redis_url or "")
    try:

        async def offered() -> bool:
            return any(capability in offers for offers in live_capabilities(redis).values())

        await wait_until(offered, timeout=timeout, interval=0.1)
    finally:
        redis.close()


@pytest.fixture
def box_profile(services: Any, workspace_id: str, capability: str) -> Callable[..., Any]:
    """Makes an executor profile of a box kind that only this test's worker can run."""

    async def make(kind: ExecutorKind, **config: Any) -> str:
        if kind == ExecutorKind.DOCKER:
            config = {"image": TEST_IMAGE, **config}
        config["capabilities"] = [capability, *config.get("capabilities", [])]
        name = f"{kind.value} box {secrets.token_hex(3)}"
        profile = await services.executor_profiles.create(workspace_id, name, kind, config)
        return str(profile.id)

    return make


@pytest.fixture
async def probe_repository(services: Any, workspace_id: str, base: Path) -> str:
    """A repository whose worktrees hold the probe agent (tests/agents/box_probe.py)."""
    folder = make_repository(base / "project")
    with_probe(folder)
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "probe")
    return str((await services.repositories.create(workspace_id, "project", str(folder))).id)


@pytest.fixture
async def probe_profile(services: Any) -> str:
    """The probe agent, run by the box's Python from the task's worktree."""
    fields = AgentProfileFields(name="Box probe", kind=AgentKind.ACP, command=["/usr/bin/python3", "box_probe.py"])
    return str((await services.agent_profiles.create(None, fields)).id)


@pytest.fixture
def start_probe(services: Any, workspace_id: str, probe_profile: str, probe_repository: str) -> Callable[..., Any]:
    """Starts a task of the probe repository whose probe agent runs in the executor and first tries `wanted`."""

    async def start(executor: str, wanted: dict[str, Any]) -> Started:
        prompt = f"PROBE {json.dumps(wanted)}"
        return await started_task(
            services,
            workspace_id,
            prompt,
            agent_profile_id=probe_profile,
            executor_profile_id=executor,
            repositories=[probe_repository],
        )

    return start

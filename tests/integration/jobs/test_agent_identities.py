"""Two users' agents alive at once on one worker (KANDEV_AGENT_UIDS, as root, auth on): each is a hostile probe
(tests/agents/probe_agent.py) that tries to read the other's environment and memory, list and write the other's
directories, find the other's session token, and change a cached MCP package. All of it is refused, its own work
succeeds, and nothing outside the agents' own trees changes owner or mode."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kandev.domain.access.agent_identities import SHARED_AGENT_USER, agent_identity
from kandev.domain.errors import ConflictError
from kandev.domain.tasks.service import CreateTask
from kandev.domain.workspace.agent_profiles import AgentProfileFields
from kandev.domain.workspace.repositories import RepositoryChoice
from kandev.models import Message
from kandev.models.enums import AgentKind
from kandev.platform.settings import Settings
from kandev.runtime.mcp_delivery import deliverable
from tests.support.factories import settings_for
from tests.support.fake_mcp import FIXTURE_NAME, FIXTURE_VERSION, pack_fixture
from tests.support.git_repos import make_repository
from tests.support.users import services_as
from tests.support.watch import watching
from tests.support.workers import running_worker

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="agents as other identities need root (CI runs the suite as root)"),
]

PROBE = Path(__file__).parents[2] / "agents" / "probe_agent.py"
UIDS = "61900-61909"


@pytest.fixture
def base() -> Iterator[Path]:
    """A world-traversable folder for the data dir, the work dir beside it and the probe: only kandev's own
    modes keep one agent out of the other's things."""
    folder = Path(tempfile.mkdtemp(prefix="kandev-identities-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(database_url: str, redis_url: str, base: Path) -> Settings:
    return settings_for(database_url, redis_url, base, turn_lease_seconds=5, agent_uids=UIDS)


def snapshot(roots: list[Path], skip: list[Path]) -> dict[str, tuple[int, int, int]]:
    """Owner, group and mode of everything under `roots` (links not followed), except `skip` and below."""
    seen = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if Path(folder, d) not in skip]
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                info = os.lstat(name)
                seen[name] = (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
    return seen


class Agent:
    """One user's probe: its services, task, session and what it reported."""

    def __init__(self, services: Any, workspace_id: str, secret: str) -> None:
        self.services, self.workspace_id, self.secret = services, workspace_id, secret
        self.task_id = self.session_id = ""
        self.report: dict[str, Any] = {}

    async def start(self, profile_id: str, prompt: str, repository_id: str | None = None) -> None:
        await self.services.secrets.create(self.workspace_id, "PROBE_SECRET", self.secret)
        repositories = [RepositoryChoice(repository_id)] if repository_id else []
        created = await self.services.tasks.create(
            CreateTask(workspace_id=self.workspace_id, title="Probe", repositories=repositories)
        )
        self.task_id = created.task.id
        self.session_id = (await self.services.sessions.start_task(self.task_id, prompt, profile_id)).session.id

    async def turn(self, bus: Any, db: Any, number: int, prompt: str | None = None) -> dict[str, Any]:
        if prompt is not None:
            await self.services.sessions.send_message(self.task_id, prompt)
        async with watching(bus, db, self.session_id) as watch:
            turns = await watch.turns_ended(number, timeout=90)
        assert turns[-1].state == "COMPLETED", turns[-1].error
        async with db.read() as s:
            texts = list(
                await s.scalars(
                    select(Message.text)
                    .where(Message.session_id == self.session_id, Message.kind == "AGENT")
                    .order_by(Message.created_at)
                )
            )
        return json.loads(texts[-1])

    def targets(self) -> dict[str, Any]:
        """What the other agent is pointed at: this one's process, folders and files."""
        home = self.report["env"]["HOME"]
        return {
            "pids": [self.report["pid"]],
            # Its working directory, the task directory around it (a worktree's), its HOME and TMPDIR.
            "dirs": [self.report["cwd"], str(Path(self.report["cwd"]).parent), home, str(Path(home) / ".tmp")],
            "files": [
                str(Path(home) / ".probe-token"),
                str(Path(self.report["cwd"]) / f"probe-{self.report['uid']}"),
                self.report["written"]["shared"]["value"],  # left in a shared /tmp
            ],
        }

    def token(self) -> str:
        return (Path(self.report["env"]["HOME"]) / ".probe-token").read_text()


def probe_copy(base: Path) -> Path:
    folder = base / "agents"
    folder.mkdir(mode=0o755)
    target = folder / PROBE.name
    shutil.copyfile(PROBE, target)
    target.chmod(0o644)
    return target


def refused(outcome: dict[str, Any]) -> bool:
    return outcome["ok"] is False and outcome["error"].startswith("PermissionError")


async def test_two_users_agents_cannot_reach_each_others_process_files_token_or_the_package_cache(
    services, settings, bus, db, workspace_id, base
):
    bob = await services_as(services, "bob")
    bob_workspace = (await bob.workspaces.create("Bob's")).id
    probe = probe_copy(base)
    profile = await services.agent_profiles.create(
        None,
        AgentProfileFields(
            name="Probe",
            kind=AgentKind.ACP,
            command=["/usr/bin/python3", str(probe)],
            env={"PROBE_SECRET": "${secret:PROBE_SECRET}"},
        ),
    )
    repository = await services.repositories.create(workspace_id, "project", str(make_repository(base / "project")))
    cache = settings.work_path / "mcp-packages"
    [package] = deliverable(
        [{"id": "d", "name": "fixture", "kind": "NPM", "package": FIXTURE_NAME, "version": FIXTURE_VERSION}],
        {},
        cache,
        str(pack_fixture(base / "packages")),
    )
    cached_file = str(Path(package.command).resolve())
    alice = Agent(services, workspace_id, "alice-secret-4f1e9b")
    robert = Agent(bob, bob_workspace, "bob-secret-8c2d7a")
    report = 'PROBE {"report": true}'
    env = {"KANDEV_AGENT_UIDS": UIDS, "KANDEV_AUTH": "on"}
    with running_worker(settings, **env):
        await alice.start(profile.id, report, repository.id)
        alice.report = await alice.turn(bus, db, 1)
        await robert.start(profile.id, report)
        robert.report = await robert.turn(bus, db, 1)
        own = [Path(a.report["cwd"]) for a in (alice, robert)] + [
            Path(a.report["env"]["HOME"]) for a in (alice, robert)
        ]
        before = snapshot([settings.data_path, settings.work_path], skip=own)
        roots = [str(settings.work_path / name) for name in ("worktrees", "scratch", "homes")]
        attacks = {}
        for attacker, victim, number in ((alice, robert, 2), (robert, alice, 2)):
            wanted = {**victim.targets(), "cached_file": cached_file}
            wanted["dirs"] = [*wanted["dirs"], *roots]  # listing the work dir's roots finds no one's tasks
            attacks[attacker.secret] = await attacker.turn(bus, db, number, f"PROBE {json.dumps({'attack': wanted})}")
        after = snapshot([settings.data_path, settings.work_path], skip=own)

    # Each user's agents are an identity of their own, from the range, with no other groups.
    ids = {(a.report["uid"], a.report["gid"]) for a in (alice, robert)}
    assert len(ids) == 2 and all(61900 <= uid <= 61909 and gid == uid for uid, gid in ids)
    assert all(a.report["groups"] in ([], [a.report["gid"]]) for a in (alice, robert))
    for agent in (alice, robert):
        # Its own work succeeds: it writes into its working directory and its own HOME.
        assert all(outcome["ok"] for outcome in agent.report["written"].values()), agent.report["written"]
        assert agent.report["env"]["HOME"] == str(settings.work_path / "homes" / str(agent.report["uid"]))
        assert agent.report["env"]["TMPDIR"] == agent.report["env"]["HOME"] + "/.tmp"
        assert agent.token().startswith("kst_")
    for attacker, victim in ((alice, robert), (robert, alice)):
        outcome = attacks[attacker.secret]
        pid = victim.report["pid"]
        for key in (
            f"environ {pid}",
            f"mem {pid}",
            *(f"{verb} {d}" for d in victim.targets()["dirs"] + roots for verb in ("list", "write")),
            *(f"read {f}" for f in victim.targets()["files"]),
        ):
            assert refused(outcome[key]), (key, outcome[key])
        assert refused(outcome["rewrite cached"]) and refused(outcome["replace cached"])
        assert refused(outcome["add to cache"])
        # Nothing it could read anywhere holds the other's token.
        assert victim.token() not in outcome["harvest"]
        assert not [token for token in outcome["harvest"] if victim.session_id in token]
        assert victim.secret not in json.dumps(outcome)
    assert after == before
    for agent in (alice, robert):
        shutil.rmtree(Path(agent.report["written"]["shared"]["value"]).parent, ignore_errors=True)


async def test_a_shared_agent_user_is_refused_once_a_second_user_exists_with_auth_on(services, settings):
    shared = settings.model_copy(update={"agent_uids": None, "agent_user": "nobody", "auth": "on"})
    async with services.ctx.db.transaction() as db:
        assert await agent_identity(db, shared, services.ctx.principal.user_id) is not None
    await services_as(services, "carol")
    async with services.ctx.db.transaction() as db:
        with pytest.raises(ConflictError) as refused_error:
            await agent_identity(db, shared, services.ctx.principal.user_id)
    assert refused_error.value.message == SHARED_AGENT_USER and "KANDEV_AGENT_UIDS" in SHARED_AGENT_USER

"""From a failing check event to the agent's prompt: a signed `check_run` delivery (conclusion failure) POSTed to
`kandev serve` (its own process's app, in this one) for a task's open pull request on the fake GitHub, until the fix
round's prompt is queued, and until a worker's turn has handed it to the scripted agent. One real `kandev worker`
runs the refreshes, rounds and turns; the events are sent one at a time, ROUNDS of them.

The path: the delivery is verified and recorded and asks a refresh (a job), the worker asks the fake GitHub about
the pull request (status, checks, reviews), records the round and asks for it (a job), reads the check's log
(through GitHub's redirect to its storage), queues the prompt and asks for the turn (a job), which launches the
agent and sends the prompt."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import httpx
import redis.asyncio as aioredis
from sqlalchemy import select

from bench.backends import backends
from bench.foundation import summary
from kandev.adapters.github.deliveries import signature_of
from kandev.adapters.rq_dispatch import RqDispatcher
from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.github.connections import GithubService
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.models import CheckFixRound, Message, QueuedPrompt, Repository, Session, Task, TaskShipRequest
from kandev.models.base import new_id, utcnow
from kandev.platform.database import Database
from kandev.platform.event_bus import EventBus
from kandev.platform.settings import Settings
from kandev.wiring import service_context
from tests.support.fake_github import fake_github
from tests.support.server import running_server
from tests.support.workers import running_worker

ROUNDS = 20
TOKEN = "tok-bench-fix-rounds"
SECRET = "bench-fix-rounds-webhook"
INSTALLATION = 777
REPO = "acme/bench"


async def measure(settings: Settings) -> dict[str, Any]:
    async with fake_github() as github:
        github.tokens[TOKEN] = "bench"
        settings = settings.model_copy(update={"github_api_url": github.url})
        db = Database(settings.resolved_database_url())
        bus = EventBus(aioredis.from_url(settings.redis_url))
        jobs = RqDispatcher(settings.redis_url or "", bus, turn_timeout=600)
        services = Services(service_context(db, bus, jobs, settings, await bootstrap(db, settings)))
        queued, delivered, decided = [], [], []
        try:
            workspace = (await services.workspaces.list())[0]
            await GithubService(services.ctx).connect(workspace.id, TOKEN)
            await services.github.set_app(
                "1", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", SECRET
            )
            await services.github.route_installation(workspace.id, INSTALLATION)
            repository_id = await _repository(services, workspace.id)
            async with running_server(settings) as address:
                wired = settings.model_copy(update={"public_url": f"http://{address}"})
                with running_worker(wired, KANDEV_GITHUB_API_URL=github.url):
                    async with httpx.AsyncClient(base_url=f"http://{address}", timeout=30) as http:
                        for n in range(ROUNDS + 1):
                            task_id, sha = await _shipped_task(services, github, workspace.id, repository_id, n)
                            sent = time.time()
                            await _deliver(http, sha, n)
                            prompt = await _until(lambda task_id=task_id: _prompt(db, task_id))
                            message_at = await _until(lambda session_id=prompt.session_id: _delivered(db, session_id))
                            if n == 0:
                                continue  # the worker's first jobs also pay their imports
                            queued.append(prompt.created_at.timestamp() - sent)
                            delivered.append(message_at - sent)
                            decided.append((await _round_seen(db, task_id)) - sent)
        finally:
            jobs.close()
            await bus.close()
            await db.dispose()
    return {
        "rounds": ROUNDS,
        # The round recorded: the delivery verified, its refresh job run (three GitHub calls).
        "failing_check_event_to_round_decided": summary(decided),
        "failing_check_event_to_prompt_queued": summary(queued),
        "failing_check_event_to_agent_prompt": summary(delivered),
    }


async def _repository(services: Services, workspace_id: str) -> str:
    async with services.ctx.unit_of_work() as uow:
        repository = Repository(
            id=new_id(),
            workspace_id=workspace_id,
            name="bench",
            path="/nonexistent",
            remote_url=f"https://127.0.0.1/{REPO}.git",
        )
        uow.db.add(repository)
        return repository.id


async def _shipped_task(
    services: Services, github: Any, workspace_id: str, repository_id: str, n: int
) -> tuple[str, str]:
    """A task with fixing failing checks on and an open pull request whose head's check failed."""
    task = (await services.tasks.create(CreateTask(workspace_id=workspace_id, title=f"bench {n}"))).task
    sha = uuid.uuid4().hex + "0" * 8
    pr = github.add_pr(REPO, head=f"kandev/bench-{n}", head_sha=sha)
    github.add_check(REPO, sha, "tests", "failure", log="E   assert 1 == 2\nFAILED test_bench\n")
    async with services.ctx.unit_of_work() as uow:
        row = await uow.db.get(Task, task.id)
        assert row is not None
        row.fix_checks_enabled, row.fix_checks_since = True, utcnow()
        uow.db.add(
            TaskShipRequest(
                task_id=task.id,
                repository_id=repository_id,
                provider="github",
                host="127.0.0.1",
                target=REPO,
                number=pr.number,
                url="",
                state="OPEN",
                head_branch=pr.head,
                head_sha=sha,
                base_branch="main",
                checks=[],
                created_at=utcnow(),
            )
        )
    return task.id, sha


async def _deliver(http: httpx.AsyncClient, sha: str, n: int) -> None:
    body = json.dumps(
        {
            "action": "completed",
            "check_run": {"id": 90_000 + n, "name": "tests", "conclusion": "failure", "head_sha": sha},
            "repository": {"full_name": REPO},
            "installation": {"id": INSTALLATION},
        }
    ).encode()
    headers = {
        "X-GitHub-Event": "check_run",
        "X-GitHub-Delivery": new_id(),
        "X-Hub-Signature-256": signature_of(SECRET, body),
        "Content-Type": "application/json",
    }
    answer = await http.post("/api/v1/github/webhook", content=body, headers=headers)
    assert answer.status_code == 202, answer.text


async def _until(check: Any, seconds: float = 60.0) -> Any:
    async with asyncio.timeout(seconds):
        while not (found := await check()):
            await asyncio.sleep(0.005)
    return found


async def _prompt(db: Database, task_id: str) -> QueuedPrompt | None:
    async with db.read() as session:
        found: QueuedPrompt | None = await session.scalar(
            select(QueuedPrompt).join(Session).where(Session.task_id == task_id, QueuedPrompt.source == "check_fix")
        )
    return found


async def _round_seen(db: Database, task_id: str) -> float:
    async with db.read() as session:
        at = await session.scalar(select(CheckFixRound.seen_at).where(CheckFixRound.task_id == task_id))
    assert at is not None
    return float(at.timestamp())


async def _delivered(db: Database, session_id: str) -> float | None:
    """When the prompt reached the agent: its transcript message, written as the turn sends it."""
    async with db.read() as session:
        at = await session.scalar(
            select(Message.created_at).where(Message.session_id == session_id, Message.kind == "USER")
        )
    return at.timestamp() if at is not None else None


async def run() -> dict[str, Any]:
    with backends() as where:
        settings = Settings(database_url=where.database_url, redis_url=where.redis_url, data_dir=where.folder / "data")
        return {"database": where.database, **await measure(settings)}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run()), indent=2))

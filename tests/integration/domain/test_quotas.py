"""Per-user quotas, tried the way a user (or their agent) past them would: workspaces owned, automations across
all their workspaces, tasks created per hour on every surface (GraphQL, REST, external MCP, an agent's
subtask, an automation's run), how often a schedule may fire, an admin in person exempt and their agents not,
and concurrent creations at a limit on two database pools (SQLite, and PostgreSQL with
KANDEV_TEST_POSTGRES_URL) never both passing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from sqlalchemy import func, select, update

from kandev.domain.access.bootstrap import bootstrap
from kandev.domain.access.tokens import create_token
from kandev.domain.automations.firing import fire
from kandev.domain.automations.launch import launch_run
from kandev.domain.automations.records import AutomationFields, TriggerFields
from kandev.domain.errors import QuotaExceededError, ScheduleTooFrequentError
from kandev.domain.services import Services
from kandev.domain.tasks.service import CreateTask
from kandev.edge.mcp_bridge.surface import McpCaller
from kandev.edge.mcp_bridge.tool_surface import KandevToolSurface
from kandev.models import Automation, AutomationRun, Task, Workspace
from kandev.models.base import utcnow
from kandev.models.enums import RunStatus, TriggerType
from kandev.platform.database import Database
from kandev.platform.settings import Settings
from kandev.wiring import SYSTEM, AppState, service_context
from tests.conftest import GraphQLCaller
from tests.integration.mcp_bridge.conftest import call_tool, token_caller
from tests.integration.rest.conftest import rest_client
from tests.support.databases import BACKENDS, database_on
from tests.support.factories import new_task, settings_for
from tests.support.users import services_as

LIMITS = {"quota_workspaces": 2, "quota_automations": 2, "quota_tasks_per_hour": 4, "quota_min_schedule_seconds": 300}
CREATE_WORKSPACE = (
    "mutation($name: String!) { createWorkspace(input: {name: $name}) { __typename "
    "... on WorkspacePayload { workspace { id } } ... on Error { code message fields } } }"
)
CREATE_TASK = (
    "mutation($ws: ID!, $title: String!) { createTask(input: {workspaceId: $ws, title: $title}) { __typename "
    "... on CreateTaskPayload { task { id } } ... on Error { code message fields } } }"
)
CREATE_AUTOMATION = (
    'mutation($ws: ID!, $expression: String!) { createAutomation(input: {workspaceId: $ws, name: "Often", '
    'prompt: "/say hi", triggers: [{type: SCHEDULED, expression: $expression}]}) { __typename '
    "... on AutomationPayload { automation { id } } ... on ValidationError { code field fields } } }"
)


@pytest.fixture
def settings(database_url: str, redis_url: str, tmp_path: Path) -> Settings:
    return settings_for(database_url, redis_url, tmp_path, auth="on", **LIMITS)


@pytest.fixture
def tool_surface(settings, db, bus, redis_url, principal, jobs) -> KandevToolSurface:
    state = AppState(
        settings=settings, db=db, bus=bus, redis=aioredis.from_url(redis_url), local_principal=principal, jobs=jobs
    )
    return KandevToolSurface(lambda: state)


@pytest.fixture
async def alice(services: Services) -> Services:
    return await services_as(services, "alice")


async def own_workspace(user: Services, name: str = "Alice's") -> str:
    return (await user.workspaces.create(name)).id


def schedule(expression: str) -> list[TriggerFields]:
    return [TriggerFields(type=TriggerType.SCHEDULED, config={"expression": expression, "timezone": ""})]


async def automation(user: Services, workspace_id: str, expression: str = "0 9 * * *") -> str:
    fields = AutomationFields(name="Nightly", prompt="/say hi", triggers=schedule(expression))
    return (await user.automations.create(workspace_id, fields)).automation.id


async def count(db: Database, model: Any, *where: Any) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


async def test_a_user_past_the_workspace_quota_is_refused_naming_it_and_its_limit_and_nothing_is_written(
    alice: Services, db: Database
):
    gql = GraphQLCaller(alice)
    for name in ("One", "Two"):
        assert (await gql(CREATE_WORKSPACE, name=name))["createWorkspace"]["__typename"] == "WorkspacePayload"

    refused = (await gql(CREATE_WORKSPACE, name="Three"))["createWorkspace"]

    assert refused["__typename"] == "ConflictError" and refused["code"] == "QUOTA_EXCEEDED"
    assert refused["fields"] == {"quota": "workspaces", "limit": 2}
    assert await count(db, Workspace, Workspace.owner_id == alice.principal.user_id) == 2


async def test_automations_are_counted_per_user_across_all_their_workspaces(alice: Services, db: Database):
    first, second = await own_workspace(alice, "First"), await own_workspace(alice, "Second")
    await automation(alice, first)
    kept = await automation(alice, second)

    # A third in either workspace: the quota is the user's, so more workspaces do not mean more automations.
    for workspace_id in (first, second):
        with pytest.raises(QuotaExceededError) as refused:
            await automation(alice, workspace_id)
        assert refused.value.fields == {"quota": "automations", "limit": 2}
    assert await count(db, Automation, Automation.deleted_at.is_(None)) == 2

    await alice.automations.delete(kept)  # a deleted automation frees its place
    await automation(alice, second)


async def test_every_surface_that_creates_a_task_counts_against_the_owner_and_is_refused_past_the_hourly_quota(
    alice: Services, db: Database, settings: Settings, bus, redis_url, principal, jobs, tool_surface
):
    workspace_id = await own_workspace(alice)
    gql = GraphQLCaller(alice)
    token = (await create_token(db, name="ci", login="alice")).token
    external = McpCaller(principal=alice.principal, endpoint="external")
    nightly = await automation(alice, workspace_id)
    async with rest_client(settings, db, bus, redis_url, principal, jobs) as http:

        async def rest(title: str) -> Any:
            return await http.post(
                "/api/v1/tasks",
                json={"workspace_id": workspace_id, "title": title},
                headers={"Authorization": f"Bearer {token}"},
            )

        # One task from each of four surfaces: the fourth, an agent's subtask, fills the hour.
        parent = (await gql(CREATE_TASK, ws=workspace_id, title="From GraphQL"))["createTask"]["task"]["id"]
        assert (await rest("From REST")).status_code == 201
        error, _ = await call_tool(tool_surface, external, "create_task_kandev", workspace_id=workspace_id, title="MCP")
        assert not error
        session_id = (await alice.sessions.start_task(parent, "/say hi", None)).session.id
        agent = await token_caller(alice, db, settings, parent, session_id)
        error, _ = await call_tool(tool_surface, agent, "create_task_kandev", title="Sub", parent_id="self")
        assert not error

        # Past it, each surface is refused with the quota, its limit and when the next one fits.
        refused = (await gql(CREATE_TASK, ws=workspace_id, title="One more"))["createTask"]
        assert refused["__typename"] == "ConflictError" and refused["code"] == "QUOTA_EXCEEDED"
        assert refused["fields"]["quota"] == "tasks_per_hour" and refused["fields"]["limit"] == 4
        assert 3500 < refused["fields"]["retry_after_seconds"] <= 3600
        answer = await rest("One more")
        assert answer.status_code == 429 and answer.json()["code"] == "QUOTA_EXCEEDED"
        assert answer.headers["Retry-After"] == str(answer.json()["fields"]["retry_after_seconds"])
        for caller, arguments in (
            (external, {"workspace_id": workspace_id, "title": "One more"}),
            (agent, {"title": "Another sub", "parent_id": "self"}),
        ):
            error, payload = await call_tool(tool_surface, caller, "create_task_kandev", **arguments)
            assert error and payload["code"] == "QUOTA_EXCEEDED", payload
            assert payload["fields"]["quota"] == "tasks_per_hour"

    # An automation's run is its owner's work too: it fails saying why, and makes no task.
    system = Services(alice.ctx.with_principal(SYSTEM))
    fired = await fire(system.ctx, nightly, trigger_id=None, trigger_type="manual")
    assert fired.run_id is not None
    assert await launch_run(system.ctx, fired.run_id) == "failed"
    async with db.read() as session:
        run = await session.get(AutomationRun, fired.run_id)
    assert run is not None and run.status == RunStatus.FAILED and run.task_id is None
    assert "KANDEV_QUOTA_TASKS_PER_HOUR" in (run.reason or "")
    assert await count(db, Task, Task.workspace_id == workspace_id) == 4


async def test_deleting_tasks_frees_no_room_and_retry_after_is_when_the_oldest_leaves_the_hour(
    alice: Services, db: Database
):
    workspace_id = await own_workspace(alice)
    created = [await new_task(alice, workspace_id, f"T{n}") for n in range(4)]
    for task_id in created:
        await alice.tasks.delete(task_id)
    async with db.transaction() as session:  # the oldest was made 59m30s ago
        await session.execute(
            update(Task).where(Task.id == created[0]).values(created_at=utcnow() - timedelta(minutes=59, seconds=30))
        )

    with pytest.raises(QuotaExceededError) as refused:
        await new_task(alice, workspace_id, "Again")

    assert 1 <= (refused.value.retry_after_seconds or 0) <= 31
    async with db.transaction() as session:  # an hour on, it has left the window: one more fits
        await session.execute(
            update(Task).where(Task.id == created[0]).values(created_at=utcnow() - timedelta(hours=1))
        )
    await new_task(alice, workspace_id, "Again")


async def test_an_admin_in_person_is_exempt_but_not_their_agents_or_automations(
    services: Services, db: Database, settings: Settings, workspace_id: str, tool_surface
):
    assert services.principal.admin
    for n in range(5):  # past every limit, in person
        await new_task(services, workspace_id, f"T{n}")
    for name in ("A", "B"):
        await services.workspaces.create(name)
    for _ in range(3):
        await automation(services, workspace_id, expression="* * * * *")

    parent = await new_task(services, workspace_id, "P")
    session = (await services.sessions.start_task(parent, "hi", None)).session
    agent = await token_caller(services, db, settings, parent, session.id)
    error, payload = await call_tool(tool_surface, agent, "create_task_kandev", title="Sub", parent_id="self")
    assert error and payload["code"] == "QUOTA_EXCEEDED"


async def test_a_schedule_firing_more_often_than_the_quota_is_refused_on_create_update_and_dry_run(
    alice: Services, db: Database
):
    workspace_id = await own_workspace(alice)
    # Every minute; every 4; two fires a day 2 minutes apart; 299 s; 3 minutes across each hour's turn.
    for expression in ("* * * * *", "*/4 * * * *", "0,2 9 * * *", "@every 4m59s", "1,58 * * * *"):
        with pytest.raises(ScheduleTooFrequentError) as refused:
            await automation(alice, workspace_id, expression)
        assert refused.value.field == "triggers[0].expression", expression
        assert refused.value.fields == {
            "field": "triggers[0].expression",
            "quota": "min_schedule_interval",
            "limit": 300,
        }
    kept = await automation(alice, workspace_id, "*/5 * * * *")
    await automation(alice, workspace_id, "@every 5m")

    with pytest.raises(ScheduleTooFrequentError):
        await alice.automations.update(kept, AutomationFields(triggers=schedule("*/2 * * * *")))
    with pytest.raises(ScheduleTooFrequentError):
        await alice.automations.dry_run(
            workspace_id, AutomationFields(name="D", prompt="p", triggers=schedule("@every 1m"))
        )
    assert [t.config["expression"] for t in (await alice.automations.get(kept)).triggers] == ["*/5 * * * *"]

    # Over GraphQL: a ValidationError whose code and fields say which quota and its limit.
    answer = (await GraphQLCaller(alice)(CREATE_AUTOMATION, ws=workspace_id, expression="*/2 * * * *"))[
        "createAutomation"
    ]
    assert answer == {
        "__typename": "ValidationError",
        "code": "SCHEDULE_TOO_FREQUENT",
        "field": "triggers[0].expression",
        "fields": {"field": "triggers[0].expression", "quota": "min_schedule_interval", "limit": 300},
    }


# -- concurrent creations at a limit, on two pools (two replicas) -----------------------------------------------


@asynccontextmanager
async def two_replicas(backend: str, database_url: str, redis_url: str, tmp_path: Path) -> AsyncIterator[Any]:
    """(settings, [two Database pools on one database], the local principal)."""
    async with database_on(backend, database_url, tmp_path) as url:
        settings = settings_for(url, redis_url, tmp_path, auth="on", **LIMITS)
        pools = [Database(url), Database(url)]
        try:
            yield settings, pools, await bootstrap(pools[0], settings)
        finally:
            for pool in pools:
                await pool.dispose()


async def outcomes(attempts: list[Any]) -> list[str]:
    results = await asyncio.gather(*attempts, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, QuotaExceededError):
            raise result
    return ["refused" if isinstance(r, QuotaExceededError) else "created" for r in results]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_concurrent_creations_at_a_quota_never_both_pass(
    backend: str, database_url: str, redis_url: str, tmp_path: Path, bus, jobs
):
    async with two_replicas(backend, database_url, redis_url, tmp_path) as (settings, pools, local):
        first = Services(service_context(pools[0], bus, jobs, settings, local))
        users = [await services_as(first, "alice")]
        users.append(Services(service_context(pools[1], bus, jobs, settings, users[0].principal)))
        workspace_id = await own_workspace(users[0])

        # One workspace left, eight asking for it at once from two replicas.
        made = await outcomes([users[n % 2].workspaces.create(f"W{n}") for n in range(8)])
        assert made.count("created") == 1
        assert await count(pools[0], Workspace, Workspace.owner_id == users[0].principal.user_id) == 2

        made = await outcomes([automation(users[n % 2], workspace_id) for n in range(8)])
        assert made.count("created") == 2
        assert await count(pools[0], Automation) == 2

        await new_task(users[0], workspace_id, "Existing")
        tasks = [users[n % 2].tasks.create(CreateTask(workspace_id=workspace_id, title=f"T{n}")) for n in range(10)]
        made = await outcomes(tasks)
        assert made.count("created") == 3
        assert await count(pools[0], Task, Task.workspace_id == workspace_id) == 4
